import type { Agent } from '../agent.js';
import { RunHandle } from '../runtime/runner.js';
import { inspectionCallback } from '../runtime/run-options.js';
import type { RunEvent } from '../types.js';
import { copyAgentSystem } from './copy-agents.js';
import type { CoverageRecorder } from './coverage.js';
import type { Choice, ExploreOptions, PathOutcome } from './explore-types.js';
import { ExplorerModel } from './explorer-model.js';
import { PathBudgets } from './explorer-budget.js';
import { defaultOutcomes, scriptedTool } from './explorer-tools.js';
import { PathDriver, type PathLogEntry } from './path-driver.js';
import { StateCancels } from './state-cancels.js';

/** One path as it ran: the choices it made, its events, the explorer's log, how the root run ended. */
export interface PathRecord {
  readonly choices: readonly Choice[];
  readonly events: readonly RunEvent[];
  readonly log: readonly PathLogEntry[];
  readonly outcome: PathOutcome;
  readonly result: string;
  /** Set when the run had not ended after `pathTimeoutMs` (it was cancelled then). */
  readonly hung: boolean;
  /** Each run's own budget (the root's run option, a sub-run's agent tool's). */
  readonly budgets: PathBudgets;
}

export interface PathSettings {
  readonly options: ExploreOptions;
  readonly maxCallsPerRun: number;
  readonly maxChoices: number;
  readonly pathTimeoutMs: number;
}

/**
 * Runs `agent` (a fresh copy of its system, with explorer models and scripted tools) once on
 * the real runtime, taking the choices of `prefix` and then the first option of every new
 * choice point. Approvals are decided by the explorer as they open; an event wait chosen to
 * resolve is resolved when it opens. Every event reaches `coverage`.
 */
export async function runPath(agent: Agent, prefix: readonly Choice[], settings: PathSettings, coverage: CoverageRecorder): Promise<PathRecord> {
  const { options } = settings;
  const driver = new PathDriver(prefix, settings.maxChoices, options.cancels ?? true);
  const budgets = new PathBudgets(options.runOptions?.budget);
  const system = copyAgentSystem(agent, {
    model: (a) => new ExplorerModel(driver, a.name, options.replies?.[a.name], settings.maxCallsPerRun, options.arguments ?? {}, options.modelFailures ?? false, budgets),
    tool: (a, t) => scriptedTool(t, options.tools?.[t.name] ?? defaultOutcomes(a, t), driver, t.timeoutMs ?? a.defaultToolTimeoutMs),
    agentTool: (t) => budgets.watch(t),
  });
  const userInspect = inspectionCallback(options.runOptions?.inspect);
  const stateCancels = options.cancelInStates ? new StateCancels(driver) : undefined;
  const handle = new RunHandle(system, options.input ?? 'Hello.', {
    ...options.runOptions,
    inspect: (event) => {
      coverage.inspect(event);
      stateCancels?.inspect(event);
      userInspect?.(event);
    },
  });
  driver.attach((reason) => handle.cancel(reason));
  // Decided as each approval opens (not when its event is read), so the order of choices is the runtime's.
  handle.approvals.onOpened((approval) => {
    // A cancel is on its way: the approval stays undecided and is withdrawn with the run.
    if (driver.cancelling) return;
    const at = `approve ${approval.tool} ${approval.callId}`;
    const took = driver.choose(at, driver.withCancel(['approved', 'denied']));
    queueMicrotask(() => {
      if (took === 2) return driver.cancel(at);
      driver.log.push({ kind: 'decision', runId: approval.runId, callId: approval.callId, approved: took === 0 });
      if (took === 0) handle.approvals.approve(approval.approvalId);
      else handle.approvals.reject(approval.approvalId, 'denied by exploration');
    });
  });
  const events: RunEvent[] = [];
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    handle.cancel(`exploration: the path did not end within ${settings.pathTimeoutMs} ms`);
  }, settings.pathTimeoutMs);
  try {
    for await (const event of handle) {
      coverage.observe(event);
      if (event.type === 'text_delta' || event.type === 'reasoning_delta') continue;
      events.push(event);
      if (event.type === 'wait_opened') {
        const waitKey = `${event.runId}/${event.call.id}`;
        if (driver.resolveWhenOpen.has(waitKey)) handle.waits.resolve(event.waitId, driver.resolveWhenOpen.get(waitKey));
      }
    }
  } finally {
    clearTimeout(timer);
  }
  driver.checkReplayed();
  if (driver.failure) throw driver.failure;
  const ended = await handle.result().then(
    (r) => ({ outcome: 'completed' as const, result: r.output }),
    (error: Error) => ({ outcome: error.name === 'RunCancelled' ? ('cancelled' as const) : error.name === 'RunSuspended' ? ('suspended' as const) : ('failed' as const), result: `${error.name}: ${error.message}` }),
  );
  return { choices: driver.choices, events, log: driver.log, ...ended, hung, budgets };
}
