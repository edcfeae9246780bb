import { UserError } from '../errors.js';
import { editsIntact } from './args-hash.js';
import type { AbortEntry, ApprovalDecisionEntry, ApprovalRequestEntry, CheckpointEntry, CheckpointHead, WaitRequestEntry, WaitResolutionEntry } from '../store/checkpoint-store.js';
import type { AssistantMessage, Message, RunInputValue, ToolResultMessage } from '../types.js';

/** A run rebuilt from its stored log. */
export interface RestoredRun {
  readonly transcript: Message[];
  /** The run's own input as it was given (its first `input` entries): one text, or the messages. */
  readonly input: RunInputValue;
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
  readonly openTurn: { readonly reply: AssistantMessage; readonly results: ReadonlyMap<number, StoredResult> } | undefined;
  /** Approval requests of the open turn by approval id, with their recorded decision if any. */
  readonly approvals: ReadonlyMap<string, { readonly request: ApprovalRequestEntry; readonly decision: ApprovalDecisionEntry | undefined }>;
  /** Waits of the open turn's calls by wait id (a call that waits is not run again), with their resolution if any. */
  readonly waits: ReadonlyMap<string, StoredWait>;
  /** The run's `ctx.extra` as last stored (undefined: never stored). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** The run was aborted (Runner.abort): its closing entry. Such a run is never resumed. */
  readonly aborted?: AbortEntry;
}

/** A call's wait as the log holds it: its request, and how it ended if it did. */
export interface StoredWait {
  readonly request: WaitRequestEntry;
  readonly resolution: WaitResolutionEntry | undefined;
}

/** A stored tool result and whether it asked the run to stop. */
export interface StoredResult {
  readonly message: ToolResultMessage;
  readonly terminate: boolean;
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
  let open: { reply: AssistantMessage; results: Map<number, StoredResult> } | undefined;
  const approvals = new Map<string, { request: ApprovalRequestEntry; decision: ApprovalDecisionEntry | undefined }>();
  const waits = new Map<string, { request: WaitRequestEntry; resolution: WaitResolutionEntry | undefined }>();
  let aborted: AbortEntry | undefined;
  let extra: Readonly<Record<string, unknown>> | undefined;
  const input: Message[] = [];
  entries.forEach((entry, index) => {
    switch (entry.kind) {
      case 'input':
        transcript.push(entry.message);
        // Injected messages (steer, mailbox, hook…) carry a source; the run's own input does not and comes first.
        if (entry.source === undefined && turn === 0) input.push(entry.message);
        break;
      case 'reply': {
        const reply = entry.message as AssistantMessage;
        transcript.push(reply);
        turn = entry.turn;
        toolCalls += reply.toolCalls.length;
        open = { reply, results: new Map() };
        approvals.clear();
        waits.clear();
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
        turn.results.set(at, { message: result, terminate: entry.terminate === true });
        break;
      }
      case 'turn_end':
        open = undefined;
        approvals.clear();
        waits.clear();
        break;
      case 'handoff':
        // The head names the agent the run is on; the entry records when the switch happened.
        break;
      case 'approval_request':
        approvals.set(entry.approvalId, { request: entry, decision: undefined });
        break;
      case 'approval_decision': {
        const waiting = approvals.get(entry.approvalId);
        if (!waiting) throw new UserError(`Checkpoint entry ${index + 1} decides approval '${entry.approvalId}', which the open turn did not request.`);
        // Fail closed: a decision binds to the request's call and exact arguments; one for other arguments is ignored.
        // Edited arguments must still have the hash they were stored with, or the call is asked again.
        if (entry.callId === waiting.request.callId && entry.argsHash === waiting.request.argsHash && editsIntact(entry)) waiting.decision ??= entry;
        break;
      }
      case 'wait_request':
        waits.set(entry.waitId, { request: entry, resolution: undefined });
        break;
      case 'wait_resolution': {
        const waiting = waits.get(entry.waitId);
        if (!waiting) throw new UserError(`Checkpoint entry ${index + 1} resolves wait '${entry.waitId}', which the open turn did not request.`);
        waiting.resolution ??= entry;
        break;
      }
      case 'abort':
        aborted = entry;
        break;
      case 'extra':
        extra = entry.value;
        break;
      case 'subrun_start':
      case 'subrun_end':
        // A sub-run keeps its own log under its run id; resuming the call resumes it from there.
        break;
      default:
        throw new UserError(`Checkpoint entry ${index + 1} has an unknown kind '${(entry as { kind: unknown }).kind}'.`);
    }
  });
  const only = input.length === 1 ? input[0]! : undefined;
  return { transcript, input: only?.role === 'user' && typeof only.content === 'string' && !only.parts ? only.content : input, turn, head, toolCalls, openTurn: open, approvals, waits, ...(aborted ? { aborted } : {}), ...(extra ? { extra } : {}) };
}
