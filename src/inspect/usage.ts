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
  /** Summed over every model reply of that run (sub-runs counted under their own id). */
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

function add(into: TokenCounts, usage: Partial<TokenCounts>): void {
  const input = Number(usage.inputTokens ?? 0);
  const output = Number(usage.outputTokens ?? 0);
  into.inputTokens += input;
  into.outputTokens += output;
  into.totalTokens += Number(usage.totalTokens ?? input + output);
  // One model request per message_completed (its usage.requests field is not a per-reply count).
  into.requests += 1;
}

/** Sums `message_completed` usage (each is one model request's usage). */
export function summarizeUsage(events: readonly WireRunEvent[]): UsageSummary {
  const summary: UsageSummary = { turns: [], byRun: new Map(), byAgent: new Map(), total: zeroCounts(), toolCalls: 0 };
  const turnIndex = new Map<string, TurnUsage>();
  for (const event of events) {
    if (event.type !== 'message_completed') continue;
    const usage = (event.usage ?? {}) as Partial<TokenCounts>;
    const turn = Number(event.turn ?? 0);
    const key = `${event.runId}|${turn}`;
    let row = turnIndex.get(key);
    if (!row) {
      row = { runId: event.runId, agent: event.agent, turn, ...zeroCounts() };
      turnIndex.set(key, row);
      summary.turns.push(row);
    }
    add(row, usage);
    add(mapGet(summary.byRun, event.runId), usage);
    add(mapGet(summary.byAgent, event.agent), usage);
    add(summary.total, usage);
    summary.toolCalls += ((event.message as { toolCalls?: unknown[] } | undefined)?.toolCalls ?? []).length;
  }
  return summary;
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
