import { UserError } from '../errors.js';
import type { CheckpointEntry, CheckpointHead } from '../store/checkpoint-store.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../types.js';

/** A run rebuilt from its stored log. */
export interface RestoredRun {
  readonly transcript: Message[];
  /** The last turn that started (its reply was stored). */
  readonly turn: number;
  readonly head: CheckpointHead;
  /** Tool calls counted so far (every call of every stored reply). */
  readonly toolCalls: number;
  /**
   * The last turn when it did not end: its reply and the results already stored, so only
   * the calls without a result run again (under the same turn number). Results are keyed by
   * the call's index in the reply; a repeated call id pairs with its occurrences in order.
   */
  readonly openTurn: { readonly reply: AssistantMessage; readonly results: ReadonlyMap<number, ToolResultMessage> } | undefined;
}

/**
 * Replays the entries in order. A turn_end closes the turn of the latest reply; a reply
 * without its turn_end is the open turn. A reply whose model call was in flight at the
 * crash was never stored, so that turn simply starts again.
 */
export function restoreRun(entries: readonly CheckpointEntry[], head: CheckpointHead): RestoredRun {
  const transcript: Message[] = [];
  let turn = 0;
  let toolCalls = 0;
  let open: { reply: AssistantMessage; results: Map<number, ToolResultMessage> } | undefined;
  entries.forEach((entry, index) => {
    switch (entry.kind) {
      case 'input':
        transcript.push(entry.message);
        break;
      case 'reply': {
        const reply = entry.message as AssistantMessage;
        transcript.push(reply);
        turn = entry.turn;
        toolCalls += reply.toolCalls.length;
        open = { reply, results: new Map() };
        break;
      }
      case 'result': {
        const result = entry.message as ToolResultMessage;
        transcript.push(result);
        const turn = open;
        const at = turn ? turn.reply.toolCalls.findIndex((c, i) => c.id === result.callId && !turn.results.has(i)) : -1;
        if (!turn || at < 0) {
          throw new UserError(`Checkpoint entry ${index + 1} is a result for call '${result.callId}', which the stored turn did not request.`);
        }
        turn.results.set(at, result);
        break;
      }
      case 'turn_end':
        open = undefined;
        break;
      default:
        throw new UserError(`Checkpoint entry ${index + 1} has an unknown kind '${(entry as { kind: unknown }).kind}'.`);
    }
  });
  return { transcript, turn, head, toolCalls, openTurn: open };
}
