import { z } from 'zod';
import type { Agent } from '../agent.js';
import { ToolError, UserError } from '../errors.js';
import { CallContext } from '../tools/call-context.js';
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

const agentToolParameters = z.object({ input: z.string().describe('The request for the agent.') });

/**
 * Runs `agent` as a child run actor of the calling tool-call actor. Its events reach the
 * root stream with a longer path, its spend is reported to the parent run, and its
 * failures (turn limit, its own budget, model errors) come back as a tool error.
 */
export function agentAsTool(agent: Agent, options: AgentToolOptions = {}): Tool {
  return tool({
    name: options.name ?? agentToolName(agent.name),
    description: options.description ?? `Ask the ${agent.name} agent. Give it the whole request in 'input'.`,
    parameters: agentToolParameters,
    execute: async ({ input }, ctx) => {
      if (!(ctx instanceof CallContext)) throw new UserError('agent tools can only run inside a troupe run.');
      const subRun = ctx.host.startSubRun(agent, input, { ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}), ...(options.budget ? { budget: options.budget } : {}) }, ctx);
      try {
        const result = await subRun.done;
        return toolResult({ content: result.output, details: { runId: result.runId, agent: result.agent, turns: result.turns, usage: result.usage } });
      } catch (error) {
        // The sub-run's own failure is recoverable for the parent: report it as a tool error.
        throw new ToolError(`agent '${agent.name}' failed: ${(error as Error).message}`, { cause: error });
      }
    },
  });
}
