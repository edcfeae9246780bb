/**
 * The run chart's state ids (`run.turn.model`, …), the one table everyone outside the chart
 * names its states by: the inspector page, the replay of a stored log, the states derived
 * from events and OpenTelemetry. test/run.statechart.test.ts checks that it lists exactly
 * the chart's states. Dependency-free: the inspector page imports it.
 */
export const RUN_STATE = {
  idle: 'run.idle',
  restoring: 'run.restoring',
  starting: 'run.starting',
  turn: 'run.turn',
  checkLimits: 'run.turn.checkLimits',
  pluginSetup: 'run.turn.pluginSetup',
  model: 'run.turn.model',
  executing: 'run.turn.executing',
  resolving: 'run.turn.executing.resolving',
  preflight: 'run.turn.executing.preflight',
  throttled: 'run.turn.executing.throttled',
  approvalWait: 'run.turn.executing.approvalWait',
  barrier: 'run.turn.executing.barrier',
  waitingForInFlight: 'run.turn.executing.barrier.waitingForInFlight',
  runningAlone: 'run.turn.executing.barrier.runningAlone',
  draining: 'run.turn.executing.draining',
  turnEnd: 'run.turn.turnEnd',
  afterTurn: 'run.turn.afterTurn',
  checkpoint: 'run.turn.checkpoint',
  handoff: 'run.turn.handoff',
  ending: 'run.ending',
  finishing: 'run.finishing',
  savingSession: 'run.savingSession',
  stopping: 'run.stopping',
  stoppingDraining: 'run.stopping.draining',
  stoppingSaving: 'run.stopping.saving',
  stoppingCheckpoint: 'run.stopping.checkpoint',
  suspending: 'run.suspending',
  completed: 'run.completed',
  failed: 'run.failed',
  cancelled: 'run.cancelled',
  suspended: 'run.suspended',
} as const;

export type RunStateId = (typeof RUN_STATE)[keyof typeof RUN_STATE];

/** The ids from the root down to `id`: `run`, `run.turn`, `run.turn.model` for `run.turn.model`. */
export function stateChain(id: string): string[] {
  return id.split('.').map((_, i, parts) => parts.slice(0, i + 1).join('.'));
}

/** A state id as the state value `snapshot.matches` takes: `run.turn.model` → `{ turn: 'model' }`. */
export function stateValueOf(id: string): string | Record<string, unknown> {
  const [, ...path] = id.split('.');
  let value: string | Record<string, unknown> = path.pop() ?? '';
  for (let i = path.length - 1; i >= 0; i--) value = { [path[i]!]: value };
  return value;
}
