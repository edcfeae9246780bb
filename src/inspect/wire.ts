/**
 * The inspector wire format: plain JSON records, one per line of the `/api/inspect` SSE
 * feed. Dependency-free on purpose: the inspector page imports these types too.
 *
 * Every record has `kind`, `seq` (global, strictly increasing per feed) and `ts` (epoch
 * milliseconds, fractional). Records of one run tree carry `run` = the root run id; actor
 * records are keyed by XState `sessionId` (unique per process) and carry the actor `id`
 * (not unique: every run has an executor called `tools`).
 */
import type { RunStatus } from '../run-status.js';

export const WIRE_VERSION = 1;

/** An error as it crosses the wire. */
export interface WireError {
  readonly name: string;
  readonly code: string | undefined;
  readonly message: string;
}

/** What kind of logic an actor runs. */
/** `wait`: a wait machine (an approval, a question, an external event, a timer: src/waits). */
export type WireLogic = 'run' | 'machine' | 'wait' | 'executor' | 'toolCall' | 'promise' | 'other';

export type WireStatus = 'active' | 'done' | 'error' | 'stopped';

interface RecordBase {
  readonly seq: number;
  readonly ts: number;
}

/** An actor came into existence (or was found when an inspector attached late). */
export interface ActorRecord extends RecordBase {
  readonly kind: 'actor';
  readonly run: string;
  readonly sessionId: string;
  readonly actorId: string;
  readonly parentSessionId: string | null;
  readonly logic: WireLogic;
  /** For `run` and `machine` actors: the `definition` record to draw. */
  readonly definitionId?: string;
  /** For `run` actors: the run id (root or sub-run, e.g. `run_x/1.0` for the sub-run of call 0 in turn 1). */
  readonly runId?: string;
  /** For invoked actors: the `src` name (`approval`, `checkpoint`, `runEnd`…). */
  readonly src?: string;
  /** True when the actor already existed when the observer attached (bootstrap). */
  readonly bootstrap?: boolean;
}

/** A state node of a machine definition, walked from `machine.root`. */
export interface WireStateNode {
  readonly id: string;
  readonly key: string;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** Target state id of the initial transition (compound states). */
  readonly initial?: string;
  readonly tags: readonly string[];
  readonly entry: readonly string[];
  readonly exit: readonly string[];
  readonly invoke: ReadonlyArray<{ readonly id: string; readonly src: string }>;
  readonly transitions: readonly WireTransition[];
  readonly states: readonly WireStateNode[];
}

export interface WireTransition {
  /** Event type; `""` for eventless (`always`) transitions. */
  readonly event: string;
  readonly kind: 'on' | 'always' | 'done' | 'error' | 'after';
  /** Target state ids; empty for targetless (internal) transitions. */
  readonly targets: readonly string[];
  readonly guard?: string;
  readonly actions: readonly string[];
  readonly reenter: boolean;
}

/** A machine definition; sent once per definition, before any actor that uses it. */
export interface DefinitionRecord extends RecordBase {
  readonly kind: 'definition';
  readonly definitionId: string;
  readonly machineId: string;
  readonly root: WireStateNode;
}

/** An event delivered to an actor. `event` is sanitised (no refs, no functions, truncated). */
export interface EventRecord extends RecordBase {
  readonly kind: 'event';
  readonly run: string;
  readonly sessionId: string;
  readonly sourceSessionId: string | null;
  readonly event: { readonly type: string; readonly [key: string]: unknown };
}

/** An actor's snapshot after a macrostep (or at bootstrap). */
export interface SnapshotRecord extends RecordBase {
  readonly kind: 'snapshot';
  readonly run: string;
  readonly sessionId: string;
  readonly status: WireStatus;
  /** The event that caused it (`xstate.init`, `bootstrap` for a late attach). */
  readonly eventType: string;
  /** Machines: state value and active state node ids (ancestors included). */
  readonly value?: unknown;
  readonly active?: readonly string[];
  readonly context?: unknown;
  readonly output?: unknown;
  readonly error?: WireError;
}

/** One microstep of a machine: the transitions taken and where they led. */
export interface MicrostepRecord extends RecordBase {
  readonly kind: 'microstep';
  readonly run: string;
  readonly sessionId: string;
  readonly eventType: string;
  readonly value: unknown;
  readonly active: readonly string[];
  readonly transitions: ReadonlyArray<{ readonly source: string; readonly targets: readonly string[]; readonly event: string }>;
}


/** A root run started or changed status (published by the server, always, cheap). */
export interface RunRecord extends RecordBase {
  readonly kind: 'run';
  readonly run: string;
  readonly agent: string;
  readonly input: string;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly output?: string;
  readonly error?: WireError;
  /** Whether XState inspection is attached to this run right now. */
  readonly inspected: boolean;
}

/** A run event (any run of the tree), serialised like the chat SSE but truncated. */
export interface RunEventRecord extends RecordBase {
  readonly kind: 'run_event';
  readonly run: string;
  readonly event: WireRunEvent;
}

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'timed_out' | 'cancelled';

/**
 * An approval the server is holding for a decision, and how it ended. One `pending` record
 * per approval, then one with its final state; records of one approval share `approvalId`.
 */
export interface ApprovalRecord extends RecordBase {
  readonly kind: 'approval';
  readonly run: string;
  /** Unique in the run tree; what `POST /api/chat/approve` takes. Call ids are not (two sub-runs may both use `k1`). */
  readonly approvalId: string;
  /** The run that waits: the root run or a sub-run (`<parentRunId>/<turn>.<index>`). */
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly path: readonly string[];
  readonly state: ApprovalState;
  /** When the approval was first asked (epoch ms). */
  readonly since: number;
  /** Auto-deny deadline (epoch ms), if any. */
  readonly deadline?: number;
  /** Who decided (final records only): `api` (POST /api/chat/approve, e.g. the inspector), `timeout` (the server's auto-deny), `run` (the run itself: cancelled, or decided by its handler). */
  readonly decidedBy?: ApprovalDecider;
  /** The denial reason given with the decision, if any. */
  readonly reason?: string;
}

export type ApprovalDecider = 'api' | 'timeout' | 'run';

/** Sent once per connection after the replayed history: everything after it is live. */
export interface SyncRecord extends RecordBase {
  readonly kind: 'sync';
  readonly version: number;
  readonly replayed: number;
}

export type WireRecord =
  | ActorRecord
  | DefinitionRecord
  | EventRecord
  | SnapshotRecord
  | MicrostepRecord
  | RunRecord
  | RunEventRecord
  | ApprovalRecord
  | SyncRecord;

export type WireKind = WireRecord['kind'];

/**
 * A RunEvent as JSON: every field kept except functions (`approve`/`reject`), errors as
 * `{ name, code, message }`, non-JSON values (bigint, cycles, undefined) made safe.
 */
export interface WireRunEvent {
  readonly type: string;
  readonly runId: string;
  readonly path: readonly string[];
  readonly agent: string;
  readonly [key: string]: unknown;
}

/** Record without the fields the feed assigns. */
export type Unstamped<R extends WireRecord> = R extends WireRecord ? Omit<R, 'seq' | 'ts'> : never;

/** One agent of a topology graph. */
export interface AgentNode {
  readonly name: string;
  /** The system prompt when it is a fixed string; `undefined` when built per run by a function. */
  readonly instructions: string | undefined;
  /** Plain tools (not handoffs, not agents as tools). */
  readonly tools: readonly string[];
}

/** `handoff`: a `transfer_to_*` tool; `tool`: the target runs as a sub-run (`agent.asTool()`). */
export interface AgentEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: 'handoff' | 'tool';
  /** The tool name the model calls to take this edge. */
  readonly tool: string;
}

/** The agents a registered agent can reach (`GET /api/agents/:name/graph`). */
export interface AgentGraph {
  readonly root: string;
  readonly agents: readonly AgentNode[];
  readonly edges: readonly AgentEdge[];
}
