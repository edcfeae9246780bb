import type { Agent } from '../agent.js';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { AgentToolOptions } from '../handoff/agent-tool.js';
import { CoverageRecorder, reachableAgents } from './coverage.js';
import type { Choice, Exploration, ExploredPath, ExploreOptions, Violation } from './explore-types.js';
import { builtInViolations, userVerdict } from './invariants.js';
import { pathName, stepOf } from './path-steps.js';
import { runPath, type PathRecord, type PathSettings } from './path-run.js';

const EXPLORE_KEYS = optionKeys<ExploreOptions>({
  input: true,
  replies: true,
  arguments: true,
  tools: true,
  maxCallsPerRun: true,
  maxChoices: true,
  maxPaths: true,
  cancels: true,
  cancelInStates: true,
  modelFailures: true,
  invariants: true,
  runOptions: true,
  pathTimeoutMs: true,
});

/** The default turn limit of a run and of an agent tool's sub-run (RunOptions.maxTurns, AgentToolOptions.maxTurns). */
const DEFAULT_MAX_TURNS = 10;

/**
 * Explores every path of the agent system that starts at `agent`, on the real runtime and the
 * real run chart, with no model and no API key: every agent reached by handoff or as a tool
 * gets a scripted model whose replies are choices (a text reply, a call of each of its tools,
 * or its script from `options.replies`), and every plain tool's attempts are choices too (it
 * returns, throws, times out, waits for an event that arrives or not; see `ToolOutcome`).
 * Approvals are approved and denied, and a cancel is tried at every choice point. Your agents
 * and tools are copied, never changed; real tool code runs only where `options.tools` says
 * `'real'`.
 *
 * Paths are run one at a time, depth-first, each from the start: a path replays the choices
 * of the one it branches from and then takes first options (so path 1 is the shortest way
 * through: every model answers with text). Each path is checked against the built-in
 * invariants (`INVARIANTS`) and `options.invariants`.
 *
 * @returns every path with its events and violations, the failures shortest first, and the
 *   chart coverage of all paths.
 * @throws UserError for unknown or malformed options, or an agent system that cannot be copied;
 *   ExplorationNondeterminism (a UserError) when the same choices led elsewhere on a rerun.
 */
export async function exploreAgent(agent: Agent, options: ExploreOptions = {}): Promise<Exploration> {
  checkOptionKeys(options, EXPLORE_KEYS, 'exploreAgent');
  const settings: PathSettings = {
    options,
    maxCallsPerRun: count('maxCallsPerRun', options.maxCallsPerRun, 2, 0),
    maxChoices: count('maxChoices', options.maxChoices, 24, 0),
    pathTimeoutMs: count('pathTimeoutMs', options.pathTimeoutMs, 10_000, 1),
  };
  const maxPaths = count('maxPaths', options.maxPaths, 1000, 1);
  for (const inv of options.invariants ?? []) {
    if (typeof inv?.name !== 'string' || typeof inv.check !== 'function') throw new UserError('exploreAgent: each invariant needs a name (a string) and a check (a function of the path).');
  }
  const turnLimit = turnLimits(agent, options.runOptions?.maxTurns ?? DEFAULT_MAX_TURNS);
  const coverage = new CoverageRecorder(agent);
  const started = performance.now();
  const paths: ExploredPath[] = [];
  // Depth-first: each entry is the choices to replay, ending in the one option that is new.
  const pending: Choice[][] = [[]];
  while (pending.length > 0 && paths.length < maxPaths) {
    const prefix = pending.pop()!;
    const record = await runPath(agent, prefix, settings, coverage);
    paths.push(explored(paths.length + 1, record, turnLimit, options));
    // Every option not taken at a choice point this path made past its prefix is a path still to run.
    const branches: Choice[][] = [];
    for (let i = prefix.length; i < record.choices.length; i++) {
      const point = record.choices[i]!;
      for (let option = 1; option < point.options.length; option++) branches.push([...record.choices.slice(0, i), { ...point, took: option }]);
    }
    pending.push(...branches.reverse());
  }
  const failures = paths.filter((p) => p.violations.length > 0).sort((a, b) => a.steps.length - b.steps.length || a.index - b.index);
  return { paths, failures, truncated: pending.length > 0, coverage: coverage.report(), durationMs: Math.round(performance.now() - started) };
}

function explored(index: number, record: PathRecord, turnLimit: (runId: string, agent: string, isRoot: boolean) => number, options: ExploreOptions): ExploredPath {
  const violations: Violation[] = builtInViolations({ events: record.events, log: record.log, turnLimit, budgetOf: (runId) => record.budgets.of(runId) });
  if (record.hung) violations.unshift({ invariant: 'runs end', message: `the run did not end within ${options.pathTimeoutMs ?? 10_000} ms (the explorer cancelled it)` });
  const path: ExploredPath = {
    index,
    name: pathName(record.choices),
    choices: record.choices,
    events: record.events,
    steps: record.events.map(stepOf),
    outcome: record.outcome,
    result: record.result,
    violations,
  };
  for (const inv of options.invariants ?? []) {
    const message = userVerdict(inv.check, path);
    if (message !== undefined) violations.push({ invariant: inv.name, message });
  }
  return path;
}

/** Turn limits: the root's, and each agent tool's sub-run's by its agent's name. */
function turnLimits(agent: Agent, rootLimit: number): (runId: string, firstAgent: string, isRoot: boolean) => number {
  const byAgent = new Map<string, number>();
  for (const a of reachableAgents(agent)) {
    for (const t of a.tools) {
      if (!t.agentTool) continue;
      const limit = (t.agentTool.options as AgentToolOptions | undefined)?.maxTurns ?? DEFAULT_MAX_TURNS;
      byAgent.set(t.agentTool.agentName, Math.max(limit, byAgent.get(t.agentTool.agentName) ?? 0));
    }
  }
  return (_runId, firstAgent, isRoot) => (isRoot ? rootLimit : (byAgent.get(firstAgent) ?? DEFAULT_MAX_TURNS));
}

function count(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new UserError(`exploreAgent: ${name} must be an integer >= ${min}, got ${String(value)}.`);
  return value;
}
