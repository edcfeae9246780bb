import { UserError } from '../errors.js';
import { findAgent } from './agent-graph.js';
import { restoreRun, type RestoredRun } from './resume.js';
import { RunExtra, sessionExtraMessage, sessionStartExtra, splitSessionExtra } from './extra.js';
import { batchFor } from './run-turn.js';
import { agentSetup, applyAgentSetup, type AgentSetup, type RunState } from './run-state.js';
import { activateAgent } from './run-plugins.js';
import type { AssistantMessage, Message } from '../types.js';

/** Whether the run loads anything before its first step (a checkpoint store or a session). */
export function needsLoading(state: RunState): boolean {
  return state.options.checkpoint !== undefined || state.options.session !== undefined;
}

/**
 * What the restoring state loaded (the restore actor's output): the session's history and the
 * stored run, if there is one. Plain data: the chart's `applyRestore` action puts it into the
 * run's state, so the run's control state changes only in its own actions.
 */
export interface RestoredState {
  /** The session's earlier messages (empty without a session). */
  readonly history: readonly Message[];
  /** The stored run to continue, with the setup of the agent it is on; undefined for a new one. */
  readonly stored: (RestoredRun & { readonly setup: AgentSetup }) | undefined;
}

/**
 * The restoring state's work: the session's history, then the claim and the stored run
 * (resume). Resolves with what it loaded; rejects (writing nothing, the lease given back)
 * when the run is refused: locked, "fail", "resume_only" without a stored run, damaged.
 */
export function restoreInput(state: RunState): { load(signal: AbortSignal): Promise<RestoredState> } {
  return { load: (signal) => loadFromStore(state, signal) };
}

async function loadFromStore(state: RunState, signal: AbortSignal): Promise<RestoredState> {
  const session = state.options.session;
  const history = session ? await session.store.history(session.id) : [];
  const log = state.runLog;
  if (!log) return { history, stored: undefined };
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
      return { history, stored: undefined };
    }
    const saved = await store.load(id);
    if (!saved) {
      if (mode === 'resume_only') throw new UserError(`Run '${id}' is not in the checkpoint store (ifRunExists: "resume_only").`);
      log.open(0);
      return { history, stored: undefined };
    }
    if (mode === 'fail') throw new UserError(`Run '${id}' already exists in the checkpoint store (ifRunExists: "fail").`);
    const restored = restoreRun(saved.entries, saved.head);
    if (restored.aborted) throw new UserError(`Cannot resume run '${id}': it was aborted (Conversation aborted: ${restored.aborted.reason}).`);
    // Checked before the log opens: an unreachable agent (or one that cannot be set up) refuses the resume and writes nothing.
    const agent = findAgent(state.agent, restored.head.agent);
    if (!agent) throw new UserError(`Cannot resume run '${state.runId}': agent '${restored.head.agent}' is not reachable from '${state.agent.name}' through handoffs.`);
    // Plugins are code, not state: a resumed run sets the stored agent's plugins up again (a completed one replays and needs none).
    const setup = agent.plugins.length > 0 && restored.head.status !== 'completed' ? await activateAgent(state, agent, signal, true) : agentSetup(state, agent);
    log.open(saved.entries.length, saved.head.status);
    return { history, stored: { ...restored, setup } };
  } catch (error) {
    // A refusal or a failed restore writes nothing: the lease taken above is given back.
    await log.close();
    throw error;
  }
}

/** `applyRestore`: the loaded history and stored run become the run's state (a chart action). */
export function applyRestore(state: RunState, loaded: RestoredState): void {
  if (loaded.history.length > 0) {
    // The session's last extra starts this run's (RunOptions.extra merged over it); a stored run's own extra still wins below.
    const { messages, extra } = splitSessionExtra(loaded.history);
    for (const message of messages) state.transcript.push(message);
    state.historyLength = messages.length;
    state.extra = sessionStartExtra(extra, state.extra);
  }
  const restored = loaded.stored;
  if (!restored) return;
  const { head } = restored;
  applyAgentSetup(state, restored.setup);
  state.resumed = true;
  state.input = restored.input;
  for (const message of restored.transcript) state.transcript.push(message);
  Object.assign(state.usage, head.usage);
  state.turn = restored.turn;
  state.storedApprovals = restored.approvals;
  state.storedWaits = restored.waits;
  if (restored.extra) state.extra = new RunExtra({ ...restored.extra }, 'stored');
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
      // The run's extra as it ended goes with its messages: the session's next run starts from it.
      const own = state.transcript.slice(state.historyLength);
      await session.store.append(session.id, state.runId, state.extra ? [...own, sessionExtraMessage(state.extra)] : own);
    },
  };
}
