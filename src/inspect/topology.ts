import { Agent } from '../agent.js';
import { handoffToolName } from '../handoff/slug.js';
import type { AgentEdge, AgentGraph, AgentNode } from './wire.js';

/**
 * The agents reachable from `root` through handoffs and agents-as-tools, with each agent's
 * plain tools, in breadth-first order from the root. Agents are told apart by object, so two
 * agents with the same name are two nodes (the second named `name#2`). Never throws: a
 * handoff or agent tool whose target is not an Agent is drawn as an edge to its target name.
 */
export function agentGraph(root: Agent): AgentGraph {
  const names = new Map<Agent, string>();
  const taken = new Map<string, number>();
  const nameOf = (agent: Agent): string => {
    let name = names.get(agent);
    if (name === undefined) {
      const n = (taken.get(agent.name) ?? 0) + 1;
      taken.set(agent.name, n);
      name = n === 1 ? agent.name : `${agent.name}#${n}`;
      names.set(agent, name);
    }
    return name;
  };
  const agents: AgentNode[] = [];
  const edges: AgentEdge[] = [];
  const queue: Agent[] = [root];
  const seen = new Set<Agent>();
  while (queue.length > 0) {
    const agent = queue.shift()!;
    if (seen.has(agent)) continue;
    seen.add(agent);
    const from = nameOf(agent);
    const tools: string[] = [];
    for (const tool of agent.tools) {
      const target = tool.agentTool?.agent;
      if (tool.agentTool) {
        edges.push({ from, to: target instanceof Agent ? nameOf(target) : tool.agentTool.agentName, kind: 'tool', tool: tool.name });
        if (target instanceof Agent) queue.push(target);
      } else if (tool.handoff) {
        edges.push(handoffEdge(from, tool.name, tool.handoff, nameOf, queue));
      } else {
        tools.push(tool.name);
      }
    }
    for (const entry of agent.handoffs) {
      if (entry instanceof Agent) {
        edges.push({ from, to: nameOf(entry), kind: 'handoff', tool: handoffToolName(entry.name) });
        queue.push(entry);
      } else if (entry.handoff) {
        edges.push(handoffEdge(from, entry.name, entry.handoff, nameOf, queue));
      }
    }
    agents.push({ name: from, instructions: typeof agent.instructions === 'string' ? agent.instructions : undefined, tools });
  }
  return { root: nameOf(root), agents, edges };
}

function handoffEdge(from: string, tool: string, handoff: { targetName: string; target?: unknown }, nameOf: (a: Agent) => string, queue: Agent[]): AgentEdge {
  const target = handoff.target;
  if (target instanceof Agent) queue.push(target);
  return { from, to: target instanceof Agent ? nameOf(target) : handoff.targetName, kind: 'handoff', tool };
}
