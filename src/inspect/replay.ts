import { RUN_STATE, stateChain } from '../machines/run-states.js';
import type { RunStatus } from '../run-status.js';

/**
 * Replay of a stored run: step N of its checkpoint log shows the first N entries as
 * transcript items (one item per entry) and the run chart's state after them. No model is
 * called; it is a fold over the log. Entry kinds this build does not know are shown as
 * generic items and leave the chart state as it was. Dependency-free: the page imports it.
 */

/** A log entry as `GET /api/runs/:id` sends it: known kinds typed, any other kind kept. */
export interface WireEntry {
  readonly kind: string;
  readonly [field: string]: unknown;
}

interface WireMessage {
  readonly role?: string;
  readonly content?: string;
  readonly reasoning?: string;
  readonly agent?: string;
  readonly callId?: string;
  readonly name?: string;
  readonly isError?: boolean;
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>;
}

export type ReplayItem =
  | { readonly kind: 'input'; readonly index: number; readonly role: string; readonly text: string }
  | { readonly kind: 'reply'; readonly index: number; readonly turn: number; readonly agent: string; readonly text: string; readonly reasoning: string; readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }> }
  /** `tool`: as the model called it; `ran`: the tool that ran, when a resolveToolCall hook resolved the call. */
  | { readonly kind: 'result'; readonly index: number; readonly turn: number; readonly callId: string; readonly tool: string; readonly content: string; readonly isError: boolean; readonly ran?: { readonly name: string; readonly arguments: string } }
  | { readonly kind: 'turn_end'; readonly index: number; readonly turn: number }
  | { readonly kind: 'other'; readonly index: number; readonly entryKind: string; readonly payload: WireEntry };

export interface ReplayState {
  /** Entries applied (0 = nothing yet). */
  readonly step: number;
  readonly items: readonly ReplayItem[];
  /** Active state ids of the run chart after `step` entries, ancestors first. */
  readonly active: readonly string[];
  readonly turn: number;
  /** The agent that replied last (a handoff changes it). */
  readonly agent: string | undefined;
}


/** One entry as a transcript item. */
export function replayItem(entry: WireEntry, index: number): ReplayItem {
  const message = (entry.message ?? {}) as WireMessage;
  const turn = typeof entry.turn === 'number' ? entry.turn : 0;
  switch (entry.kind) {
    case 'input':
      return { kind: 'input', index, role: message.role ?? 'user', text: String(message.content ?? '') };
    case 'reply':
      return { kind: 'reply', index, turn, agent: message.agent ?? '', text: String(message.content ?? ''), reasoning: String(message.reasoning ?? ''), calls: message.toolCalls ?? [] };
    case 'result': {
      const item = { kind: 'result' as const, index, turn, callId: String(message.callId ?? ''), tool: String(message.name ?? ''), content: String(message.content ?? ''), isError: message.isError === true };
      const ran = entry.resolved as { name?: unknown; arguments?: unknown } | undefined;
      return ran && typeof ran.name === 'string' ? { ...item, ran: { name: ran.name, arguments: String(ran.arguments ?? '') } } : item;
    }
    case 'turn_end':
      return { kind: 'turn_end', index, turn };
    default:
      return { kind: 'other', index, entryKind: String(entry.kind), payload: entry };
  }
}


/**
 * The state after the first `step` entries of a run whose head says `status`. The last step
 * of a finished run is its final state (completed, failed); otherwise the state follows the
 * entry: input → model, a reply with calls still missing results → executing, all results
 * in → checkpoint, a reply without calls → turnEnd, turn_end → turnEnd.
 */
export function replayAt(entries: readonly WireEntry[], step: number, status: RunStatus): ReplayState {
  const n = Math.max(0, Math.min(entries.length, Math.floor(step)));
  const items: ReplayItem[] = [];
  let leaf: string = RUN_STATE.starting;
  let turn = 0;
  let agent: string | undefined;
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const item = replayItem(entries[i]!, i);
    items.push(item);
    switch (item.kind) {
      case 'input':
        leaf = RUN_STATE.model;
        break;
      case 'reply':
        turn = item.turn;
        agent = item.agent || agent;
        missing = item.calls.length;
        leaf = missing > 0 ? RUN_STATE.executing : RUN_STATE.turnEnd;
        break;
      case 'result':
        missing = Math.max(0, missing - 1);
        leaf = missing > 0 ? RUN_STATE.executing : RUN_STATE.checkpoint;
        break;
      case 'turn_end':
        leaf = RUN_STATE.turnEnd;
        break;
      default: {
        // Shown as generic items; the ones the chart knows move it (an unknown entry does not).
        const kind = item.entryKind;
        if (kind === 'handoff') {
          agent = typeof item.payload['to'] === 'string' ? item.payload['to'] : agent;
          leaf = RUN_STATE.handoff;
        } else if (kind === 'approval_request') leaf = RUN_STATE.approvalWait;
        else if (kind === 'approval_decision' || kind === 'subrun_start' || kind === 'subrun_end') leaf = RUN_STATE.executing;
        break;
      }
    }
  }
  if (n === entries.length && n > 0) {
    if (status === 'completed') leaf = RUN_STATE.completed;
    else if (status === 'failed') leaf = RUN_STATE.failed;
    else if (status === 'cancelled') leaf = RUN_STATE.cancelled;
    else if (status === 'suspended') leaf = RUN_STATE.suspended;
  }
  return { step: n, items, active: stateChain(leaf), turn, agent };
}
