/**
 * The calls of a turn as the run tracks them: one slot per requested call, from preflight to
 * its single result, and the batch of a reply. Data only: the run chart's actions change them.
 */
import type { Tool } from '../tools/tool.js';
import type { AssistantMessage, ToolCallRequest } from '../types.js';

/** `cleared`: passed preflight (and its approval), waiting for a free slot (maxConcurrentToolCalls). */
export type SlotState = 'pending' | 'cleared' | 'dispatched' | 'settled';

/** One requested call of the current turn, from preflight to its single result. */
export interface CallSlot {
  /** Unique in the run (`<turn>.<index>`): actors, approvals and results use it, so repeated model ids never collide. */
  readonly key: string;
  /** Position in the model's reply. */
  readonly index: number;
  /**
   * The call that runs: the model's, or what a resolveToolCall hook resolved it to (with the
   * model's id). Preflight, approvals, hooks, the tool and the events see it.
   */
  call: ToolCallRequest;
  /** As the model sent it (an empty id replaced by a generated one); its result message names it. */
  readonly asked: ToolCallRequest;
  state: SlotState;
  tool: Tool | undefined;
  raw: Record<string, unknown> | undefined;
  args: unknown;
  terminate: boolean;
  output: string;
}

/** The calls of the current turn's reply. */
export interface Batch {
  readonly reply: AssistantMessage | undefined;
  readonly slots: CallSlot[];
  readonly byKey: ReadonlyMap<string, CallSlot>;
  /** Index of the next call preflight looks at. */
  cursor: number;
  /** Every call of this batch runs alone (agent or a tool's executionMode is sequential; a resolved call's tool counts). */
  sequential: boolean;
  /** The resolving step ran for this batch (resolveToolCall hooks answered for each open call). */
  resolved: boolean;
  /** afterModelResponse said stop: this reply's text is the final output and its calls never run. */
  readonly stopped: boolean;
  /** The handoff target a call of this turn already claimed: later handoffs are rejected. */
  claimedHandoff: string | undefined;
  /** shouldStopAfterTurn: undefined until asked (after the turn's results), then its answer. */
  stopAfterTurn: boolean | undefined;
}

/** The empty batch's index: read-only, so every empty batch shares it. */
const NO_SLOTS: ReadonlyMap<string, CallSlot> = new Map();

/** The batch of a turn before its reply (and of a run before its first turn). */
export function emptyBatch(): Batch {
  return { reply: undefined, slots: [], byKey: NO_SLOTS, cursor: 0, sequential: false, resolved: true, claimedHandoff: undefined, stopped: false, stopAfterTurn: undefined };
}
