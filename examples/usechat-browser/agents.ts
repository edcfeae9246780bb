import { z } from 'zod';
import { Agent, tool } from 'troupe';
import { ScriptedModel, call, type ScriptStep } from 'troupe/testing';

const refund = tool({
  name: 'refund',
  description: 'Refund an order to the card it was paid with.',
  parameters: z.object({ orderId: z.string(), cents: z.number().int().positive() }),
  // The run waits until someone decides: here, the Approve / Reject buttons of the page.
  needsApproval: true,
  execute: ({ orderId, cents }) => `refunded $${(cents / 100).toFixed(2)} on ${orderId}`,
});

/** The model's last reply reads the refund's result: done, or denied. */
const answer: ScriptStep = {
  text: '',
  calls: [],
  respond: ({ messages }) => {
    const result = messages.at(-1);
    const refunded = result?.role === 'tool' && !result.isError;
    return { text: refunded ? 'Your refund of $60.00 on order A123 is on its way.' : 'The refund was not approved, so order A123 was not refunded.' };
  },
};

// A factory: every chat message starts a run with its own agent. The scripted model plays the
// model's replies (no API key); swap in aiSdkModel(…) from troupe/ai-sdk for a real one.
export const agents = {
  support: () =>
    new Agent({
      name: 'support',
      instructions: 'You help customers with refunds.',
      model: new ScriptedModel([call('refund', { orderId: 'A123', cents: 6_000 }, 'r1'), answer]),
      tools: [refund],
    }),
};
