import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, tool } from '../../src/index.js';
import { ScriptedModel, call as callStep, text } from '../../src/entry/testing.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import { EventLog } from '../../src/server/event-log.js';
import { createServer, type ServerOptions, type TroupeServer } from '../../src/server/index.js';
import { calcAgent, gatedAgent } from './agents.js';
import { call, openSse, type SseClient } from './helpers.js';

const servers: TroupeServer[] = [];
const clients: SseClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await server.close();
});

const bytesOf = (event: unknown): number => Buffer.byteLength(JSON.stringify(event));
const sum = (events: readonly unknown[]): number => events.reduce<number>((n, e) => n + bytesOf(e), 0);
const isDelta = (e: WireRunEvent): boolean => e.type === 'text_delta' || e.type === 'reasoning_delta';
const isPinned = (e: WireRunEvent): boolean => ['run_completed', 'run_failed', 'approval_required'].includes(e.type);

/** Four turns, each with some streamed text and one call whose result is `size` characters (twice in the event: result and output). */
const dumpAgent =
  (size: number) =>
  (): Agent =>
    new Agent({
      name: 'dumper',
      model: new ScriptedModel([
        ...[1, 2, 3, 4].map((n) => callStep('dump', { n }, `d${n}`, { text: `reading dump number ${n} of four now` })),
        text('all four dumps were read and they were all very large indeed'),
      ]),
      tools: [
        tool({
          name: 'dump',
          description: 'Returns a large blob.',
          parameters: z.object({ n: z.number() }),
          maxOutputChars: null,
          execute: async ({ n }) => `${n}`.repeat(size),
        }),
      ],
    });

async function start(options: Partial<ServerOptions>): Promise<TroupeServer> {
  const server = await createServer({ agents: { dump: dumpAgent(60_000), huge: dumpAgent(200_000), calc: calcAgent, gated: gatedAgent }, inspect: 'off', ...options });
  servers.push(server);
  return server;
}

/** Runs `agent` to the end through POST /api/chat (subscribed from the first event, so it sees every one). */
async function runAll(server: TroupeServer, agent: string): Promise<{ runId: string; streamed: WireRunEvent[] }> {
  const client = await openSse(server, 'POST', '/api/chat', { body: { agent, input: 'go' } });
  clients.push(client);
  await client.all();
  expect(client.frames.map((f) => Number(f.id))).toEqual(client.frames.map((_, i) => i));
  return { runId: client.res.headers['x-run-id'] as string, streamed: client.events() };
}

/** Indices of `kept` in `all` (as a subsequence, in order); fails if it is not one. */
function keptIndices(all: readonly WireRunEvent[], kept: readonly WireRunEvent[]): number[] {
  const indices: number[] = [];
  let at = 0;
  for (const event of kept) {
    const text = JSON.stringify(event);
    while (at < all.length && JSON.stringify(all[at]) !== text) at++;
    expect(at).toBeLessThan(all.length);
    indices.push(at++);
  }
  return indices;
}

describe('per-run event retention, bounded by bytes', () => {
  it('keeps the retained JSON under maxEventBytesPerRun, dropping deltas first, then the oldest events, with an exact count', async () => {
    const max = 300_000;
    const server = await start({ maxEventBytesPerRun: max });
    const { runId, streamed } = await runAll(server, 'dump');
    const big = bytesOf(streamed.find((e) => e.type === 'tool_call_completed'));
    expect(big).toBeGreaterThan(120_000);
    expect(sum(streamed)).toBeGreaterThan(4 * big);

    const detail = (await call(server, 'GET', `/api/runs/${runId}`)).json;
    const kept = detail.eventLog as WireRunEvent[];
    expect(detail.eventBytes).toBe(sum(kept));
    expect(detail.eventBytes).toBeLessThanOrEqual(max);
    expect(detail.events).toBe(streamed.length);
    expect(detail.droppedEvents).toBe(streamed.length - kept.length);
    expect(detail.droppedEventBytes).toBe(sum(streamed) - sum(kept));

    const indices = new Set(keptIndices(streamed, kept));
    const dropped = streamed.map((e, i) => ({ e, i })).filter(({ i }) => !indices.has(i));
    // The two newest results fit; the older two were dropped.
    expect(kept.filter((e) => e.type === 'tool_call_completed').map((e) => (e.call as { id: string }).id)).toEqual(['d3', 'd4']);
    // Oldest first: the dropped events that are not deltas are exactly the oldest such events.
    const others = streamed.map((e, i) => ({ e, i })).filter(({ e }) => !isDelta(e) && !isPinned(e));
    const droppedOthers = dropped.filter(({ e }) => !isDelta(e));
    expect(droppedOthers.map(({ i }) => i)).toEqual(others.slice(0, droppedOthers.length).map(({ i }) => i));
    // Deltas go first: every delta older than the last dropped non-delta is gone.
    const lastDroppedOther = droppedOthers.at(-1)!.i;
    expect(streamed.filter((e, i) => isDelta(e) && i < lastDroppedOther && indices.has(i))).toEqual([]);
    expect(kept.some(isDelta)).toBe(true); // the last turn's text came after the drops
    expect(kept.at(-1)).toMatchObject({ type: 'run_completed', output: 'all four dumps were read and they were all very large indeed' });

    // A late subscriber gets the kept events under their numbers in the run (gaps = dropped).
    const replay: Array<[number, string]> = [];
    server.run(runId)!.subscribe({ event: (event, index) => replay.push([index, event.type]), end: () => undefined });
    expect(replay).toEqual([...indices].map((i) => [i, streamed[i]!.type]));
  });

  it('does not keep an event bigger than the whole bound, and keeps the rest', async () => {
    const server = await start({ maxEventBytesPerRun: 300_000 });
    const { runId, streamed } = await runAll(server, 'huge');
    const detail = (await call(server, 'GET', `/api/runs/${runId}`)).json;
    const kept = detail.eventLog as WireRunEvent[];
    expect(kept.filter((e) => e.type === 'tool_call_completed')).toEqual([]);
    expect(kept).toEqual(streamed.filter((e) => e.type !== 'tool_call_completed'));
    expect(detail.droppedEvents).toBe(4);
    expect(detail.droppedEventBytes).toBe(sum(streamed.filter((e) => e.type === 'tool_call_completed')));
  });

  it('never drops approval and terminal events, even past the bound', async () => {
    const server = await start({ maxEventBytesPerRun: 700 });
    const client = await openSse(server, 'POST', '/api/chat', { body: { agent: 'gated', input: 'refund' } });
    clients.push(client);
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approval = client.events().find((e) => e.type === 'approval_required')!;
    expect((await call(server, 'POST', '/api/chat/approve', { body: { approvalId: approval.approvalId, decision: 'approve' } })).status).toBe(200);
    await client.all();
    const streamed = client.events();
    const detail = (await call(server, 'GET', `/api/runs/${client.res.headers['x-run-id']}`)).json;
    const kept = detail.eventLog as WireRunEvent[];
    expect(kept.filter(isPinned).map((e) => e.type)).toEqual(['approval_required', 'run_completed']);
    expect(detail.eventBytes).toBe(sum(kept));
    expect(detail.eventBytes - sum(kept.filter(isPinned))).toBeLessThanOrEqual(700);
    expect(detail.droppedEvents).toBe(streamed.length - kept.length);
    expect(detail.droppedEventBytes).toBe(sum(streamed) - sum(kept));
  });

  it('still bounds the count (maxEventsPerRun) the same way', async () => {
    const server = await start({ maxEventsPerRun: 4 });
    const { runId, streamed } = await runAll(server, 'calc');
    const detail = (await call(server, 'GET', `/api/runs/${runId}`)).json;
    // The reply's delta ('done') goes first, although it is newer than turn_started.
    expect(streamed.slice(-5).map((e) => e.type)).toEqual(['turn_started', 'text_delta', 'message_completed', 'turn_ended', 'run_completed']);
    expect(detail.eventLog).toEqual([streamed.at(-5), ...streamed.slice(-3)]);
    expect(detail.droppedEvents).toBe(streamed.length - 4);
    expect(detail.droppedEventBytes).toBe(sum(streamed) - sum(detail.eventLog));
  });

  it('rejects bounds that are not positive integers', async () => {
    await expect(createServer({ agents: {}, maxEventBytesPerRun: 0 })).rejects.toThrow('maxEventBytesPerRun must be a positive integer');
    await expect(createServer({ agents: {}, maxEventsPerRun: 1.5 })).rejects.toThrow('maxEventsPerRun must be a positive integer');
  });
});

describe('EventLog', () => {
  const ev = (type: string, pad = 0): WireRunEvent => ({ type, runId: 'r', path: ['a'], agent: 'a', pad: 'x'.repeat(pad) }) as unknown as WireRunEvent;

  it('drops the oldest delta, then the oldest other event, and counts bytes exactly', () => {
    const log = new EventLog(100, 530);
    const events = [ev('run_started', 50), ev('text_delta'), ev('tool_call_started', 50), ev('text_delta'), ev('tool_call_completed', 150), ev('approval_required', 100)];
    events.forEach((e, i) => log.add(i, e));
    // Sizes 118, 67, 124, 67, 226, 174: the fifth passes 530 bytes and both deltas go (not the
    // older run_started); the sixth passes it again and run_started, the oldest left, goes.
    expect(log.entriesWithSeq().map((x) => x.seq)).toEqual([2, 4, 5]);
    expect(log.bytes).toBe(sum([events[2], events[4], events[5]]));
    expect(log.bytes).toBe(524);
    expect(log.dropped).toEqual({ count: 3, bytes: sum([events[0], events[1], events[3]]) });
    expect(log.size).toBe(3);
  });

  it('compacts without losing order across many drops', () => {
    const log = new EventLog(10, 1_000_000);
    for (let i = 0; i < 1_000; i++) log.add(i, ev(i % 3 === 0 ? 'turn_started' : 'text_delta'));
    // Every delta goes before any turn_started, and the last event (999) is a turn_started:
    // the ten newest turn_started events are left, in order.
    expect(log.entriesWithSeq().map((x) => x.seq)).toEqual([972, 975, 978, 981, 984, 987, 990, 993, 996, 999]);
    expect(log.dropped.count).toBe(990);
    expect(log.events.every((e) => e.type === 'turn_started')).toBe(true);
  });
});
