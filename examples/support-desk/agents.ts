import { z } from 'zod';
import { Agent, tool, type Message } from 'troupe';
import { call, text, type ScriptStep } from 'troupe/testing';
import { deskModel } from './model.js';

/** The shop's orders (a stand-in for your database). */
export const ORDERS: Record<string, { item: string; cents: number; charges: number }> = {
  A123: { item: 'wireless keyboard', cents: 2_500, charges: 2 },
  B777: { item: 'standing desk', cents: 45_000, charges: 1 },
};

/** Refunds over this need a supervisor (the `refund` tool asks for an approval). */
export const APPROVAL_OVER_CENTS = 2_000;

const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Look up an order by its id (e.g. A123).',
  parameters: z.object({ orderId: z.string().regex(/^[A-Z]\d{3}$/) }),
  execute: ({ orderId }) => {
    const order = ORDERS[orderId];
    if (!order) throw new Error(`no order ${orderId}`);
    return `order ${orderId}: ${order.item}, $${dollars(order.cents)}, charged ${order.charges}x`;
  },
});

const refund = tool({
  name: 'refund',
  description: 'Refund (part of) an order to the card it was paid with.',
  parameters: z.object({ orderId: z.string(), cents: z.number().int().positive(), reason: z.string() }),
  // Every refund over $20 waits for a supervisor's decision; a denial reaches the model as the call's error result.
  needsApproval: ({ cents }) => cents > APPROVAL_OVER_CENTS,
  execute: ({ orderId, cents }) => `refunded $${dollars(cents)} on ${orderId}`,
});

const searchDocs = tool({
  name: 'search_docs',
  description: 'Search the product documentation.',
  parameters: z.object({ query: z.string() }),
  execute: ({ query }) =>
    /export/i.test(query) ? 'Exports over 10,000 rows need version 4.2 or later (Settings > About > Update).' : 'No article found.',
});

// The scripted replies: what a model would answer, decided from the conversation so far.
const lastUser = (messages: readonly Message[]) => [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
const lastTool = (messages: readonly Message[]) => [...messages].reverse().find((m) => m.role === 'tool');
const orderIn = (messages: readonly Message[]) => /[A-Z]\d{3}/.exec(lastUser(messages))?.[0] ?? 'A123';
const reply = (respond: NonNullable<ScriptStep['respond']>): ScriptStep => ({ text: '', calls: [], respond });

const triageScript = [
  reply(({ messages }) => ({
    calls: [{ id: 'h1', name: /charge|refund|bill|money/i.test(lastUser(messages)) ? 'transfer_to_billing' : 'transfer_to_technical', arguments: '{}' }],
  })),
];
const billingScript = [
  reply(({ messages }) => ({ calls: [{ id: 'b1', name: 'lookup_order', arguments: JSON.stringify({ orderId: orderIn(messages) }) }] })),
  reply(({ messages }) => {
    const orderId = orderIn(messages);
    const order = ORDERS[orderId]!;
    const reason = order.charges > 1 ? 'duplicate charge' : 'customer request';
    return { calls: [{ id: 'b2', name: 'refund', arguments: JSON.stringify({ orderId, cents: order.cents, reason }) }] };
  }),
  reply(({ messages }) => {
    const result = lastTool(messages);
    if (result?.isError) return { text: `I could not refund order ${orderIn(messages)} (${result.content.replace(/^Tool error: /, '')}). A manager will get back to you.` };
    return { text: `Done: ${result?.content}. You will see it on your card in 3-5 days.` };
  }),
];
const technicalScript = [call('search_docs', { query: 'export crashes' }, 't1'), text('Please update to version 4.2 (Settings > About > Update): exports over 10,000 rows need it.')];

export const billing = new Agent({
  name: 'Billing',
  instructions: 'You handle charges and refunds. Look the order up first, then refund what the customer is owed.',
  model: await deskModel(billingScript),
  tools: [lookupOrder, refund],
});

export const technical = new Agent({
  name: 'Technical',
  instructions: 'You solve technical problems with the product. Search the docs before you answer.',
  model: await deskModel(technicalScript),
  tools: [searchDocs],
});

export const triage = new Agent({
  name: 'Triage',
  instructions: 'You are the first contact of a support desk. Hand billing questions to Billing and technical problems to Technical.',
  model: await deskModel(triageScript),
  handoffs: [billing, technical],
});

/** For `troupe serve --agents ./agents.ts`: the desk's entry agent by name. */
export const agents = { triage };

function dollars(cents: number): string {
  return (cents / 100).toFixed(2);
}
