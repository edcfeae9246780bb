import { SUB_RUNS, type ProfileName, type ResultClass } from './chart-spec.js';
import { effect, isHandoff, profile, subRunEvent, type Effect, type ModelContext, type Raised } from './chart-semantics.js';

/**
 * What the test's env.* stimuli mean for the abstract run (split from chart-semantics.ts):
 * each raises the chart events the runtime would get, in the runtime's order.
 */

/** What a returning tool body means for the run: its result, and the messages it sent first. */
function settleStep(c: ModelContext, index: number): Raised[] {
  const slot = c.slots[index]!;
  const kind = slot.kind;
  const raised: Raised[] = [];
  if (isHandoff(kind)) raised.push({ type: 'handoff.request', bad: kind === 'badHandoff' });
  if (kind === 'postTerminate') raised.push({ type: 'mailbox.post' });
  const sub = SUB_RUNS[kind];
  if (sub) {
    raised.push(...sub.onSettle.map(subRunEvent));
    c.subLog.push(...sub.terminals);
  }
  // A throwing body (and a failed sub-run) reports tool_call_failed before its result.
  if (kind === 'cancelTool' || kind === 'budgetTool' || sub?.result === 'agentFailed') c.log.push(`tool_call_failed:${slot.id}`);
  const cls: ResultClass = sub ? sub.result : kind === 'cancelTool' ? 'toolError' : kind === 'budgetTool' ? 'overBudget' : isHandoff(kind) ? 'transferred' : 'ok';
  const terminate = kind === 'terminate' || kind === 'postTerminate';
  raised.push({ type: 'tools.settled', results: [{ index, cls, terminate, cancel: kind === 'cancelTool', budget: kind === 'budgetTool' }] });
  return raised;
}

/** An env step: a wait that opened during the step before is open from now on. */
const env = (fn: Effect) =>
  ({
    actions: effect((c, e) => {
      if (c.waitOpen === 'opening') c.waitOpen = true;
      return fn(c, e);
    }),
  });
const raise = (type: string, extra: Record<string, unknown> = {}) => env(() => [{ type, ...extra }]);

/** Root handlers of the env events: each raises the chart events the runtime would get. */
export const envHandlers = {
  'env.launch': env((c, e) => {
    c.profile = e.profile as ProfileName;
    const steering: Raised[] = profile(c).steered
      ? [
          { type: 'steer.add', queue: 'steer', id: 'steer_1' },
          { type: 'steer.add', queue: 'follow_up', id: 'followup_2' },
          { type: 'steer.add', queue: 'steer', id: 'steer_3' },
          { type: 'steer.remove', id: 'steer_3' },
        ]
      : [];
    return [...steering, ...(profile(c).suspendEarly ? [{ type: 'SUSPEND' }] : []), ...(profile(c).cancelFirst ? [{ type: 'CANCEL' }] : []), { type: 'START' }];
  }),
  'env.loadOk': raise('xstate.done.actor.restore'),
  'env.loadFail': raise('xstate.error.actor.restore', { error: 'load failed' }),
  'env.reply': env((_c, e) => [{ type: 'model.replied', output: { reply: e.reply } }]),
  'env.modelFail': raise('model.failed', { error: 'model failed' }),
  'env.approve': raise('xstate.done.actor.approval', { output: { approved: true } }),
  'env.deny': raise('xstate.done.actor.approval', { output: { approved: false } }),
  'env.approveBadEdits': raise('xstate.done.actor.approval', { output: { approved: true, badEdits: true } }),
  'env.settle': env((c, e) => settleStep(c, e.index as number)),
  'env.storeOk': raise('checkpoint.saved'),
  // A failed write is reported by the run's log as a message; the run fails at once (its checkpoint wait is stopped).
  'env.storeFail': raise('log.failed', { error: 'write failed' }),
  'env.sessionOk': raise('xstate.done.actor.session'),
  'env.sessionFail': raise('xstate.error.actor.session', { error: 'write failed' }),
  'env.cancel': raise('CANCEL'),
  // The shouldStopAfterTurn hook answers (gate 'afterTurn:<turn>'): stop, go on, or throw.
  'env.stopAfterTurn': raise('xstate.done.actor.afterTurn', { output: true }),
  'env.goOnAfterTurn': raise('xstate.done.actor.afterTurn', { output: false }),
  'env.afterTurnThrows': raise('xstate.error.actor.afterTurn', { error: 'hook broke' }),
  // The plugin's setup returns or throws (gate 'plugins').
  'env.pluginsReady': raise('xstate.done.actor.pluginSetup'),
  'env.pluginSetupThrows': raise('xstate.error.actor.pluginSetup', { error: 'setup broke' }),
  // The resolveToolCall hook answers for the turn's calls (gate 'resolve:<turn>'), leaving them as they are.
  'env.resolve': raise('xstate.done.actor.resolve', { output: [] }),
  // The run-end checks (gate 'end'): the guarded profile's guardrail trips; the hooked profile's onRunEnd continues once.
  // The input guardrail decides; in turn.ending the run-end check was only waiting for it.
  'env.guardPass': env((_c, e) => [{ type: 'guardrail.passed' }, ...(e.ending ? [{ type: 'xstate.done.actor.runEnd', output: [] }] : [])]),
  'env.guardTrip': raise('guardrail.tripped', { error: 'tripped' }),
  'env.endDone': env((c) => {
    if (profile(c).guarded) return [{ type: 'xstate.error.actor.runEnd', error: 'tripped' }];
    return [{ type: 'xstate.done.actor.runEnd', output: c.ends++ === 0 ? ['more'] : [] }];
  }),
};
