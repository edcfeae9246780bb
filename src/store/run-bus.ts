/**
 * The messages between the nodes of a troupe cluster (servers and workers on one database),
 * as types free of any driver: `PostgresRunBus` implements them. Runs talk only by addressed
 * messages: a server never writes a run's log, it sends the run's owner a message; the owner
 * applies it to the live run, which logs the effect as it always does.
 */
import type { WireRunEvent } from '../inspect/wire.js';

/** What a server node can ask of a run that some worker runs (addressed to the root run id). */
export type RunMessage =
  /** Decide the waiting call `approvalId` (of the run or one of its sub-runs); `args`: approved with these arguments instead of the model's. */
  | { readonly kind: 'approve'; readonly approvalId: string; readonly approved: boolean; readonly reason?: string; readonly by?: string; readonly args?: Record<string, unknown> }
  /** Cancel the run (also one that has not started yet, or is suspended). */
  | { readonly kind: 'cancel'; readonly reason?: string }
  /** A user message for the run's next model request (`steer`) or for when it would end (`follow_up`). */
  | { readonly kind: 'steer'; readonly text: string; readonly queue?: 'steer' | 'follow_up' }
  /** The external event `name` for every call of the tree waiting for it (`waitForEvent`); `payload`: a JSON value (default null). */
  | { readonly kind: 'signal'; readonly name: string; readonly payload?: unknown; readonly by?: string }
  /** The answer to the question `requestId` (a question wait's id) an askHuman tool asked: a string, or options for a multi-select. */
  | { readonly kind: 'answer'; readonly requestId: string; readonly answer: string | readonly string[]; readonly by?: string };

/** A message as stored: kept until its run ends, so a run resumed elsewhere still gets it. */
export interface StoredRunMessage {
  /** Increasing in send order across the database. */
  readonly id: number;
  readonly runId: string;
  readonly message: RunMessage;
  readonly sentAt: number;
  /** Set once a worker applied it to the live run (its effect is then in the run's log or about to be). */
  readonly appliedAt: number | undefined;
}

/** A run event a worker streamed, as stored for server nodes and reconnecting clients. */
export interface StoredRunEvent {
  /** Increasing across the database; within one run, in the order the run emitted them. */
  readonly id: number;
  readonly runId: string;
  readonly event: WireRunEvent;
  /** When the worker stored it (epoch ms). */
  readonly at: number;
}

/** What a node hears about (NOTIFY); each names the run concerned. */
export interface BusListeners {
  /** Work was enqueued or a stored run became runnable: idle workers should claim. */
  readonly work?: (runId: string) => void;
  /** A message was sent to `runId`. */
  readonly message?: (runId: string) => void;
  /** `runId` has new events. */
  readonly events?: (runId: string) => void;
  /**
   * The listening connection was re-established after a failure: notifications may have been
   * missed meanwhile, so poll whatever you watch.
   */
  readonly reconnected?: () => void;
}

/**
 * The cluster's shared channel. Every method may throw StoreUnavailable (database
 * unreachable; nothing written) and UserError (tables missing: run `troupe db migrate`).
 */
export interface RunBus {
  /** Stores `message` for `runId`'s owner and notifies every node; resolves once it is stored. */
  send(runId: string, message: RunMessage): Promise<StoredRunMessage>;
  /** Every message of `runId` still kept (applied or not), oldest first. */
  messages(runId: string): Promise<StoredRunMessage[]>;
  /** Marks messages applied (they stay until their run ends). */
  markApplied(ids: readonly number[]): Promise<void>;
  /** Deletes `runId`'s messages if its stored head is finished (completed, failed, cancelled); returns how many. */
  clearFinished(runId: string): Promise<number>;
  /** Stores events of `runId` in order and notifies every node (one transaction). */
  publish(runId: string, events: readonly WireRunEvent[]): Promise<void>;
  /** `runId`'s stored events with an id above `afterId`, oldest first, at most `limit` (default 1000). */
  events(runId: string, afterId?: number, limit?: number): Promise<StoredRunEvent[]>;
  /** Subscribes to notifications on a dedicated connection (reconnected on failure); resolves once listening. */
  listen(listeners: BusListeners): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
