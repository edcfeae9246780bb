import type { InspectionEvent } from 'xstate';
import { runMachine, type RunMachine } from '../../src/machines/run.machine.js';
import { RunHandle } from '../../src/runtime/runner.js';
import type { RunEvent } from '../../src/types.js';
import type { ChartPath, PredictedStep } from './chart-paths.js';
import type { ModelSnapshot } from './chart-model.js';
import { profileOf } from './chart-spec.js';
import { transitionKey } from './chart-walk.js';
import { ROOT_ID, buildWorld, label, type World } from './chart-world.js';

/**
 * Executes one model path on the real runtime (RunHandle with an explicit machine, so
 * `.provide()` mutants go through the same wiring as Runner.stream). Each env step releases
 * one held thing, lets the run settle, then compares with the model's prediction:
 *   1. the root run's chart transitions (from `@xstate.microstep` inspection), exactly;
 *   2. the root run's events, as labels, exactly;
 *   3. the sub-runs' terminal events, exactly.
 * At the end: the run's result, and the stream invariants of every run in the tree.
 */

/** The runtime did something else than the model says. */
export class ModelMismatch extends Error {
  override name = 'ModelMismatch';
}

/** A stream invariant broke (whatever the model says). */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  constructor(readonly violations: readonly string[]) {
    super(violations.join('; '));
  }
}

export interface Execution {
  readonly events: readonly RunEvent[];
  /** Chart transitions taken by every run actor of the tree (root and sub-runs). */
  readonly taken: ReadonlySet<string>;
  /** Chart state ids any run actor of the tree was in. */
  readonly visited: ReadonlySet<string>;
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const isTerminal = (e: RunEvent): boolean => e.type === 'run_completed' || e.type === 'run_failed' || e.type === 'run_suspended';
const show = (xs: readonly string[]): string => (xs.length ? xs.map((x) => `\n      ${x}`).join('') : ' (none)');

function need(ok: boolean, message: string): asserts ok {
  if (!ok) throw new ModelMismatch(message);
}

class PathRun {
  world: World | undefined;
  handle: RunHandle | undefined;
  readonly events: RunEvent[] = [];
  readonly root: string[] = [];
  readonly taken = new Set<string>();
  readonly visited = new Set<string>();
  readerDone = false;

  constructor(private readonly machine: RunMachine) {}

  private readonly inspect = (ev: InspectionEvent): void => {
    if (ev.type !== '@xstate.microstep') return;
    for (const node of (ev.snapshot as { _nodes?: Array<{ id: string }> })._nodes ?? []) this.visited.add(node.id);
    for (const t of ev._transitions) {
      this.visited.add(t.source.id);
      const key = transitionKey(t);
      this.taken.add(key);
      if ((ev.actorRef as { id?: string }).id === ROOT_ID) this.root.push(key);
    }
  };

  private launch(profile: Parameters<typeof buildWorld>[0], cancelFirst: boolean): void {
    const world = (this.world = buildWorld(profile));
    const handle = (this.handle = new RunHandle(world.agent, 'go', { ...world.options, inspect: this.inspect }, this.machine));
    const actor = handle.actor;
    if (world.store) world.store.holdWhile = () => actor.getSnapshot().matches({ turn: 'checkpoint' }) || actor.getSnapshot().matches({ stopping: 'checkpoint' }) || actor.getSnapshot().matches('suspending');
    if (profileOf(profile).steered) {
      handle.steer('s1');
      handle.followUp('f1');
      handle.unsteer(handle.steer('s2'));
    }
    if (profileOf(profile).suspendEarly) handle.suspend();
    if (cancelFirst) handle.cancel('model test');
    void (async () => {
      for await (const event of handle) this.events.push(event);
      this.readerDone = true;
    })();
  }

  /** Macrotask turns until nothing observable changes for three of them. */
  async flush(): Promise<void> {
    const progress = (): string => `${this.events.length}/${this.root.length}/${this.taken.size}/${String(this.readerDone)}`;
    let last = '';
    for (let stable = 0, round = 0; stable < 3 && round < 200; round++) {
      await tick();
      const now = progress();
      stable = now === last ? stable + 1 : 0;
      last = now;
    }
  }

  /** Does on the real run what env event `step.event` says; `prev` is the model state before it. */
  async perform(step: PredictedStep, prev: ModelSnapshot): Promise<void> {
    const e = step.event;
    const w = this.world;
    w?.store?.hold();
    const c = prev.context;
    const open = (key: string, error?: Error, value?: unknown): void => {
      need(w!.gates.isWaiting(key), `${e.type}: nothing waits at ${key}`);
      w!.gates.open(key, error, value);
    };
    switch (e.type) {
      case 'env.launch':
        this.launch(e.profile, profileOf(e.profile).cancelFirst === true);
        break;
      case 'env.loadOk':
      case 'env.loadFail':
        open('load', e.type === 'env.loadFail' ? new Error('disk gone') : undefined);
        break;
      case 'env.reply':
      case 'env.modelFail':
        need(w!.model.waiting, `${e.type}: no model request is waiting`);
        w!.model.answer(e.type === 'env.reply' ? { reply: e.reply, turn: c.turn } : new Error('model down'));
        break;
      case 'env.approve':
      case 'env.approveBadEdits':
      case 'env.deny': {
        const pending = this.handle!.approvals.pending();
        const id = c.slots[c.cursor]!.id;
        need(pending.length === 1 && pending[0]!.callId === id, `${e.type}: expected one approval waiting for ${id}, got [${pending.map((p) => p.callId).join(',')}]`);
        if (e.type === 'env.approve') this.handle!.approvals.approve(pending[0]!.approvalId);
        else if (e.type === 'env.approveBadEdits') this.handle!.approvals.approve(pending[0]!.approvalId, { args: 5 });
        else this.handle!.approvals.reject(pending[0]!.approvalId);
        break;
      }
      case 'env.settle': {
        const slot = c.slots[e.index]!;
        open(slot.kind === 'waiter' ? 'hold' : `call:${slot.id}`);
        break;
      }
      case 'env.storeOk':
        w!.store!.land();
        break;
      case 'env.storeFail':
        w!.store!.fail();
        break;
      case 'env.sessionOk':
      case 'env.sessionFail':
        open('session', e.type === 'env.sessionFail' ? new Error('session down') : undefined);
        break;
      case 'env.cancel':
        this.handle!.cancel('model test');
        // A write in flight still completes after a cancel (as on a real store); the run's result waits for it.
        w?.store?.land();
        break;
      case 'env.guardPass':
      case 'env.guardTrip':
        // A throwing guardrail trips (GuardrailTripped), so the gate's error is the trip.
        open('guard', e.type === 'env.guardTrip' ? new Error('policy says no') : undefined);
        break;
      case 'env.stopAfterTurn':
      case 'env.goOnAfterTurn':
      case 'env.afterTurnThrows':
        open(`afterTurn:${c.turn}`, e.type === 'env.afterTurnThrows' ? new Error('hook broke') : undefined, e.type === 'env.stopAfterTurn');
        break;
      case 'env.pluginsReady':
      case 'env.pluginSetupThrows':
        open('plugins', e.type === 'env.pluginSetupThrows' ? new Error('setup broke') : undefined);
        break;
      case 'env.endDone':
        open(`end:${c.ends + 1}`);
        break;
      case 'env.resolve':
        open(`resolve:${c.turn}`);
        break;
    }
    await this.flush();
  }

  /** What the step did, against the prediction. */
  check(step: PredictedStep, mark: { root: number; events: number }, where: string): void {
    const transitions = this.root.slice(mark.root);
    need(same(transitions, step.transitions), `${where}: root chart transitions\n    observed${show(transitions)}\n    expected${show(step.transitions)}`);
    const fresh = this.events.slice(mark.events);
    const labels = fresh.filter((ev) => ev.runId === ROOT_ID).flatMap((ev) => label(ev) ?? []);
    need(same(labels, step.labels), `${where}: root events\n    observed${show(labels)}\n    expected${show(step.labels)}`);
    const subs = fresh.filter((ev) => ev.runId !== ROOT_ID && isTerminal(ev)).map((ev) => `${ev.agent}:${label(ev)}`);
    need(same(subs, step.subLabels), `${where}: sub-run endings\n    observed${show(subs)}\n    expected${show(step.subLabels)}`);
  }

  async finish(final: ModelSnapshot): Promise<void> {
    need(this.readerDone, 'the model reached a final state but the event stream did not end');
    const c = final.context;
    let outcome: string;
    try {
      const result = await this.handle!.result();
      outcome = `completed ${JSON.stringify(result.output)}`;
    } catch (error) {
      outcome = `failed ${(error as Error).name}`;
    }
    const want = final.value === 'completed' ? `completed ${JSON.stringify(c.output)}` : final.value === 'suspended' ? 'failed RunSuspended' : `failed ${c.failure}`;
    need(outcome === want, `outcome: observed ${outcome}, expected ${want}`);
    const violations = streamViolations(this.events);
    if (violations.length) throw new InvariantViolation(violations);
  }

  /** Ends the run if a check failed midway. Held tool bodies stay held: opening them after the run ended would only run tool code for nobody. */
  dispose(): void {
    this.handle?.cancel('model test cleanup');
  }
}

/** Runs `path` on `machine`; throws ModelMismatch or InvariantViolation with the step that exposed it. */
export async function executeChartPath(path: ChartPath, machine: RunMachine = runMachine): Promise<Execution> {
  const run = new PathRun(machine);
  let prev: ModelSnapshot | undefined;
  try {
    for (const [i, step] of path.steps.entries()) {
      const mark = { root: run.root.length, events: run.events.length };
      await run.perform(step, prev ?? (step.state as ModelSnapshot));
      run.check(step, mark, `step ${i + 1} (${path.name.split(' → ')[i]})`);
      prev = step.state;
    }
    await run.finish(path.steps.at(-1)!.state);
    return { events: run.events, taken: run.taken, visited: run.visited };
  } catch (error) {
    if (error instanceof Error) error.message = `${error.message}\n  path: ${path.name}`;
    throw error;
  } finally {
    run.dispose();
    await run.flush();
  }
}

const GATED_TOOLS = new Set(['gated', 'gated_alone']);

/**
 * Stream invariants of every run in the tree, whatever the path: the stream starts with the
 * root's run_started (or, for a run that failed while loading its stored state, is exactly
 * its run_failed) and ends with the root's terminal event; each run has exactly one
 * terminal event and nothing after it; each call gets exactly one result (a parked run's
 * calls that never started get theirs when it is resumed), at most one start
 * (before its result, after its approval when it needs one); turns start in order and end
 * the turn that started.
 */
export function streamViolations(events: readonly RunEvent[]): string[] {
  const v: string[] = [];
  const failedLoading = events.length === 1 && events[0]!.type === 'run_failed';
  if (!failedLoading && (events[0]?.type !== 'run_started' || events[0].runId !== ROOT_ID)) v.push('the stream does not start with the root run_started');
  const last = events.at(-1);
  if (!last || last.runId !== ROOT_ID || !isTerminal(last)) v.push('the stream does not end with the root terminal event');
  type RunView = { ended?: string; turn: number; open: boolean; requested: Set<string>; approved: Set<string>; started: Set<string>; results: Map<string, number> };
  const runs = new Map<string, RunView>();
  for (const ev of events) {
    let r = runs.get(ev.runId);
    if (!r) runs.set(ev.runId, (r = { turn: 0, open: false, requested: new Set(), approved: new Set(), started: new Set(), results: new Map() }));
    const at = `${ev.runId}: ${ev.type}`;
    if (r.ended) v.push(`${at} after ${r.ended}`);
    const key = 'call' in ev && 'turn' in ev ? `${ev.turn}:${(ev.call as { id: string }).id}` : '';
    switch (ev.type) {
      case 'run_completed':
      case 'run_failed':
      case 'run_suspended':
        r.ended = ev.type;
        break;
      case 'turn_started':
        if (ev.turn <= r.turn && !(r.turn === 0)) v.push(`${at} ${ev.turn} after turn ${r.turn}`);
        r.turn = ev.turn;
        r.open = true;
        break;
      case 'turn_ended':
        if (!r.open || ev.turn !== r.turn) v.push(`${at} ${ev.turn} while turn ${r.turn} is ${r.open ? 'open' : 'closed'}`);
        r.open = false;
        break;
      case 'message_completed':
        for (const call of ev.message.toolCalls) r.requested.add(`${ev.turn}:${call.id}`);
        break;
      case 'approval_required':
        r.approved.add(key);
        break;
      case 'tool_call_started':
        if (r.started.has(key)) v.push(`${at} twice for ${key}`);
        if (r.results.has(key)) v.push(`${at} ${key} after its result`);
        if (GATED_TOOLS.has(ev.call.name) && !r.approved.has(key)) v.push(`${at} ${key} without approval_required`);
        r.started.add(key);
        break;
      case 'tool_call_completed':
        r.results.set(key, (r.results.get(key) ?? 0) + 1);
        if (r.results.get(key)! > 1) v.push(`${at} ${key} has ${r.results.get(key)} results`);
        break;
      default:
        break;
    }
  }
  for (const [runId, r] of runs) {
    if (!r.ended) v.push(`${runId}: no terminal event`);
    for (const key of new Set([...r.requested, ...r.started])) {
      // A parked run has nothing in flight; the calls it has not run get their results when it is resumed.
      if (r.results.has(key) || (r.ended === 'run_suspended' && !r.started.has(key))) continue;
      v.push(`${runId}: call ${key} has no result`);
    }
  }
  return v;
}
