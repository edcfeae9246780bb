/**
 * The wait abstraction (docs/architecture.md, "Waits"): something a run waits for that the
 * outside world resolves: an approval, a person's answer, an external event, a point in time.
 * Every wait is one child machine (wait.machine.ts), is listed in its run tree's inbox
 * (WaitRouter) while it waits, logs one pair of entries (its request, its resolution), can
 * park a durable run, and is resolved the same way from the run's handle, from another
 * process and over HTTP. What differs per kind is data: kinds/<kind>.ts.
 */
import type { CallWaitKind } from './kinds/records.js';

/** The kinds of wait. An approval waits before its call runs; the others are what a call's tool returned. */
export type WaitKindName = 'approval' | CallWaitKind;

/** A wait as its run tree's inbox lists it (`handle.waits.pending()`, `GET /api/runs/:id`). */
export interface WaitView {
  /** Unique in the run tree: `<runId>:<turn>.<index>` for an approval and for a call's wait (the call's position in its turn); `<runId>:<turn>.<index>:ask.<n>` for the n-th ask of a tool's body. */
  readonly waitId: string;
  readonly kind: WaitKindName;
  /** The run that waits (the root or a sub-run). */
  readonly runId: string;
  /** The model's call id of the call that waits, and its tool. */
  readonly callId: string;
  readonly tool: string;
  readonly path: readonly string[];
  readonly agent: string;
  readonly turn: number;
  /** Epoch ms when the wait opened (a resumed wait keeps its stored time). */
  readonly requestedAt: number;
  /** Epoch ms when it ends undecided (approval, question, event: a timeout; timer: when it fires); undefined: never. */
  readonly deadline: number | undefined;
  /** What the kind waits for (kinds/<kind>.ts): the tool and arguments, the question, the event name, the time. */
  readonly detail: Readonly<Record<string, unknown>>;
}

/**
 * How a wait ended (the wait machine's output). `resolution` is what resolved it, in the
 * kind's shape (checked by the kind before it was accepted); `by` says who.
 */
export type WaitOutcome =
  | { readonly ended: 'resolved'; readonly resolution: unknown; readonly by: string }
  /** The deadline passed undecided (for a timer: its time came). */
  | { readonly ended: 'timedOut' }
  /** An approval's check decided it before anyone was asked (a beforeToolCall hook, the predicate, a throw). */
  | { readonly ended: 'checked'; readonly resolution: unknown; readonly by: string };

/**
 * What a tool returns instead of a value to make its call wait (`waitForEvent`, `waitUntil`,
 * `askHuman` without a channel): the call's result is made from the wait's resolution.
 */
export interface WaitRequest {
  readonly [WAIT_REQUEST]: true;
  readonly kind: Exclude<WaitKindName, 'approval'>;
  /** The kind's request fields (kinds/<kind>.ts `request`). */
  readonly detail: Readonly<Record<string, unknown>>;
  /** Give up after this long (ms): the call gets the kind's timeout result. */
  readonly timeoutMs?: number;
  /** Epoch ms the wait ends on its own (a timer's time). */
  readonly until?: number;
}

/** Marks a tool's return value as a wait request (not JSON: a tool's plain value can never be one). */
export const WAIT_REQUEST: unique symbol = Symbol.for('troupe.waitRequest');

/** Whether a tool returned a wait request. */
export function isWaitRequest(value: unknown): value is WaitRequest {
  return typeof value === 'object' && value !== null && (value as { [WAIT_REQUEST]?: unknown })[WAIT_REQUEST] === true;
}
