// The agents module every process of the cluster loads (`troupe worker --agents ./agents.ts`,
// `troupe serve --workers external --agents ./agents.ts`).
import { appendFileSync, mkdirSync } from 'node:fs';
import { z } from 'zod';
import { Agent, tool, type Model } from 'troupe';

/** One line per tool execution, from every worker process: how often each call really ran, and where. */
export const EXECUTIONS = new URL('./.data/executions.log', import.meta.url).pathname;
mkdirSync(new URL('./.data/', import.meta.url), { recursive: true });
/** main.ts names each worker process in its environment. */
const here = process.env.WORKER_NAME ?? `pid ${process.pid}`;

const pack = tool({
  name: 'pack',
  description: 'Pack an order.',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => {
    appendFileSync(EXECUTIONS, `pack ${order} ${here}\n`);
    return `packed ${order} on worker ${here}`;
  },
});

const ship = tool({
  name: 'ship',
  description: 'Hand an order to the courier.',
  parameters: z.object({ order: z.string() }),
  needsApproval: true,
  execute: ({ order }) => {
    appendFileSync(EXECUTIONS, `ship ${order} ${here}\n`);
    return `shipped ${order} on worker ${here}`;
  },
});

/**
 * A scripted model that answers from the conversation, so a worker that takes a run over
 * (with nothing but its log) continues it: pack, then ship, then say so.
 */
const model: Model = {
  name: 'scripted-warehouse',
  async *stream({ messages }) {
    const order = /order-\d+/.exec(messages.find((m) => m.role === 'user')?.content ?? '')?.[0] ?? 'order-0';
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length === 0) yield { type: 'tool_call', call: { id: 'p1', name: 'pack', arguments: JSON.stringify({ order }) } };
    else if (results.length === 1) yield { type: 'tool_call', call: { id: 's1', name: 'ship', arguments: JSON.stringify({ order }) } };
    else yield { type: 'text_delta', delta: `${results.map((r) => r.content).join(', ')}.` };
    yield { type: 'finish' };
  },
};

// A factory: every run gets its own agent.
export const agents = {
  warehouse: () => new Agent({ name: 'warehouse', instructions: 'Pack orders, then ship them.', model, tools: [pack, ship] }),
};
