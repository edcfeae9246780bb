/**
 * Agents for the worker tests, loaded by `troupe worker --agents` in a child process and
 * imported by the in-process workers. Every tool execution is recorded (one line per call id)
 * in the file named by TROUPE_TEST_EXEC_LOG, so a test counts executions across processes.
 * With TROUPE_TEST_HANG=1, `wait` never returns (the process is killed while it waits).
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { Agent, tool } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';

const record = (callId: string): void => {
  const file = process.env.TROUPE_TEST_EXEC_LOG;
  if (file) appendFileSync(file, `${callId}\n`);
};

const add = tool({
  name: 'add',
  description: 'Add two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }, ctx) => {
    record(ctx.callId);
    return a + b;
  },
});

const wait = tool({
  name: 'wait',
  description: 'Waits for an outside event.',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    record(ctx.callId);
    if (process.env.TROUPE_TEST_HANG === '1') await new Promise(() => {});
    return 'waited';
  },
});

/** Two parallel additions, then "done". */
export const calc = (): Agent => new Agent({ name: 'calc', model: new ScriptedModel([batch([['add', { a: 1, b: 2 }, 'c1'], ['add', { a: 3, b: 4 }, 'c2']]), text('done')]), tools: [add] });

/** An addition and a wait in parallel, then "done". */
export const slow = (): Agent => new Agent({ name: 'slow', model: new ScriptedModel([batch([['add', { a: 1, b: 1 }, 'a1'], ['wait', {}, 'w1']]), text('done')]), tools: [add, wait] });

/** `slow` for a worker resuming a run whose first reply is stored: its model only says "done". */
export const slowResumed = (): Agent => new Agent({ name: 'slow', model: new ScriptedModel([text('done')]), tools: [add, wait] });

export const agents = { calc, slow };
