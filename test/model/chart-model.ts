import { createEmptyActor, enqueueActions, setup, type AnyMachineSnapshot, type AnyStateMachine, type EventObject, type InspectionEvent } from 'xstate';
import { runMachine } from '../../src/machines/run.machine.js';
import { abstractActions, abstractGuards, initialContext, type ModelContext } from './chart-semantics.js';
import { envHandlers } from './chart-env.js';
import { invokeFreeConfig, transitionKey, walkChart } from './chart-walk.js';
import { PROFILES, type ProfileName, type ReplyKind } from './chart-spec.js';

/**
 * The abstract model of a run, DERIVED FROM THE REAL CHART: the states, transitions, guard
 * names and action names are `runMachine.config` itself, with each invoke replaced by its
 * done/error events (chart-walk.ts). Only the meaning of each named guard and action is
 * ours: chart-semantics.ts evaluates them over a small abstract state, as docs/architecture.md, "The chart", states
 * the rules (never by calling src/rules, so a broken rule disagrees with the model).
 *
 * What the test does to a run is an `env.*` event (launch with a profile, the model
 * replies, a tool body returns, an approval is decided, a store write lands…). Its handler
 * at the root raises the chart events the runtime would see, in the runtime's order.
 * xstate/graph traverses this machine; every env step is then executed on the real runtime.
 */

export type EnvEvent =
  | { type: 'env.launch'; profile: ProfileName }
  | { type: 'env.loadOk' }
  | { type: 'env.loadFail' }
  | { type: 'env.reply'; reply: ReplyKind }
  | { type: 'env.modelFail' }
  | { type: 'env.approve' }
  | { type: 'env.deny' }
  | { type: 'env.approveBadEdits' }
  | { type: 'env.settle'; index: number }
  | { type: 'env.storeOk' }
  | { type: 'env.storeFail' }
  | { type: 'env.sessionOk' }
  | { type: 'env.sessionFail' }
  | { type: 'env.cancel' }
  /** The shouldStopAfterTurn hook answers true (soft stop), false, or throws. */
  | { type: 'env.stopAfterTurn' }
  | { type: 'env.goOnAfterTurn' }
  | { type: 'env.afterTurnThrows' }
  /** The main agent's plugin setup returns, or throws. */
  | { type: 'env.pluginsReady' }
  | { type: 'env.pluginSetupThrows' }
  /** The resolveToolCall hook answers (no rewrite). */
  | { type: 'env.resolve' }
  | { type: 'env.endDone' }
  /** `ending`: the run-end check was only waiting for the guardrail, so it finishes too. */
  | { type: 'env.guardPass'; ending: boolean }
  | { type: 'env.guardTrip' };

export type ModelSnapshot = Omit<AnyMachineSnapshot, 'context'> & { readonly context: ModelContext };

const chart = walkChart(runMachine);

/** Names the chart uses that the abstract semantics do not define: the chart grew a rule the model does not know yet. */
export function missingSemantics(): string[] {
  return [
    ...[...chart.guards].filter((g) => !(g in abstractGuards)).map((g) => `guard ${g}`),
    ...[...chart.actions].filter((a) => !(a in abstractActions)).map((a) => `action ${a}`),
  ];
}

function buildModel(): AnyStateMachine {
  const config = invokeFreeConfig(runMachine.config as never) as Record<string, unknown> & { on?: Record<string, unknown> };
  // Unknown names would make XState skip an action silently: wrap them so a gap throws.
  const actions = Object.fromEntries(
    [...chart.actions].map((name) => [name, abstractActions[name] ?? enqueueActions(() => { throw new Error(`no abstract semantics for action ${name}`); })]),
  );
  return setup({ guards: abstractGuards as never, actions: actions as never }).createMachine({
    ...(config as object),
    context: initialContext(),
    on: { ...(config.on ?? {}), ...envHandlers },
  } as never) as unknown as AnyStateMachine;
}

export const modelMachine = buildModel();

// A private actor scope whose system reports microsteps to us: a pure `machine.transition`
// then tells which chart transitions one env event took.
const scopeActor = createEmptyActor();
let collecting: string[] | undefined;
scopeActor.system.inspect({
  next: (event: InspectionEvent) => {
    if (event.type !== '@xstate.microstep' || !collecting) return;
    for (const t of event._transitions) if (!t.eventType.startsWith('env.')) collecting.push(transitionKey(t));
  },
});
const scope = {
  self: scopeActor,
  logger: () => undefined,
  id: 'model',
  sessionId: 'model',
  defer: () => undefined,
  system: scopeActor.system,
  stopChild: () => undefined,
  emit: () => undefined,
  actionExecutor: () => undefined,
} as never;

export function initialSnapshot(): ModelSnapshot {
  return modelMachine.getInitialSnapshot(scope) as unknown as ModelSnapshot;
}

/** One env event on the model: the next state and the chart transitions taken, in order. */
export function stepModel(snapshot: ModelSnapshot, event: EnvEvent): { next: ModelSnapshot; transitions: string[] } {
  const transitions: string[] = [];
  collecting = transitions;
  try {
    const next = modelMachine.transition(snapshot as AnyMachineSnapshot, event as EventObject, scope) as unknown as ModelSnapshot;
    return { next, transitions };
  } finally {
    collecting = undefined;
  }
}

const PROFILE_NAMES = (Object.keys(PROFILES) as ProfileName[]).filter((p) => !(PROFILES[p] as { explicit?: boolean }).explicit);

/** The env events the test can cause in `snapshot` (only where the runtime is waiting for them). */
export function envEvents(snapshot: ModelSnapshot): EnvEvent[] {
  if (snapshot.status !== 'active') return [];
  if (snapshot.matches('idle')) return PROFILE_NAMES.map((profile) => ({ type: 'env.launch', profile }));
  const c = snapshot.context;
  const out: EnvEvent[] = [];
  if (snapshot.matches('restoring')) out.push({ type: 'env.loadOk' }, { type: 'env.loadFail' });
  if (snapshot.matches({ turn: 'model' })) {
    const replies: readonly ReplyKind[] = (PROFILES[c.profile!] as { replies?: Record<number, readonly ReplyKind[]> }).replies?.[c.turn] ?? [];
    out.push(...replies.map((reply): EnvEvent => ({ type: 'env.reply', reply })), { type: 'env.modelFail' });
  }
  if (snapshot.matches({ turn: { executing: 'approvalWait' } })) out.push({ type: 'env.approve' }, { type: 'env.deny' }, { type: 'env.approveBadEdits' });
  c.slots.forEach((s, index) => {
    if (s.state === 'dispatched') out.push({ type: 'env.settle', index });
  });
  if (snapshot.matches({ turn: 'checkpoint' }) || snapshot.matches({ stopping: 'checkpoint' }) || snapshot.matches('suspending')) out.push({ type: 'env.storeOk' }, { type: 'env.storeFail' });
  if (snapshot.matches({ turn: 'pluginSetup' })) out.push({ type: 'env.pluginsReady' }, { type: 'env.pluginSetupThrows' });
  if (snapshot.matches({ turn: 'afterTurn' })) out.push({ type: 'env.stopAfterTurn' }, { type: 'env.goOnAfterTurn' }, { type: 'env.afterTurnThrows' });
  if (snapshot.matches({ turn: { executing: 'resolving' } })) out.push({ type: 'env.resolve' });
  if (snapshot.matches('savingSession')) out.push({ type: 'env.sessionOk' }, { type: 'env.sessionFail' });
  const guarded = (PROFILES[c.profile!] as { inputGuarded?: boolean }).inputGuarded === true;
  if (snapshot.matches('ending') && !(guarded && c.guardPending)) out.push({ type: 'env.endDone' });
  if (c.guardPending) out.push({ type: 'env.guardPass', ending: snapshot.matches('ending') }, { type: 'env.guardTrip' });
  out.push({ type: 'env.cancel' });
  return out;
}

/** The state as far as the future is concerned (the logs are history); final states by value only. */
export function serializeModel(snapshot: ModelSnapshot): string {
  if (snapshot.status !== 'active') return `final ${JSON.stringify(snapshot.value)}`;
  const { log: _log, subLog: _subLog, ...rest } = snapshot.context;
  return JSON.stringify([snapshot.value, rest]);
}

export const describeEvent = (e: EnvEvent): string =>
  e.type === 'env.launch' ? `launch(${e.profile})` : e.type === 'env.reply' ? `reply(${e.reply})` : e.type === 'env.settle' ? `settle(${e.index})` : e.type.slice(4);
