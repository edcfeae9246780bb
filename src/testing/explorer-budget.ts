import type { CallContext } from '../tools/call-context.js';
import type { Tool } from '../tools/tool.js';
import type { Budget, Usage } from '../types.js';
import type { AgentToolOptions } from '../handoff/agent-tool.js';

/**
 * The "over budget" outcome of an explored reply: the usage a reply reports so that its run
 * goes over its own token budget (one token past the tightest token limit), for the runtime to
 * stop the run as it would for a real model that spent too much. Undefined for a budget with
 * no token limit (tool-call limits are reached by explored calls; a time limit is not explored:
 * that would take real time).
 */
export function overBudgetUsage(budget: Budget | undefined): Partial<Usage> | undefined {
  if (!budget) return undefined;
  const output = [budget.maxOutputTokens, budget.maxTotalTokens].filter((n): n is number => n !== undefined);
  if (output.length > 0) {
    const tokens = Math.min(...output) + 1;
    return { inputTokens: 0, outputTokens: tokens, totalTokens: tokens };
  }
  if (budget.maxInputTokens === undefined) return undefined;
  const tokens = budget.maxInputTokens + 1;
  return { inputTokens: tokens, outputTokens: 0, totalTokens: tokens };
}

/** The run budgets of one path: the root's, and each sub-run's (its agent tool's `budget`), by run id. */
export class PathBudgets {
  private readonly subRuns = new Map<string, Budget>();

  constructor(private readonly root: Budget | undefined) {}

  /** The own budget of run `runId`: a sub-run's id has a `/` (`<parent>/<turn>.<index>`), the root's none. */
  of(runId: string): Budget | undefined {
    return runId.includes('/') ? this.subRuns.get(runId) : this.root;
  }

  /**
   * `tool` (an agent used as a tool) noting, as each call starts, the budget its sub-run will
   * have under the sub-run's id (`<run id>/<call key>`, as the runtime names it).
   */
  watch(tool: Tool): Tool {
    const budget = (tool.agentTool?.options as AgentToolOptions | undefined)?.budget;
    if (!budget) return tool;
    return {
      ...tool,
      execute: (args: unknown, ctx) => {
        this.subRuns.set(`${ctx.runId}/${(ctx as CallContext).key}`, budget);
        return tool.execute(args, ctx);
      },
    };
  }
}
