import { UserError } from '../errors.js';
import { findAgent } from './agent-graph.js';
import { restoreRun, type RestoredRun } from './resume.js';
import { batchFor } from './run-turn.js';
import { useAgent, type RunState } from './run-state.js';
import type { AssistantMessage } from '../types.js';

/** Whether the run loads anything before its first step (a checkpoint store or a session). */
export function needsLoading(state: RunState): boolean {
  return state.options.checkpoint !== undefined || state.options.session !== undefined;
}

/** The restoring state's work: the session's history, then the stored run (resume). */
export function restoreInput(state: RunState): { load(): Promise<void> } {
  return { load: () => loadFromStore(state) };
}

async function loadFromStore(state: RunState): Promise<void> {
  const session = state.options.session;
  if (session) {
    const history = await session.store.history(session.id);
    state.transcript.push(...history);
    state.historyLength = history.length;
  }
  const log = state.runLog;
  if (!log) return;
  // The claim comes first: it decides same-tick starts of one id, and a run locked by another owner is left untouched.
  await log.claim();
  try {
    const { store, runId: id } = log;
    const mode = state.options.checkpoint!.ifRunExists ?? 'resume';
    if (mode === 'restart') {
      if (!store.delete) throw new UserError('ifRunExists: "restart" needs a checkpoint store that can delete runs.');
      // Not loaded first: a damaged run is deleted too. Deleting drops the lease, so it is taken again.
      await store.delete(id);
      await log.claim();
      log.open(0);
      return;
    }
    const saved = await store.load(id);
    if (!saved) {
      if (mode === 'resume_only') throw new UserError(`Run '${id}' is not in the checkpoint store (ifRunExists: "resume_only").`);
      log.open(0);
      return;
    }
    if (mode === 'fail') throw new UserError(`Run '${id}' already exists in the checkpoint store (ifRunExists: "fail").`);
    applyRestore(state, restoreRun(saved.entries, saved.head));
    log.open(saved.entries.length, saved.head.status);
  } catch (error) {
    // A refusal or a failed restore writes nothing: the lease taken above is given back.
    await log.close();
    throw error;
  }
}

function applyRestore(state: RunState, restored: RestoredRun): void {
  const { head } = restored;
  const agent = findAgent(state.agent, head.agent);
  if (!agent) throw new UserError(`Cannot resume run '${state.runId}': agent '${head.agent}' is not reachable from '${state.agent.name}' through handoffs.`);
  useAgent(state, agent);
  state.resumed = true;
  state.transcript.push(...restored.transcript);
  Object.assign(state.usage, head.usage);
  state.turn = restored.turn;
  state.storedApprovals = restored.approvals;
  // Calls of the open turn without a stored result are counted again when preflight reaches them.
  const uncounted = restored.openTurn ? restored.openTurn.reply.toolCalls.length - restored.openTurn.results.size : 0;
  state.toolCallCount = restored.toolCalls - uncounted;
  if (head.status === 'completed') {
    state.replayCompleted = true;
    state.storedOutput = head.output ?? '';
    state.turn = head.turn;
    return;
  }
  const open = restored.openTurn;
  if (!open) return;
  state.resumeInTurn = true;
  state.batch = batchFor(state, open.reply as AssistantMessage);
  for (const slot of state.batch.slots) {
    const stored = open.results.get(slot.index);
    if (!stored) continue;
    slot.state = 'settled';
    slot.output = stored.message.content;
    slot.terminate = stored.terminate;
  }
}

/** On completion: this run's messages join the session (idempotent per run id). */
export function sessionInput(state: RunState): { save(): Promise<void> } {
  return {
    save: async () => {
      const session = state.options.session!;
      await session.store.append(session.id, state.runId, state.transcript.slice(state.historyLength));
    },
  };
}
