/**
 * Agents for the cluster tests and `bench/workers.ts`, loaded by `troupe worker --agents` in
 * child processes and imported by in-process workers. Their models pick the reply by how many
 * replies the transcript already holds, so a run resumed on another worker continues where
 * its log ends (a ScriptedModel would start its script again).
 *
 * Every tool execution is recorded in PostgreSQL when TROUPE_TEST_EXEC_URL and
 * TROUPE_TEST_EXEC_SCHEMA are set (table `<schema>.test_executions`, made by the test): one
 * row per execution with the run id, the call id and the worker's pid, so a test counts
 * executions across processes.
 */
import pg from 'pg';
import { z } from 'zod';
import { Agent, askHuman, tool, waitForEvent, type Model, type ModelRequest, type ModelStreamPart } from '../../src/index.js';
import { ScriptedModel, batch, text, type ScriptStep } from '../../src/entry/testing.js';

let pool: pg.Pool | undefined;
async function record(runId: string, callId: string): Promise<void> {
  const url = process.env.TROUPE_TEST_EXEC_URL;
  const schema = process.env.TROUPE_TEST_EXEC_SCHEMA;
  if (!url || !schema) return;
  pool ??= new pg.Pool({ connectionString: url, max: 4, allowExitOnIdle: true });
  await pool.query(`INSERT INTO "${schema}".test_executions (run_id, call_id, pid) VALUES ($1, $2, $3)`, [runId, callId, process.pid]);
}

/** A model that answers the n-th request of a run with `steps[n]`, n being the replies already in its transcript. */
export class TranscriptModel implements Model {
  readonly name = 'transcript-model';
  constructor(private readonly steps: readonly ScriptStep[]) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const replies = request.messages.filter((m) => m.role === 'assistant').length;
    const step = this.steps[Math.min(replies, this.steps.length - 1)]!;
    yield* new ScriptedModel([step]).stream(request);
  }
}

const work = tool({
  name: 'work',
  description: 'Does a unit of work.',
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }, ctx) => {
    await record(ctx.runId, ctx.callId);
    // A little real waiting, so a worker killed mid-run has calls in flight.
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.TROUPE_TEST_WORK_MS ?? 0)));
    return n * 2;
  },
});

const payout = tool({
  name: 'payout',
  description: 'Pays out (needs approval).',
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: async ({ amount }, ctx) => {
    await record(ctx.runId, ctx.callId);
    return `paid ${amount}`;
  },
});

const hang = tool({
  name: 'hang',
  description: 'Waits until the run is cancelled.',
  parameters: z.object({}),
  execute: async (_args, ctx) =>
    new Promise<string>((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
    }),
});

const five = (prefix: string) => Array.from({ length: 5 }, (_, i) => ['work', { n: i }, `${prefix}${i}`] as [string, unknown, string]);

/** Five parallel calls, then "done". */
export const fiver = (): Agent => new Agent({ name: 'fiver', model: new TranscriptModel([batch(five('w')), text('done')]), tools: [work] });

/** Five parallel calls of which one needs approval, then "done". */
export const approver = (): Agent =>
  new Agent({ name: 'approver', model: new TranscriptModel([batch([...five('w').slice(0, 4), ['payout', { amount: 5 }, 'p1']]), text('done')]), tools: [work, payout] });

/** One call that runs until the run is cancelled. */
export const hanger = (): Agent => new Agent({ name: 'hanger', model: new TranscriptModel([batch([['hang', {}, 'h1']]), text('never')]), tools: [hang] });

/** Text only: its replies are first, second, third in turn, so a steered extra turn shows. */
export const echo = (): Agent => new Agent({ name: 'echo', model: new TranscriptModel([text('first'), text('second'), text('third')]) });

const pay = tool({
  name: 'pay',
  description: 'Starts a payment and waits for its confirmation (the event "paid").',
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    await record(ctx.runId, ctx.callId);
    return waitForEvent('paid');
  },
});

/** One call that waits for the external event "paid"; its result is the event's payload. Then "paid". */
export const payer = (): Agent => new Agent({ name: 'payer', model: new TranscriptModel([batch([['pay', {}, 'e1']]), text('paid')]), tools: [pay] });

/** Asks a person to pick red or blue (askHuman through the run), then "noted". */
export const asker = (): Agent =>
  new Agent({ name: 'asker', model: new TranscriptModel([batch([['ask', { question: 'Which colour?', options: ['red', 'blue'] }, 'q1']]), text('noted')]), tools: [askHuman({ name: 'ask' })] });

export const agents = { fiver, approver, hanger, echo, payer, asker };
