import { Agent } from '../agent.js';

/** The agent called `name` among `start` and every agent reachable from it through handoffs. */
export function findAgent(start: Agent, name: string): Agent | undefined {
  const seen = new Set<Agent>();
  const queue: Agent[] = [start];
  while (queue.length > 0) {
    const agent = queue.shift()!;
    if (seen.has(agent)) continue;
    seen.add(agent);
    if (agent.name === name) return agent;
    for (const entry of agent.handoffs) {
      if (entry instanceof Agent) queue.push(entry);
      else if (entry.handoff?.target instanceof Agent) queue.push(entry.handoff.target);
    }
  }
  return undefined;
}
