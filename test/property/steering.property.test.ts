/**
 * Property: runs steered from outside and shaped by hooks keep the stream invariants.
 * Random batches (fast, slow, failing, terminating, mailbox-posting calls), random
 * afterModelResponse verdicts (retry, inject, stop), beforeToolCall blocks, onRunEnd
 * continuations, steer / follow-up / unsteer and cancel after random events. For every
 * case: exactly one terminal event of the root, last; exactly one tool_call_completed per
 * requested call (per turn and index of each message_completed); no tool_call_started for
 * a blocked call; result() agrees with the terminal event; a completed run injected every
 * steer and follow-up that was not withdrawn.
 *
 * TROUPE_PROPERTY_RUNS (default 300 here) and TROUPE_PROPERTY_SEED choose the cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool, toolResult, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, text, type ScriptStep } from '../../src/entry/testing.js';
import { config } from './property.js';

type Kind = 'fast' | 'slow' | 'fail' | 'stop' | 'post';
const kindArb = fc.constantFrom<Kind>('fast', 'slow', 'fail', 'stop', 'post');
const stepArb = fc.oneof(fc.constant<Kind[]>([]), fc.array(kindArb, { minLength: 1, maxLength: 4 }));
const actionArb = fc.record({ at: fc.nat(30), what: fc.constantFrom('steer', 'followUp', 'unsteer', 'cancel') });
const caseArb = fc.record({
  steps: fc.array(stepArb, { minLength: 1, maxLength: 5 }),
  verdicts: fc.array(fc.constantFrom('none', 'none', 'retry', 'inject', 'stop'), { minLength: 6, maxLength: 6 }),
  blockEvery: fc.integer({ min: 0, max: 3 }),
  continueOnce: fc.boolean(),
  actions: fc.array(actionArb, { maxLength: 4 }),
  mode: fc.constantFrom<'all' | 'one-at-a-time'>('all', 'one-at-a-time'),
});

const tools = [
  tool({ name: 'fast', description: 'd', parameters: z.object({ n: z.number() }), execute: ({ n }) => `fast ${n}` }),
  tool({ name: 'slow', description: 'd', parameters: z.object({ n: z.number() }), execute: ({ n }) => new Promise((r) => setTimeout(() => r(`slow ${n}`), 1)) }),
  tool({ name: 'fail', description: 'd', parameters: z.object({ n: z.number() }), execute: () => { throw new Error('boom'); } }),
  tool({ name: 'stop', description: 'd', parameters: z.object({ n: z.number() }), execute: ({ n }) => toolResult({ content: `stop ${n}`, terminate: true }) }),
  tool({ name: 'post', description: 'd', parameters: z.object({ n: z.number() }), execute: ({ n }, ctx) => (ctx.mailbox.post(`note ${n}`), `posted ${n}`) }),
];

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

async function runCase(c: Case): Promise<string[]> {
  let n = 0;
  const script: ScriptStep[] = c.steps.map((kinds) => (kinds.length === 0 ? text('answer') : batch(kinds.map((k) => [k, { n: ++n }] as const))));
  // Enough replies for retries, injections, steers and continuations, then plain answers.
  for (let i = 0; i < 12; i++) script.push(text('more'));
  let replies = 0;
  let ended = false;
  const agent = new Agent({
    name: 'p',
    model: new ScriptedModel(script),
    tools,
    hooks: {
      afterModelResponse: () => {
        const v = c.verdicts[replies++ % c.verdicts.length];
        return v === 'retry' ? { retry: true } : v === 'inject' ? { inject: ['injected'] } : v === 'stop' ? { stop: true } : undefined;
      },
      beforeToolCall: ({ args }) => (c.blockEvery > 0 && (args as { n: number }).n % c.blockEvery === 0 ? { block: 'policy' } : undefined),
      onRunEnd: () => (c.continueOnce && !ended ? ((ended = true), ['continue']) : undefined),
    },
  });
  const handle = Runner.stream(agent, 'go', { maxTurns: 12, steeringMode: c.mode });
  const events: RunEvent[] = [];
  const ids: string[] = [];
  const live = new Set<string>();
  const act = (what: string): void => {
    try {
      if (what === 'steer' || what === 'followUp') {
        const id = what === 'steer' ? handle.steer('steered') : handle.followUp('follow');
        ids.push(id);
        live.add(id);
      } else if (what === 'unsteer' && ids.length) {
        const id = ids.shift()!;
        if (handle.unsteer(id)) live.delete(id);
      }
      else if (what === 'cancel') handle.cancel('property');
    } catch {
      // steering an ended run is a UserError: fine here
    }
  };
  for (const a of c.actions) if (a.at === 0) act(a.what);
  for await (const event of handle) {
    events.push(event);
    for (const a of c.actions) if (a.at === events.length) act(a.what);
  }
  const outcome = await handle.result().then((r) => ['completed', r.output] as const, (e: Error) => ['failed', e] as const);
  const found = violations(events, outcome);
  // Nothing is lost: a completed run injected every steer and follow-up that was not withdrawn.
  if (outcome[0] === 'completed') {
    const injected = new Set(events.flatMap((e) => (e.type === 'user_message_injected' && e.id ? [e.id] : [])));
    for (const id of live) if (!injected.has(id)) found.push(`message ${id} was lost`);
  }
  return found;
}

function violations(events: readonly RunEvent[], outcome: readonly ['completed', string] | readonly ['failed', Error]): string[] {
  const out: string[] = [];
  const terminal = events.filter((e) => e.type === 'run_completed' || e.type === 'run_failed');
  if (terminal.length !== 1 || events.at(-1) !== terminal[0]) out.push(`terminal events: ${terminal.length}, last is ${events.at(-1)?.type}`);
  const last = terminal[0];
  if (last?.type === 'run_completed' && (outcome[0] !== 'completed' || outcome[1] !== last.output)) out.push('result() disagrees with run_completed');
  if (last?.type === 'run_failed' && (outcome[0] !== 'failed' || outcome[1] !== last.error)) out.push('result() disagrees with run_failed');
  const requested = new Map<string, number>();
  for (const e of events) if (e.type === 'message_completed') for (const call of e.message.toolCalls) requested.set(`${e.turn}:${call.id}`, (requested.get(`${e.turn}:${call.id}`) ?? 0) + 1);
  const done = new Map<string, number>();
  for (const e of events) if (e.type === 'tool_call_completed') done.set(`${e.turn}:${e.call.id}`, (done.get(`${e.turn}:${e.call.id}`) ?? 0) + 1);
  for (const [key, count] of requested) if (done.get(key) !== count) out.push(`call ${key}: ${done.get(key) ?? 0} results for ${count} requests`);
  for (const key of done.keys()) if (!requested.has(key)) out.push(`call ${key}: a result nobody requested`);
  const blocked = new Set(events.filter((e) => e.type === 'tool_call_completed' && e.blockedBy !== undefined).map((e) => ('call' in e ? `${e.turn}:${e.call.id}` : '')));
  for (const e of events) if (e.type === 'tool_call_started' && blocked.has(`${e.turn}:${e.call.id}`)) out.push(`blocked call ${e.call.id} started`);
  return out;
}

describe('steering and hook invariants (property)', () => {
  it('hold for random steered, hooked runs', { timeout: 300_000 }, async () => {
    const cfg = config(300);
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        expect(await runCase(c)).toEqual([]);
      }),
      { numRuns: cfg.numRuns, seed: cfg.seed, endOnFailure: false },
    );
  });
});
