/**
 * What a checkpoint store stores and the contract every store keeps (memory, SQLite,
 * PostgreSQL): a run's append-only log of entries, its head, its lease. Types only; the
 * format's rules are in format.ts and record-checks.ts (src/store/format.md).
 */
import type { StoredRunStatus } from '../run-status.js';
import type { CallWaitKind } from '../waits/kinds/records.js';
import type { Message, Usage } from '../types.js';

/** Where a user message in the log came from: the run's input or a message injected later. */
export type InputSource = 'input' | 'mailbox' | 'steer' | 'follow_up' | 'hook' | 'repair';

/** On the first entry of a run made by `forkRun` (troupe/testing; format 5): the run and turn it was forked from. */
export interface ForkOrigin {
  readonly runId: string;
  readonly atTurn: number;
}

/**
 * One appended record of a run's log (format: src/store/format.md). Everything a run needs
 * to continue is logged when it happens, so a resumed run rebuilds its exact position:
 * - `input`: a user message (the run's input, or a mailbox/steer/follow-up message when it
 *   joins the transcript, before the next model request). A fork's first entry says where
 *   it came from (`forkedFrom`).
 * - `reply`: the model's reply of a turn. `result`: one tool result of that turn, in
 *   completion order; `terminate` when the result asked the run to stop.
 * - `handoff`: the active agent switched (logged when the switch happens, not with the new
 *   agent's first reply).
 * - `approval_request` / `approval_decision`: a call waits for a person; its decision (from
 *   this or another process), bound to the call's arguments by `argsHash`.
 * - `subrun_start` / `subrun_end`: an agent used as a tool started / finished its own run
 *   (whose log is stored under `runId`).
 * - `turn_end` closes the turn.
 * - `extra`: the run's `ctx.extra` as it is now (format 5), before the entry it was stored with.
 * - `abort`: the run was aborted (`Runner.abort`, format 5): its last entry; it is never resumed.
 */
export type CheckpointEntry =
  | { readonly kind: 'input'; readonly message: Message; readonly source?: InputSource; readonly id?: string; readonly forkedFrom?: ForkOrigin }
  | { readonly kind: 'reply'; readonly turn: number; readonly message: Message }
  /** `resolved` (format 6): the call that ran, when a resolveToolCall hook resolved the model's call (`message` names the model's tool). */
  | { readonly kind: 'result'; readonly turn: number; readonly message: Message; readonly terminate?: boolean; readonly resolved?: { readonly name: string; readonly arguments: string } }
  | { readonly kind: 'turn_end'; readonly turn: number }
  | { readonly kind: 'handoff'; readonly turn: number; readonly from: string; readonly to: string }
  | ApprovalRequestEntry
  | ApprovalDecisionEntry
  | WaitRequestEntry
  | WaitResolutionEntry
  | AbortEntry
  | ExtraEntry
  | { readonly kind: 'subrun_start'; readonly turn: number; readonly index: number; readonly callId: string; readonly runId: string }
  | { readonly kind: 'subrun_end'; readonly turn: number; readonly index: number; readonly callId: string; readonly runId: string; readonly status: StoredRunStatus };

/** A call of the open turn started waiting for a decision. */
export interface ApprovalRequestEntry {
  readonly kind: 'approval_request';
  readonly turn: number;
  /** The call's index in the turn's reply. */
  readonly index: number;
  readonly callId: string;
  /** `<runId>:<turn>.<index>`, unique in the run tree. */
  readonly approvalId: string;
  readonly tool: string;
  /** sha256 (hex) of the call's raw argument text: a decision binds to these exact arguments. */
  readonly argsHash: string;
  /** Milliseconds since the epoch; durable approval timeouts count from here. */
  readonly requestedAt: number;
  /**
   * When it is denied undecided (ms since the epoch): `requestedAt` plus the run's
   * `approvalTimeoutMs`, logged when the run has one (format 6). A parked run is woken then
   * (PostgreSQL `wake_at`), and a resumed run keeps this deadline.
   */
  readonly deadline?: number;
}

/** The decision on a pending approval, recorded by the run itself or by `Runner.decide`. */
export interface ApprovalDecisionEntry {
  readonly kind: 'approval_decision';
  readonly approvalId: string;
  readonly callId: string;
  readonly argsHash: string;
  readonly approved: boolean;
  readonly reason?: string;
  /**
   * Approved with edited arguments: the JSON text the call runs with instead of the model's
   * (format 3). Only with `approved: true`, always with `editedArgsHash`.
   */
  readonly editedArguments?: string;
  /** sha256 (hex) of `editedArguments`: a decision whose edits do not match it is not applied (the call is asked again). */
  readonly editedArgsHash?: string;
  /** Who decided (free text: a user name, "timeout", "handler"). */
  readonly by?: string;
  readonly decidedAt: number;
}

/**
 * A call of the open turn started waiting (its tool returned a wait: a question, an external
 * event, a time; format 4). A resumed run opens it again instead of running the tool again.
 */
export interface WaitRequestEntry {
  readonly kind: 'wait_request';
  /** `<runId>:<turn>.<index>`, unique in the run tree. */
  readonly waitId: string;
  readonly waitKind: CallWaitKind;
  readonly turn: number;
  /** The call's index in the turn's reply. */
  readonly index: number;
  readonly callId: string;
  readonly tool: string;
  /** What it waits for, as its kind describes it (`{ question, options?, multiSelect }`, `{ name }`, `{ until }`). */
  readonly detail: Readonly<Record<string, unknown>>;
  /** Milliseconds since the epoch; a timeout counts from here, across restarts. */
  readonly requestedAt: number;
  /** When it ends undecided (a timeout, or a timer's time), ms since the epoch. */
  readonly deadline?: number;
}

/** How a call's wait ended: resolved (by a person, an event, the clock, from any process) or timed out (format 4). */
export interface WaitResolutionEntry {
  readonly kind: 'wait_resolution';
  readonly waitId: string;
  readonly waitKind: CallWaitKind;
  readonly callId: string;
  readonly ended: 'resolved' | 'timedOut';
  /** The answer, the event's payload, `{ at }` for a timer (when resolved). */
  readonly resolution?: unknown;
  /** Who resolved it (free text). */
  readonly by?: string;
  readonly resolvedAt: number;
}

/**
 * The run was aborted with a reason (`Runner.abort`, format 5): the closing entry, after a
 * result "Conversation aborted: <reason>" for every call that had none and the final
 * assistant message of turn `turn` saying the same. A run with this entry is never resumed.
 */
export interface AbortEntry {
  readonly kind: 'abort';
  /** The turn of the final assistant message. */
  readonly turn: number;
  readonly reason: string;
  /** Who aborted it (free text). */
  readonly by?: string;
  readonly abortedAt: number;
}

/** The run's `ctx.extra` (format 5): the whole JSON object, written when it changed, before the entry appended with it; the last one wins. */
export interface ExtraEntry {
  readonly kind: 'extra';
  readonly value: Readonly<Record<string, unknown>>;
}

export type CheckpointEntryKind = CheckpointEntry['kind'];

export type { RunStatus, StoredRunStatus } from '../run-status.js';

/** The small, rewritten part of a run's record. */
export interface CheckpointHead {
  readonly agent: string;
  readonly turn: number;
  readonly usage: Usage;
  readonly status: StoredRunStatus;
  readonly output?: string;
  readonly error?: { readonly name: string; readonly message: string };
}

/** Who may write a run, until when (milliseconds since the epoch). */
export interface Lease {
  readonly runId: string;
  /** The claimant: process id plus a random nonce (see `leaseOwner()`), or any unique string. */
  readonly owner: string;
  readonly expiresAt: number;
}

/** Options of `CheckpointStore.claim`. */
export interface ClaimOptions {
  /** Take the lease even though it is unexpired, if (and only if) exactly this owner holds it. */
  readonly takeOverFrom?: string;
}

/**
 * Fencing for an append: the writer's lease owner and the number of entries it believes are
 * stored. A store that keeps leases refuses the append with `RunLocked` (writing nothing)
 * when another owner holds an unexpired lease, when the run was taken over, or when the
 * stored entry count differs from `seq`.
 */
export interface AppendFence {
  readonly owner: string;
  readonly seq: number;
}

/** One append of a group commit (`appendBatch` of the SQLite and PostgreSQL stores). */
export interface AppendRequest {
  readonly runId: string;
  readonly entries: readonly CheckpointEntry[];
  readonly head: CheckpointHead;
  readonly fence?: AppendFence;
}

/** A run as `load` returns it: every entry in append order and the latest head. */
export interface StoredRun {
  readonly entries: readonly CheckpointEntry[];
  readonly head: CheckpointHead;
  /** Record format the run was written with (stores of this package always set it). */
  readonly schemaVersion?: number;
  /** The run's current lease, when the store keeps leases and one was taken (expired ones too). */
  readonly lease?: Lease;
}

/** One row of `list()`: a run's head without its entries. */
export interface RunSummary {
  readonly runId: string;
  readonly schemaVersion: number;
  readonly head: CheckpointHead;
  /** Number of stored entries. */
  readonly entries: number;
  /** Milliseconds since the epoch of the first and the latest append. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly lease?: Lease;
}

export interface ListRunsOptions {
  /** Only runs whose head has one of these statuses. */
  readonly status?: StoredRunStatus | readonly StoredRunStatus[];
}

type MaybePromise<T> = T | Promise<T>;

/**
 * Append-only run log: entries are only ever appended; the head is replaced. Only `append`
 * and `load` are required; resume uses `delete` for `ifRunExists: "restart"`.
 *
 * Leases (`claim`, `renew`, `release`, and `fence` on `append`) make a run single-writer
 * across processes: a store without them is safe only when one process at a time runs a
 * given run id. All stores of this package keep leases.
 */
export interface CheckpointStore {
  /**
   * Appends `entries` (possibly none) after the run's stored ones and replaces its head,
   * atomically. With `fence`, throws `RunLocked` and writes nothing unless `fence.owner`
   * holds the run's lease and exactly `fence.seq` entries are stored.
   */
  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead, fence?: AppendFence): MaybePromise<void>;
  /** The run's entries in append order and its head; undefined when the store has no such run. */
  load(runId: string): MaybePromise<StoredRun | undefined>;
  /** Heads of the stored runs, oldest first (by first append). */
  list?(options?: ListRunsOptions): MaybePromise<readonly RunSummary[]>;
  /** Removes a run and its lease (used by `ifRunExists: "restart"`); works on a damaged run too. */
  delete?(runId: string): MaybePromise<void | boolean>;
  /**
   * Takes the run's lease for `owner` until now + `ttlMs`, whether or not the run is stored
   * yet (so two same-tick starts of one id are decided here). Succeeds when no lease exists,
   * the lease expired, `owner` already holds it, or it is held by exactly
   * `options.takeOverFrom` (an owner the caller proved dead: see `claimLease`), atomically:
   * the owner taken over from can then neither append nor renew.
   * @throws RunLocked when another owner holds an unexpired lease (nothing changes).
   */
  claim?(runId: string, owner: string, ttlMs: number, options?: ClaimOptions): MaybePromise<Lease>;
  /** Extends a held lease to now + `ttlMs`. @throws RunLocked when `owner` no longer holds it (taken over). */
  renew?(runId: string, owner: string, ttlMs: number): MaybePromise<Lease>;
  /** Drops the lease when `owner` still holds it; otherwise does nothing. */
  release?(runId: string, owner: string): MaybePromise<void>;
  /**
   * Group commit: several appends (of different runs, or none twice for one run) in one
   * transaction, each refused on its own (fence, validation) without affecting the others.
   * Resolves with each request's error, or undefined where it was stored.
   */
  appendBatch?(requests: readonly AppendRequest[]): MaybePromise<readonly (Error | undefined)[]>;
  /** Releases the store's resources; a closed store refuses further use. */
  close?(): MaybePromise<void>;
}

/** One append of a group commit (`appendBatch`). */
export interface AppendRequest {
  readonly runId: string;
  readonly entries: readonly CheckpointEntry[];
  readonly head: CheckpointHead;
  readonly fence?: AppendFence;
}
