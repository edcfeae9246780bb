import { z } from 'zod';
import { RunCancelled, ToolError, UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { checkBudget } from '../runtime/budget-options.js';
import { errorText } from '../tools/render.js';
import { CallContext, portOf } from '../tools/call-context.js';
import { toolResult } from '../tools/result.js';
import { tool, type Tool } from '../tools/tool.js';
import type { Budget } from '../types.js';
import { agentToolName } from './slug.js';

export interface AgentToolOptions {
  /** Default `ask_<slug of the agent name>`. */
  name?: string;
  description?: string;
  /** Turn limit of the sub-run (default 10). */
  maxTurns?: number;
  /** The sub-run's own budget; its effective limit is also bounded by what the parent has left. */
  budget?: Budget;
}

const AGENT_TOOL_KEYS = optionKeys<AgentToolOptions>({ name: true, description: true, maxTurns: true, budget: true });

const agentToolParameters = z.object({ input: z.string().describe('The request for the agent.') });

/**
 * Runs `agent` (an Agent, typed structurally: the Agent class uses this module) as a child run
 * actor of the calling tool-call actor, through the run's port. Its events reach the root
 * stream with a longer path, its spend is reported to the parent run, and its failures (turn
 * limit, its own budget, model errors) come back as a tool error.
 */
export function agentAsTool(agent: { readonly name: string }, options: AgentToolOptions = {}): Tool {
  checkOptionKeys(options, AGENT_TOOL_KEYS, 'asTool');
  if (options.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns >= 1)) throw new UserError(`asTool: maxTurns must be a positive integer, got ${String(options.maxTurns)}.`);
  if (options.budget !== undefined) checkBudget(options.budget);
  const built = tool({
    name: options.name ?? agentToolName(agent.name),
    description: options.description ?? `Ask the ${agent.name} agent. Give it the whole request in 'input'.`,
    parameters: agentToolParameters,
    execute: async ({ input }, ctx) => {
      const port = portOf(ctx);
      if (!(ctx instanceof CallContext) || !port || !ctx.actor) throw new UserError('agent tools can only run inside a troupe run.');
      const subRunOptions = { ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}), ...(options.budget ? { budget: options.budget } : {}) };
      // The sub-run is a child run actor of this call's actor; its done event carries the outcome.
      const outcome = await port.runSubRun(agent, input, subRunOptions, ctx.key, ctx.actor, ctx.signal);
      if (outcome.status === 'completed') {
        return toolResult({ content: outcome.output, details: { runId: outcome.runId, agent: outcome.agent, turns: outcome.turns, usage: outcome.usage } });
      }
      // Sub-runs never park (only a root run suspends for approvals).
      if (outcome.status === 'suspended') throw new ToolError(`agent '${agent.name}' suspended unexpectedly`);
      // RunCancelled raised inside the sub-run cancels the whole tree.
      if (outcome.error instanceof RunCancelled) throw outcome.error;
      // The sub-run's own failure is recoverable for the parent: report it as a tool error.
      throw new ToolError(`agent '${agent.name}' failed: ${errorText(outcome.error)}`, { cause: outcome.error });
    },
  });
  // Marked so the inspector can draw the agent-as-tool edge.
  return { ...built, agentTool: { agentName: agent.name, agent, options } };
}
