import { Agent } from '../agent.js';
import type { Tool } from '../tools/tool.js';

/** The agent called `name` among `start` and every agent reachable from it through handoffs. */
export function findAgent(start: Agent, name: string): Agent | undefined {
  return walk(start, false, (agent) => agent.name === name);
}

/**
 * The tool `toolName` of the agent called `agentName`, among `start` and every agent reachable
 * from it through handoffs and agents used as tools (a sub-run's agent). Undefined when no such
 * agent has such a tool.
 */
export function findAgentTool(start: Agent, agentName: string, toolName: string): Tool | undefined {
  let found: Tool | undefined;
  walk(start, true, (agent) => agent.name === agentName && (found = agent.toolTable().get(toolName)) !== undefined);
  return found;
}

/** Breadth-first over the agent graph until `stop` holds; returns that agent. */
function walk(start: Agent, intoAgentTools: boolean, stop: (agent: Agent) => boolean): Agent | undefined {
  const seen = new Set<Agent>();
  const queue: Agent[] = [start];
  while (queue.length > 0) {
    const agent = queue.shift()!;
    if (seen.has(agent)) continue;
    seen.add(agent);
    if (stop(agent)) return agent;
    for (const entry of agent.handoffs) {
      if (entry instanceof Agent) queue.push(entry);
      else if (entry.handoff?.target instanceof Agent) queue.push(entry.handoff.target);
    }
    if (intoAgentTools) for (const tool of agent.tools) if (tool.agentTool?.agent instanceof Agent) queue.push(tool.agentTool.agent);
  }
  return undefined;
}
