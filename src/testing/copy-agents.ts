import { Agent } from '../agent.js';
import { UserError } from '../errors.js';
import { handoff, type HandoffOptions } from '../handoff/handoff.js';
import type { AgentToolOptions } from '../handoff/agent-tool.js';
import type { Model } from '../models/model.js';
import type { Tool } from '../tools/tool.js';

/** What a copy of each agent gets instead of its own: a model, each plain tool's replacement, and (optionally) a wrapper of each rebuilt agent tool. */
export interface AgentSwaps {
  model(agent: Agent): Model;
  tool(agent: Agent, tool: Tool): Tool;
  agentTool?(tool: Tool): Tool;
}

/**
 * A copy of the agent system reachable from `start` (handoffs, agents as tools), with each
 * agent's model and plain tools swapped and no approval handler (the explorer decides every
 * approval). Handoffs and agent tools are rebuilt around the copies with their own options,
 * so a handoff or sub-run lands on a copy too. The originals are not touched.
 * @throws UserError when an agent reaches itself through agents used as tools (a copy would need itself).
 */
export function copyAgentSystem(start: Agent, swaps: AgentSwaps): Agent {
  const copies = new Map<Agent, Agent>();
  const building = new Set<Agent>();
  const copy = (agent: Agent): Agent => {
    const done = copies.get(agent);
    if (done) return done;
    if (building.has(agent)) throw new UserError(`exploreAgent: agent '${agent.name}' reaches itself through agents used as tools; such a system cannot be explored.`);
    building.add(agent);
    const tools = agent.tools.map((t) => {
      const sub = t.agentTool?.agent;
      if (!(sub instanceof Agent)) return swaps.tool(agent, t);
      const rebuilt = copy(sub).asTool({ ...((t.agentTool!.options as AgentToolOptions | undefined) ?? {}), name: t.name, description: t.description });
      return swaps.agentTool ? swaps.agentTool(rebuilt) : rebuilt;
    });
    const twin = new Agent({
      name: agent.name,
      instructions: agent.instructions,
      model: swaps.model(agent),
      tools,
      defaultToolRetries: agent.defaultToolRetries,
      ...(agent.defaultToolTimeoutMs !== undefined ? { defaultToolTimeoutMs: agent.defaultToolTimeoutMs } : {}),
      maxToolOutputChars: agent.maxToolOutputChars,
      ...(agent.toolResultRenderer ? { toolResultRenderer: agent.toolResultRenderer } : {}),
      toolExecution: agent.toolExecution,
      settings: agent.settings,
      hooks: agent.hooks,
      ...(agent.contextPolicy !== undefined ? { contextPolicy: agent.contextPolicy } : {}),
      ...(agent.outputType !== undefined ? { outputType: agent.outputType } : {}),
      inputGuardrails: agent.inputGuardrails,
      outputGuardrails: agent.outputGuardrails,
    });
    copies.set(agent, twin);
    building.delete(agent);
    // Handoffs may loop (a ⇄ b): the copy exists before its handoffs are copied.
    for (const entry of agent.handoffs) {
      if (entry instanceof Agent) twin.handoffs.push(copy(entry));
      else if (entry.handoff?.target instanceof Agent) {
        twin.handoffs.push(handoff(copy(entry.handoff.target), { ...((entry.handoff.options as HandoffOptions | undefined) ?? {}), name: entry.name, description: entry.description }));
      } else twin.handoffs.push(entry);
    }
    return twin;
  };
  return copy(start);
}
