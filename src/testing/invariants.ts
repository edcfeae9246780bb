import type { Budget, RunEvent, Usage } from '../types.js';
import type { ExploredPath, Violation } from './explore-types.js';
import type { PathLogEntry } from './path-driver.js';

/** What the built-in invariants read: the path's events and the explorer's own log of it. */
export interface PathFacts {
  readonly events: readonly RunEvent[];
  readonly log: readonly PathLogEntry[];
  /** Turn limit per run id (the root's `maxTurns`, each sub-run's `asTool({ maxTurns })`). */
  readonly turnLimit: (runId: string, firstAgent: string, isRoot: boolean) => number;
  /** A run's own budget (the root's `runOptions.budget`, a sub-run's `asTool({ budget })`); undefined: none. */
  readonly budgetOf?: (runId: string) => Budget | undefined;
}

/** The first token limit `usage` (a run's running total, as its events report it) is over, as `<what> <used> > <limit>`. */
function overBudget(usage: Partial<Usage> | undefined, budget: Budget): string | undefined {
  const limits: Array<[keyof Usage, number | undefined, string]> = [
    ['inputTokens', budget.maxInputTokens, 'input tokens'],
    ['outputTokens', budget.maxOutputTokens, 'output tokens'],
    ['totalTokens', budget.maxTotalTokens, 'total tokens'],
  ];
  for (const [field, limit, label] of limits) if (limit !== undefined && (usage?.[field] ?? 0) > limit) return `${label} ${usage![field]} > ${limit}`;
  return undefined;
}

/** One built-in invariant: its name, what it promises, and its check (messages for each breach). */
export interface BuiltInInvariant {
  readonly name: string;
  readonly promise: string;
  readonly check: (facts: PathFacts) => string[];
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_suspended']);
const key = (runId: string, callId: string): string => `${runId}/${callId}`;

function byRun(events: readonly RunEvent[]): Map<string, RunEvent[]> {
  const runs = new Map<string, RunEvent[]>();
  for (const event of events) {
    const list = runs.get(event.runId) ?? [];
    list.push(event);
    runs.set(event.runId, list);
  }
  return runs;
}

/** Calls the runs' models asked for, by `runId/callId`, with their tool's name. */
function requestedCalls(events: readonly RunEvent[]): Map<string, string> {
  const calls = new Map<string, string>();
  for (const e of events) if (e.type === 'message_completed') for (const c of e.message.toolCalls) calls.set(key(e.runId, c.id), c.name);
  return calls;
}

const results = (events: readonly RunEvent[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const e of events) if (e.type === 'tool_call_completed') counts.set(key(e.runId, e.call.id), (counts.get(key(e.runId, e.call.id)) ?? 0) + 1);
  return counts;
};

/** The invariants every explored path is checked against, in this order. */
export const INVARIANTS: readonly BuiltInInvariant[] = [
  {
    name: 'one result per call',
    promise: 'every tool call a model asked for gets exactly one result (tool_call_completed), and no result comes for a call nobody asked for',
    check: ({ events }) => {
      const asked = requestedCalls(events);
      const got = results(events);
      const out: string[] = [];
      for (const [call, name] of asked) if ((got.get(call) ?? 0) !== 1) out.push(`call ${call} (${name}) has ${got.get(call) ?? 0} results`);
      for (const call of got.keys()) if (!asked.has(call)) out.push(`a result for ${call}, which no model asked for`);
      return out;
    },
  },
  {
    name: 'one terminal event per run',
    promise: 'every run of the tree starts once and ends once (run_completed, run_failed or run_suspended), with nothing of it after its end',
    check: ({ events }) => {
      const out: string[] = [];
      for (const [runId, list] of byRun(events)) {
        const starts = list.filter((e) => e.type === 'run_started').length;
        const ends = list.filter((e) => TERMINAL.has(e.type)).length;
        if (starts !== 1) out.push(`run ${runId} started ${starts} times`);
        if (ends !== 1) out.push(`run ${runId} ended ${ends} times`);
        else if (!TERMINAL.has(list[list.length - 1]!.type)) out.push(`run ${runId} has ${list[list.length - 1]!.type} after its end`);
      }
      return out;
    },
  },
  {
    name: 'approvals fail closed',
    promise: 'a gated call runs only once approved; a denied (or undecided) call never runs and gets an error result',
    check: ({ events, log }) => {
      const out: string[] = [];
      const asked = new Set(events.filter((e) => e.type === 'approval_required').map((e) => key(e.runId, (e as { call: { id: string } }).call.id)));
      const approved = new Set<string>();
      for (const entry of log) {
        if (entry.kind === 'decision' && entry.approved) approved.add(key(entry.runId, entry.callId));
        if (entry.kind !== 'tool') continue;
        const call = key(entry.runId, entry.callId);
        if ((asked.has(call) || entry.alwaysGated) && !approved.has(call)) out.push(`${entry.tool} ran for ${call} without an approval`);
      }
      for (const entry of log) {
        if (entry.kind !== 'decision' || entry.approved) continue;
        const result = events.find((e) => e.type === 'tool_call_completed' && e.runId === entry.runId && e.call.id === entry.callId);
        if (result && !(result as { isError: boolean }).isError) out.push(`denied call ${key(entry.runId, entry.callId)} got a result that is not an error`);
      }
      return out;
    },
  },
  {
    name: 'nothing runs after cancel',
    promise: 'once the run is cancelled, no model request and no tool attempt starts',
    check: ({ log }) => {
      const cancel = log.findIndex((e) => e.kind === 'cancel');
      if (cancel < 0) return [];
      return log.slice(cancel + 1).flatMap((e) => (e.kind === 'model' ? [`${e.agent} was asked after the cancel`] : e.kind === 'tool' ? [`${e.tool} ran for ${key(e.runId, e.callId)} after the cancel`] : []));
    },
  },
  {
    name: 'turn limits kept',
    promise: "no run starts more turns than its limit (the run's maxTurns, an agent tool's maxTurns)",
    check: ({ events, turnLimit }) => {
      const out: string[] = [];
      for (const [runId, list] of byRun(events)) {
        const start = list.find((e) => e.type === 'run_started');
        if (!start) continue;
        const limit = turnLimit(runId, start.agent, start.path.length === 1);
        const turns = list.filter((e) => e.type === 'turn_started').length;
        if (turns > limit) out.push(`run ${runId} (${start.agent}) started ${turns} turns, over its limit of ${limit}`);
      }
      return out;
    },
  },
  {
    name: 'budgets stop runs',
    promise: "a run whose token use (its replies and its sub-runs', as its events total it) goes over its own budget makes no model reply after that and does not complete: it fails with BudgetExceeded (or is cancelled)",
    check: ({ events, budgetOf }) => {
      const out: string[] = [];
      for (const [runId, list] of byRun(events)) {
        const budget = budgetOf?.(runId);
        if (!budget) continue;
        const replies = list.filter((e) => e.type === 'message_completed');
        const at = replies.findIndex((e) => overBudget(e.usage, budget) !== undefined);
        const end = list.find((e) => TERMINAL.has(e.type));
        const over = at >= 0 ? overBudget(replies[at]!.usage, budget) : end && 'usage' in end ? overBudget(end.usage as Usage, budget) : undefined;
        if (over === undefined) continue;
        if (at >= 0 && at < replies.length - 1) out.push(`run ${runId} made ${replies.length - 1 - at} model repl${replies.length - 2 === at ? 'y' : 'ies'} after going over its budget (${over})`);
        const stopped = end?.type === 'run_failed' && (end.error.name === 'BudgetExceeded' || end.error.name === 'RunCancelled');
        if (!stopped) out.push(`run ${runId} went over its budget (${over}) and ended with ${end ? (end.type === 'run_failed' ? `run_failed ${end.error.name}` : end.type) : 'no end'}`);
      }
      return out;
    },
  },
  {
    name: 'every wait ends',
    promise: 'every approval and wait that opened is decided, resolved or timed out, or withdrawn with its run (cancelled, or stored by a suspended run)',
    check: ({ events }) => {
      const out: string[] = [];
      const ended = new Map<string, RunEvent>();
      for (const e of events) if (TERMINAL.has(e.type)) ended.set(e.runId, e);
      const resolved = new Set(events.filter((e) => e.type === 'wait_resolved').map((e) => (e as { waitId: string }).waitId));
      const got = results(events);
      for (const e of events) {
        if (e.type !== 'approval_required' && e.type !== 'wait_opened') continue;
        const end = ended.get(e.runId);
        const withdrawn = end?.type === 'run_suspended' || (end?.type === 'run_failed' && end.error.name === 'RunCancelled');
        if (withdrawn) continue;
        if (e.type === 'approval_required' && !got.has(key(e.runId, e.call.id))) out.push(`approval ${e.approvalId} (${e.call.name}) was never decided`);
        if (e.type === 'wait_opened' && !resolved.has(e.waitId)) out.push(`wait ${e.waitId} (${e.call.name}) never ended`);
      }
      return out;
    },
  },
];

/** The path's breaches of the built-in invariants. */
export function builtInViolations(facts: PathFacts): Violation[] {
  return INVARIANTS.flatMap((inv) => inv.check(facts).map((message) => ({ invariant: inv.name, message })));
}

/** A user invariant's verdict as a violation message, or undefined when it holds. */
export function userVerdict(check: (path: ExploredPath) => string | boolean | undefined | void, path: ExploredPath): string | undefined {
  let verdict: ReturnType<typeof check>;
  try {
    verdict = check(path);
  } catch (error) {
    return `the check threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (verdict === false) return 'it does not hold';
  return typeof verdict === 'string' ? verdict : undefined;
}
