/**
 * What the server says about its runs, and how one is started: the shapes ServerRun
 * (runs.ts) fills and the routes, the run list and the inspector read.
 */
import type { Agent } from '../agent.js';
import type { InspectionFeed } from '../inspect/feed.js';
import type { WireError, WireRunEvent } from '../inspect/wire.js';
import type { RunOptions } from '../runtime/run-options.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { RunStatus } from '../run-status.js';
import type { Budget, ContentPart, Message, Usage } from '../types.js';

/** Receives one run's serialised events (the kept ones replayed first, see `ServerRun.subscribe`), then its end. */
export interface RunSubscriber {
  event(event: WireRunEvent, index: number): void;
  end(): void;
}

/** A call waiting for a decision through the API (`GET /api/runs/:id` → `pendingApprovals`). */
export interface PendingApprovalView {
  /** Unique in the run tree: decide by this (`POST /api/chat/approve {approvalId}`). */
  readonly approvalId: string;
  /** The run that waits: the server run itself or one of its sub-runs. */
  readonly runId: string;
  /** The model's call id; not unique across sub-runs. */
  readonly callId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly path: readonly string[];
  readonly agent: string;
  /** When the runtime opened the request (epoch ms). */
  readonly since: number;
  /** When the server denies it undecided (epoch ms); undefined with `approvalTimeoutMs: Infinity`. */
  readonly deadline: number | undefined;
}

export interface RunSummary {
  readonly runId: string;
  readonly agent: string;
  readonly input: string;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly output: string | undefined;
  readonly error: WireError | undefined;
  readonly usage: Usage | undefined;
  readonly turns: number | undefined;
  readonly events: number;
  readonly pendingApprovals: readonly PendingApprovalView[];
  /** The run's budget (server `runOptions.budget`), for "budget left". */
  readonly budget: Budget | undefined;
}

export interface RunStartParams {
  readonly agentName: string;
  readonly agent: Agent;
  /** The input text (shown in run lists); the run's input unless `parts` are given. */
  readonly input: string;
  /** A user message with content parts (images, files): the run's input instead of `input`. */
  readonly parts?: readonly ContentPart[];
  /** The run's whole input as messages (e.g. an enqueued job's), instead of `input` and `parts`. */
  readonly messages?: readonly Message[];
  readonly runOptions: RunOptions;
  /** Undecided approvals are denied after this long; Infinity never. */
  readonly approvalTimeoutMs: number;
  readonly feed: InspectionFeed;
  /** Events kept per run for GET /api/runs/:id and late chat subscribers. */
  readonly maxEvents: number;
  /** Bytes of event JSON kept per run (see `EventLog` for what is dropped first). */
  readonly maxEventBytes: number;
  /** When set, the run's log is checkpointed here under its run id. */
  readonly checkpointStore?: CheckpointStore;
  /** Continue this stored run (by id) instead of starting a new one; needs `checkpointStore`. */
  readonly resumeId?: string;
  /** A resumed run's first start (its log's first append) and its stored usage, shown until the run reports its own. */
  readonly stored?: { readonly startedAt?: number; readonly usage: Usage };
  /** The id of a new run (default `run_<random>`), e.g. the id a job was enqueued under. */
  readonly runId?: string;
  /** With `checkpointStore`: park the run when it waits only on approvals (`checkpoint.suspendOnWait`). */
  readonly suspendOnWait?: boolean;
  /** Lease time of the run's log (a resumed run waits this long for a dead process's lease to run out). */
  readonly leaseMs?: number;
}
