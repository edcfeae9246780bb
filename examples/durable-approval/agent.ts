import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { Agent, tool, type Model } from 'troupe';
import { SqliteCheckpointStore } from 'troupe/sqlite';

/** Where the run lives between processes. */
export const RUN_ID = 'refund-A123';
const DATA = new URL('./.data/', import.meta.url);
mkdirSync(DATA, { recursive: true });
export const store = new SqliteCheckpointStore(new URL('runs.sqlite', DATA).pathname);

/**
 * The side effects, one line per tool execution, with the process that ran it: a stand-in
 * for a payment provider's records, so the output shows what ran where, and how often.
 */
const LEDGER = new URL('ledger.txt', DATA).pathname;
const step = basename(process.argv[1] ?? 'main', '.ts');
function record(line: string): void {
  appendFileSync(LEDGER, `${line} (ran in ${step})\n`);
}
export function ledger(): string[] {
  try {
    return readFileSync(LEDGER, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Look up an order.',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }, ctx) => {
    record(`lookup_order ${orderId} call ${ctx.callId}`);
    return `order ${orderId}: $60.00, paid by card`;
  },
});

const refund = tool({
  name: 'refund',
  description: 'Refund an order to the card it was paid with.',
  parameters: z.object({ orderId: z.string(), cents: z.number().int().positive() }),
  needsApproval: true,
  execute: ({ orderId, cents }, ctx) => {
    record(`refund ${orderId} ${cents} cents call ${ctx.callId}`);
    return `refunded ${cents} cents on ${orderId}`;
  },
});

/**
 * A scripted model that answers from the conversation so far (a fresh process has no other
 * memory): look the order up, then refund it, then say so. Swap in `aiSdkModel(…)` from
 * `troupe/ai-sdk` for a real one.
 */
const model: Model = {
  name: 'scripted-desk',
  async *stream({ messages }) {
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length === 0) yield { type: 'tool_call', call: { id: 'c1', name: 'lookup_order', arguments: '{"orderId":"A123"}' } };
    else if (results.length === 1) yield { type: 'tool_call', call: { id: 'c2', name: 'refund', arguments: '{"orderId":"A123","cents":6000}' } };
    else yield { type: 'text_delta', delta: `Done: ${results.at(-1)!.content}.` };
    yield { type: 'finish' };
  },
};

export const desk = new Agent({
  name: 'desk',
  instructions: 'Refund orders: look them up, then refund them.',
  model,
  tools: [lookupOrder, refund],
  // "ask": a gated call waits for a decision from outside (here: another process) instead of being denied.
  approvalHandler: () => 'ask',
});
