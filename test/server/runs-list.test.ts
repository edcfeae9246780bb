import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, type CheckpointStore, type StoredRun } from '../../src/index.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { demoAgent } from '../../src/cli/demo.js';
import { brokenAgent, calcAgent, gatedAgent } from './agents.js';
import { call, openSse } from './helpers.js';

/** A clock that ticks 1 s per reading, so stored times (and the list order) are exact. */
function ticking(start = 1_700_000_000_000): () => number {
  let t = start;
  return () => (t += 1_000);
}

async function runTo(server: TroupeServer, agent: string, input: string): Promise<string> {
  const sse = await openSse(server, 'POST', '/api/chat', { body: { agent, input } });
  const runId = sse.res.headers['x-run-id'] as string;
  await sse.all();
  return runId;
}

const agents = { calc: calcAgent, broken: brokenAgent, gated: gatedAgent, demo: () => demoAgent() };

describe('GET /api/runs: live and stored runs, filter and search', () => {
  it('after a restart the list comes from the checkpoint store, with status, agent, input, start, duration and tokens', async () => {
    const store = new MemoryCheckpointStore({ now: ticking() });
    const first = await createServer({ agents, checkpointStore: store, inspect: 'off' });
    const calcId = await runTo(first, 'calc', 'add two pairs');
    const brokenId = await runTo(first, 'broken', 'this will fail');
    const liveList = (await call(first, 'GET', '/api/runs')).json.runs;
    expect(liveList.map((r: { runId: string; source: string }) => [r.runId, r.source])).toEqual([[brokenId, 'live'], [calcId, 'live']]);
    await first.close();

    const second = await createServer({ agents, checkpointStore: store, inspect: 'off' });
    try {
      const { runs } = (await call(second, 'GET', '/api/runs')).json;
      const calcHead = store.load(calcId)!.head;
      expect(runs).toHaveLength(2);
      expect(runs[1]).toEqual({
        runId: calcId,
        source: 'stored',
        agent: 'calc',
        input: 'add two pairs',
        status: 'completed',
        startedAt: 1_700_000_002_000, // the clock's second reading: the lease claim reads it first
        endedAt: runs[1].endedAt,
        durationMs: runs[1].endedAt - 1_700_000_002_000,
        usage: calcHead.usage,
        turns: 2,
        output: 'done',
        pendingApprovals: [],
      });
      expect(runs[1].durationMs).toBeGreaterThan(0);
      expect(runs[1].usage.totalTokens).toBeGreaterThan(0);
      expect(runs[0]).toMatchObject({ runId: brokenId, source: 'stored', agent: 'broken', status: 'failed', input: 'this will fail', error: { name: 'ScriptExhausted', message: 'ScriptedModel has no reply for request 1: the script has 0 steps.' } });

      const ids = async (query: string) => (await call(second, 'GET', `/api/runs${query}`)).json.runs.map((r: { runId: string }) => r.runId);
      expect(await ids('?status=failed')).toEqual([brokenId]);
      expect(await ids('?status=completed,failed')).toEqual([brokenId, calcId]);
      expect(await ids('?status=running')).toEqual([]);
      expect(await ids('?q=PAIRS')).toEqual([calcId]);
      expect(await ids('?q=scriptexhausted')).toEqual([brokenId]);
      expect(await ids(`?q=${calcId.slice(4, 10)}`)).toEqual([calcId]);
      expect(await ids('?q=done&status=failed')).toEqual([]);
      expect(await ids('?limit=1')).toEqual([brokenId]);
      expect((await call(second, 'GET', '/api/runs?status=paused')).json).toEqual({ error: { code: 'invalid_query', message: 'Unknown status \'paused\'. Use one of queued, running, suspended, completed, failed, cancelled.' } });
      expect((await call(second, 'GET', '/api/runs?limit=0')).status).toBe(400);

      // A new live run on the restarted server is listed once, first, as live.
      const liveId = await runTo(second, 'calc', 'again');
      const after = (await call(second, 'GET', '/api/runs')).json.runs;
      expect(after.map((r: { runId: string; source: string }) => `${r.source}:${r.runId}`)).toEqual([`live:${liveId}`, `stored:${brokenId}`, `stored:${calcId}`]);
    } finally {
      await second.close();
    }
  });

  it('GET /api/runs/:id of a stored run: transcript, usage, error and the raw log from the store', async () => {
    const store = new MemoryCheckpointStore();
    const first = await createServer({ agents, checkpointStore: store, inspect: 'off' });
    const calcId = await runTo(first, 'calc', 'add');
    const brokenId = await runTo(first, 'broken', 'boom');
    // A live run's detail carries its stored log too (for replay).
    const live = (await call(first, 'GET', `/api/runs/${calcId}`)).json;
    expect(live.source).toBe('live');
    expect(live.log.entries.map((e: { kind: string }) => e.kind)).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
    await first.close();

    const second = await createServer({ agents, checkpointStore: store, inspect: 'off' });
    try {
      const detail = (await call(second, 'GET', `/api/runs/${calcId}`)).json;
      expect(detail).toMatchObject({ runId: calcId, source: 'stored', agent: 'calc', input: 'add', status: 'completed', output: 'done', turns: 2, usage: store.load(calcId)!.head.usage, pendingApprovals: [], eventLog: [] });
      expect(detail.log.transcript).toEqual([
        { role: 'user', content: 'add' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":1,"b":2}' }, { id: 'c2', name: 'add', arguments: '{"a":3,"b":4}' }], agent: 'calc' },
        { role: 'tool', callId: 'c1', name: 'add', content: '3', isError: false },
        { role: 'tool', callId: 'c2', name: 'add', content: '7', isError: false },
        { role: 'assistant', content: 'done', toolCalls: [], agent: 'calc' },
      ]);
      expect(detail.log).toMatchObject({ unknownEntries: 0, schemaVersion: 6 });
      expect(detail.log.restoreError).toBeUndefined();
      const failed = (await call(second, 'GET', `/api/runs/${brokenId}`)).json;
      expect(failed).toMatchObject({ status: 'failed', error: { name: 'ScriptExhausted', message: 'ScriptedModel has no reply for request 1: the script has 0 steps.' } });
      expect((await call(second, 'GET', '/api/runs/run_unknown')).json).toEqual({ error: { code: 'run_not_found', message: "No run 'run_unknown'." } });
    } finally {
      await second.close();
    }
  });

  it('entry kinds this build does not know are listed, not fatal: the known ones still restore', async () => {
    const memory = new MemoryCheckpointStore();
    // A store holding a log written by a newer build: one entry kind this build has never seen.
    const newer: CheckpointStore = {
      append: (runId, entries, head) => memory.append(runId, entries, head),
      load: (runId): StoredRun | undefined => {
        const run = memory.load(runId);
        if (!run) return undefined;
        const entries = [...run.entries];
        entries.splice(1, 0, { kind: 'a_future_kind', callId: 'c1', decision: 'approve' } as never);
        return { ...run, entries };
      },
      list: () => memory.list(),
    };
    const server = await createServer({ agents, checkpointStore: newer, inspect: 'off' });
    try {
      const runId = await runTo(server, 'calc', 'add');
      const { log } = (await call(server, 'GET', `/api/runs/${runId}`)).json;
      expect(log.unknownEntries).toBe(1);
      expect(log.entries[1]).toEqual({ kind: 'a_future_kind', callId: 'c1', decision: 'approve' });
      expect(log.transcript).toHaveLength(5);
      expect(log.restoreError).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('GET /api/agents/:name/graph: the topology of a registered agent', async () => {
    const server = await createServer({ agents, inspect: 'off' });
    try {
      const { json } = await call(server, 'GET', '/api/agents/demo/graph');
      expect(json.agent).toBe('demo');
      expect(json.graph.edges).toEqual([
        { from: 'Triage', to: 'Travel specialist', kind: 'handoff', tool: 'transfer_to_travel_specialist' },
        { from: 'Travel specialist', to: 'Research', kind: 'tool', tool: 'ask_research' },
      ]);
      expect(json.graph.agents.map((a: { name: string; tools: string[] }) => `${a.name}: ${a.tools.join(', ')}`)).toEqual(['Triage: ', 'Travel specialist: book_hotel', 'Research: weather, flights']);
      expect((await call(server, 'GET', '/api/agents/nobody/graph')).json).toEqual({ error: { code: 'unknown_agent', message: 'Unknown agent \'nobody\'. Registered agents: calc, broken, gated, demo.' } });
    } finally {
      await server.close();
    }
  });
});
