/**
 * Token usage of a run tree from its events: per model turn, per run and per agent, and what
 * is left of a budget. Dependency-free: the inspector page imports it.
 */
import type { WireRunEvent } from './wire.js';

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  requests: number;
}

export interface TurnUsage extends TokenCounts {
  readonly runId: string;
  readonly agent: string;
  readonly turn: number;
}

export interface UsageSummary {
  /** One row per (run, turn), in the order the turns replied. */
  readonly turns: TurnUsage[];
  /** The run's own model usage (its sub-runs counted under their own ids). */
  readonly byRun: Map<string, TokenCounts>;
  readonly byAgent: Map<string, TokenCounts>;
  /** Every model reply of the tree. */
  readonly total: TokenCounts;
  /** Tool calls requested by the model, over the tree. */
  toolCalls: number;
}

/** Budget fields as `RunOptions.budget` takes them. */
export interface BudgetLimits {
  readonly maxInputTokens?: number;
  readonly maxOutputTokens?: number;
  readonly maxTotalTokens?: number;
  readonly maxToolCalls?: number;
  readonly maxDurationMs?: number;
}

export interface BudgetLine {
  readonly field: keyof BudgetLimits;
  readonly limit: number;
  readonly used: number;
  readonly left: number;
}

export function zeroCounts(): TokenCounts {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
}

function add(into: TokenCounts, usage: TokenCounts): void {
  into.inputTokens += usage.inputTokens;
  into.outputTokens += usage.outputTokens;
  into.totalTokens += usage.totalTokens;
  into.requests += usage.requests;
}

/**
 * Usage per model reply from `message_completed` events. Their `usage` is the run's running
 * total, which also counts what its sub-runs spent (reported up as they spend). So one
 * reply's own usage is the growth of its run's total since that run's previous reply, less
 * what its sub-runs spent meanwhile. The tree total is the sum of every reply's own usage
 * (and equals the root run's final total).
 */
export function summarizeUsage(events: readonly WireRunEvent[]): UsageSummary {
  const summary: UsageSummary = { turns: [], byRun: new Map(), byAgent: new Map(), total: zeroCounts(), toolCalls: 0 };
  const turnIndex = new Map<string, TurnUsage>();
  const lastTotal = new Map<string, TokenCounts>();
  /** Own usage of descendants since the run's last reply (it is inside the run's next total). */
  const folded = new Map<string, TokenCounts>();
  for (const event of events) {
    if (event.type !== 'message_completed') continue;
    const cumulative = counts(event.usage);
    const before = lastTotal.get(event.runId) ?? zeroCounts();
    const inside = folded.get(event.runId) ?? zeroCounts();
    const own: TokenCounts = {
      inputTokens: Math.max(0, cumulative.inputTokens - before.inputTokens - inside.inputTokens),
      outputTokens: Math.max(0, cumulative.outputTokens - before.outputTokens - inside.outputTokens),
      totalTokens: Math.max(0, cumulative.totalTokens - before.totalTokens - inside.totalTokens),
      requests: Math.max(1, cumulative.requests - before.requests - inside.requests),
    };
    lastTotal.set(event.runId, cumulative);
    folded.set(event.runId, zeroCounts());
    for (let parent = parentOf(event.runId); parent !== undefined; parent = parentOf(parent)) add(mapGet(folded, parent), own);
    const turn = Number(event.turn ?? 0);
    const key = `${event.runId}|${turn}`;
    let row = turnIndex.get(key);
    if (!row) {
      row = { runId: event.runId, agent: event.agent, turn, ...zeroCounts() };
      turnIndex.set(key, row);
      summary.turns.push(row);
    }
    add(row, own);
    add(mapGet(summary.byRun, event.runId), own);
    add(mapGet(summary.byAgent, event.agent), own);
    add(summary.total, own);
    summary.toolCalls += ((event.message as { toolCalls?: unknown[] } | undefined)?.toolCalls ?? []).length;
  }
  return summary;
}

function counts(usage: unknown): TokenCounts {
  const u = (usage ?? {}) as Partial<TokenCounts>;
  const input = Number(u.inputTokens ?? 0);
  const output = Number(u.outputTokens ?? 0);
  return { inputTokens: input, outputTokens: output, totalTokens: Number(u.totalTokens ?? input + output), requests: Number(u.requests ?? 0) };
}

/** `run_x/2.0` → `run_x`. */
function parentOf(runId: string): string | undefined {
  const cut = runId.lastIndexOf('/');
  return cut > 0 ? runId.slice(0, cut) : undefined;
}

function mapGet(map: Map<string, TokenCounts>, key: string): TokenCounts {
  let value = map.get(key);
  if (!value) {
    value = zeroCounts();
    map.set(key, value);
  }
  return value;
}

/** Each budget limit with what was used and what is left (never below 0). `elapsedMs` counts against maxDurationMs. */
export function budgetLeft(budget: BudgetLimits | undefined, used: TokenCounts, toolCalls: number, elapsedMs: number): BudgetLine[] {
  if (!budget) return [];
  const usedBy: Record<keyof BudgetLimits, number> = {
    maxInputTokens: used.inputTokens,
    maxOutputTokens: used.outputTokens,
    maxTotalTokens: used.totalTokens,
    maxToolCalls: toolCalls,
    maxDurationMs: elapsedMs,
  };
  const lines: BudgetLine[] = [];
  for (const field of Object.keys(usedBy) as Array<keyof BudgetLimits>) {
    const limit = budget[field];
    if (typeof limit !== 'number') continue;
    lines.push({ field, limit, used: usedBy[field], left: Math.max(0, limit - usedBy[field]) });
  }
  return lines;
}
