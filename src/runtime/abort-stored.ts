/**
 * Aborting a stored run (CubePi's "abort the conversation"): from any process, a parked (or
 * stopped) run is closed for good. Every call of its open turn that has no result gets one,
 * "Conversation aborted: <reason>" (questions, events and timers it waited for, approvals it
 * waited on), the turn ends, a final assistant message "Conversation aborted: <reason>" is
 * stored as the run's last turn, then the closing `abort` entry; the head says `cancelled`.
 * Nothing runs: no tool, no model. A resume of an aborted run is refused.
 */
import { UserError } from '../errors.js';
import type { AbortEntry, CheckpointEntry, CheckpointStore } from '../store/checkpoint-store.js';
import type { ToolResultMessage } from '../types.js';
import { restoreRun } from './resume.js';
import { leaseOwner } from './run-log.js';

/** How long an abort from another process holds the run's lease while it appends (it releases it at once). */
const ABORT_LEASE_MS = 10_000;

/** The text of every result and of the final message of an aborted run. */
export function abortedText(reason: string): string {
  return `Conversation aborted: ${reason}`;
}

/**
 * `Runner.abort`: closes the stored run `runId` for good with `reason` (see the module's
 * comment). Returns the entries written, the closing `abort` entry last.
 * @throws UserError for an empty reason, a run that is not stored, or one that already
 * completed, failed or was cancelled. @throws RunLocked when a live process holds the run
 * (suspend it there first, or cancel it through its handle).
 */
export async function abortStored(store: CheckpointStore, runId: string, reason: string, by = 'api'): Promise<CheckpointEntry[]> {
  if (typeof reason !== 'string' || reason.length === 0) throw new UserError(`Runner.abort needs a reason (a non-empty string), got ${JSON.stringify(reason)}.`);
  const owner = leaseOwner();
  if (store.claim) await store.claim(runId, owner, ABORT_LEASE_MS);
  try {
    const saved = await store.load(runId);
    if (!saved) throw new UserError(`Run '${runId}' is not in the checkpoint store.`);
    const status = saved.head.status;
    if (status !== 'suspended' && status !== 'running') throw new UserError(`Run '${runId}' has already ended (${status}); only a parked or stopped run can be aborted.`);
    const restored = restoreRun(saved.entries, saved.head);
    const text = abortedText(reason);
    const entries: CheckpointEntry[] = [];
    let turn = restored.turn;
    const open = restored.openTurn;
    if (open) {
      // Every call without a result gets exactly one, in request order.
      open.reply.toolCalls.forEach((call, index) => {
        if (open.results.has(index)) return;
        const message: ToolResultMessage = { role: 'tool', callId: call.id, name: call.name, content: text, isError: false };
        entries.push({ kind: 'result', turn, message });
      });
      entries.push({ kind: 'turn_end', turn });
    }
    turn += 1;
    const agent = saved.head.agent;
    entries.push({ kind: 'reply', turn, message: { role: 'assistant', content: text, toolCalls: [], agent } });
    entries.push({ kind: 'turn_end', turn });
    const closing: AbortEntry = { kind: 'abort', turn, reason, by, abortedAt: Date.now() };
    entries.push(closing);
    const head = { ...saved.head, turn, status: 'cancelled' as const, error: { name: 'RunCancelled', message: text } };
    await store.append(runId, entries, head, store.claim ? { owner, seq: saved.entries.length } : undefined);
    return entries;
  } finally {
    await store.release?.(runId, owner);
  }
}
