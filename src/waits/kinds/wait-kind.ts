import type { RunEvent } from '../../types.js';
import type { WaitKindName, WaitOutcome, WaitView } from '../wait-types.js';

/** The fields every event of a waiting call carries. */
export interface WaitEventBase {
  readonly runId: string;
  readonly path: readonly string[];
  readonly agent: string;
  readonly turn: number;
  readonly call: { readonly id: string; readonly name: string; readonly arguments: string };
}

/**
 * One kind of wait, as data and pure functions: everything the wait machine, the inbox, the
 * log format and the HTTP routes need to know about it. Adding a kind is a file like this
 * one, its line in kinds/index.ts, its name and stored-shape checks in kinds/records.ts (every
 * type that lists kinds derives from that list), and the helper a tool returns (wait-for.ts).
 */
export interface WaitKind {
  readonly name: WaitKindName;
  /** What the deadline means: the wait times out undecided, or (a timer) it is resolved by the clock. */
  readonly atDeadline: 'timeout' | 'resolve';
  /**
   * A resolution given from outside (the handle, another process, HTTP), as it is stored.
   * @throws UserError naming what does not fit (nothing is resolved then).
   */
  resolution(view: WaitView, given: unknown): unknown;
  /** What a call that waited gets once its wait ended: the tool's value, or an error result. (Approvals: the run chart applies the decision instead.) */
  callResult(view: WaitView, outcome: WaitOutcome): { readonly value: unknown } | { readonly error: Error };
  /** The event that announces the wait on the run's stream (`undefined`: the run emits one of its own, as approvals do). */
  openedEvent(view: WaitView, base: WaitEventBase): RunEvent | undefined;
  /** The event that reports its resolution (`undefined`: none). */
  resolvedEvent(view: WaitView, outcome: WaitOutcome, base: WaitEventBase): RunEvent | undefined;
  /** Stored records: an issue with a request's `detail` or a resolution, as words (the store's format check), or undefined. */
  detailIssue(detail: Readonly<Record<string, unknown>>): string | undefined;
  resolutionIssue(resolution: unknown): string | undefined;
}
