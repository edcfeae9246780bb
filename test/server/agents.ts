import { z } from 'zod';
import { Agent, tool } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { deferred, type Deferred } from '../helpers.js';

export const add = tool({
  name: 'add',
  description: 'Add two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

/** Two parallel calls, then a text reply. */
export const calcAgent = (): Agent =>
  new Agent({
    name: 'calc',
    model: new ScriptedModel([batch([['add', { a: 1, b: 2 }, 'c1'], ['add', { a: 3, b: 4 }, 'c2']]), text('done')]),
    tools: [add],
  });

/** One gated call (`refund`, needs approval), then a text reply. */
export const gatedAgent = (): Agent =>
  new Agent({
    name: 'refunds',
    model: new ScriptedModel([call('refund', { orderId: 'A1', cents: 6000 }, 'r1'), text('refund handled')]),
    tools: [
      tool({
        name: 'refund',
        description: 'Refund an order.',
        parameters: z.object({ orderId: z.string(), cents: z.number() }),
        needsApproval: true,
        execute: async ({ orderId }) => `refunded ${orderId}`,
      }),
    ],
  });

/** A model with an empty script: the run fails with ScriptExhausted. */
export const brokenAgent = (): Agent => new Agent({ name: 'broken', model: new ScriptedModel([]) });

/** A tool that waits for the test to release it (each run gets a fresh gate in `gates`). */
export function slowAgentFactory(gates: Array<Deferred<void>>): () => Agent {
  return () => {
    const gate = deferred<void>();
    gates.push(gate);
    return new Agent({
      name: 'slow',
      model: new ScriptedModel([call('wait', {}, 'w1'), text('waited')]),
      tools: [
        tool({
          name: 'wait',
          description: 'Waits for the test.',
          parameters: z.object({}),
          execute: async (_args, ctx) => {
            await Promise.race([gate.promise, new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))))]);
            return 'released';
          },
        }),
      ],
    });
  };
}

/**
 * Two agent-as-tool sub-runs in parallel whose models both call `refund` with call id `k1`
 * (100 and 999,999 cents), each needing an approval. `executed` gets the cents of every
 * refund that really ran.
 */
export function twinRefundsFactory(executed: number[]): () => Agent {
  return () => {
    const refund = tool({
      name: 'refund',
      description: 'Refund an order.',
      parameters: z.object({ orderId: z.string(), cents: z.number() }),
      needsApproval: true,
      execute: async ({ orderId, cents }) => {
        executed.push(cents);
        return `refunded ${cents} cents on ${orderId}`;
      },
    });
    const small = new Agent({
      name: 'small',
      model: new ScriptedModel([call('refund', { orderId: 'A1', cents: 100 }, 'k1'), text('small done')]),
      tools: [refund],
    });
    const large = new Agent({
      name: 'large',
      model: new ScriptedModel([call('refund', { orderId: 'B2', cents: 999_999 }, 'k1'), text('large done')]),
      tools: [refund],
    });
    return new Agent({
      name: 'desk',
      model: new ScriptedModel([
        batch([
          ['ask_small', { input: 'refund A1' }, 's1'],
          ['ask_large', { input: 'refund B2' }, 'l1'],
        ]),
        text('both handled'),
      ]),
      tools: [small.asTool(), large.asTool()],
    });
  };
}
