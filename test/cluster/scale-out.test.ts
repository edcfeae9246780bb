/**
 * The scale-out proof with real processes: 3 `troupe worker` and 2 `troupe serve --workers
 * external` child processes on one PostgreSQL schema, 300 runs started through server A,
 * approvals decided through server B, and one worker SIGKILLed while it holds runs whose
 * calls are in flight. The store, the executions table and A's streams are then checked
 * exactly: nothing lost, nothing finished run twice, every decision in its own run. And a run
 * started through server process A, watched and cancelled through server process B.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, adminQuery, usePostgresSchema } from '../store/harnesses.js';
import { call, openSse, type SseClient } from '../server/helpers.js';
import { killAll, startServeProcess, startWorkerProcess, type ServeAddress, type WorkerProcess } from './troupe-process.js';

const RUNS = 300;
/** Every APPROVER_EVERY-th run is an `approver` (4 work calls + 1 payout needing approval). */
const APPROVER_EVERY = 10;
/**
 * Short, so the test waits little for the killed worker's leases; long enough that a live
 * worker on a loaded 2-core machine never misses a renewal (every third of it), also the victim
 * while the test freezes it (SIGSTOP) to look at its calls: a freeze lasts well under the
 * lease left after a renewal (2/3 of it), and it runs FREEZE_GAP_MS between freezes. With
 * 2000 ms, repeated freezes with 10 ms gaps let the live victim's leases run out, survivors
 * took its waiting runs over, and calls not in flight at the kill ran twice.
 */
const LEASE_TTL_MS = 4000;
/** The victim runs this long between two looks (longer than a renewal period, a third of the TTL). */
const FREEZE_GAP_MS = LEASE_TTL_MS / 2;
/** Each `work` call waits this long, so a worker always has calls in flight. */
const WORK_MS = 30;
/** Runs that must have completed before the kill. */
const COMPLETED_BEFORE_KILL = 60;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value (the store is the truth; no timing is asserted). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(25);
  }
}

const resultIds = (entries: readonly CheckpointEntry[]) => entries.flatMap((e) => (e.kind === 'result' ? [(e.message as { callId: string }).callId] : [])).sort();
const expectedCalls = (agent: string) => (agent === 'approver' ? ['p1', 'w0', 'w1', 'w2', 'w3'] : ['w0', 'w1', 'w2', 'w3', 'w4']);
const key = (runId: string, callId: string) => `${runId} ${callId}`;

describe(`scale-out with worker and server processes`, () => {
  const freshSchema = usePostgresSchema();
  const streams: SseClient[] = [];
  const stores: PostgresCheckpointStore[] = [];
  afterEach(async () => {
    for (const client of streams.splice(0)) client.close();
    await killAll();
    for (const store of stores.splice(0)) await store.close();
  });
  afterAll(killAll);

  it(
    '300 runs on 3 worker processes through 2 server processes, one worker SIGKILLed mid-run: every run completes once, only calls in flight on the killed worker run twice, every approval reaches its run',
    async () => {
      const schema = await freshSchema();
      const t = `"${schema}"`;
      await adminQuery(`CREATE TABLE ${t}.test_executions (seq bigint GENERATED ALWAYS AS IDENTITY, run_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL)`);
      const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
      stores.push(store);
      const env = { TROUPE_TEST_EXEC_URL: POSTGRES_URL!, TROUPE_TEST_EXEC_SCHEMA: schema, TROUPE_TEST_WORK_MS: String(WORK_MS) };
      const workerOptions = { concurrency: 6, leaseTtlMs: LEASE_TTL_MS, pollMs: 100, env };
      const [workers, [a, b]] = await Promise.all([
        Promise.all([0, 1, 2].map(() => startWorkerProcess(POSTGRES_URL!, schema, workerOptions))),
        Promise.all([startServeProcess(POSTGRES_URL!, schema, 'token-server-a'), startServeProcess(POSTGRES_URL!, schema, 'token-server-b')]),
      ]) as [WorkerProcess[], ServeAddress[]];
      const victim = workers[0]!;

      // Start every run through server A; each response is the run's event stream.
      const agentOf = new Map<string, string>();
      const streamOf = new Map<string, SseClient>();
      for (let start = 0; start < RUNS; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, RUNS - start) }, async (_, k) => {
            const i = start + k;
            const agent = i % APPROVER_EVERY === 0 ? 'approver' : 'fiver';
            const client = await openSse(a!, 'POST', '/api/chat', { body: { agent, input: `run ${i}` } });
            streams.push(client);
            expect(client.status).toBe(200);
            const runId = client.res.headers['x-run-id'] as string;
            agentOf.set(runId, agent);
            streamOf.set(runId, client);
          }),
        );
      }
      const runIds = [...agentOf.keys()].sort();
      expect(runIds.length).toBe(RUNS);
      const approverRuns = runIds.filter((id) => agentOf.get(id) === 'approver');
      expect(approverRuns.length).toBe(RUNS / APPROVER_EVERY);

      // Each approval asked on A's stream is decided through B (the request reaches the log
      // shortly after the event; a run resumed elsewhere may ask again: decide until B takes it).
      const decisions = approverRuns.map(async (runId) => {
        const client = streamOf.get(runId)!;
        await client.until((frames) => frames.some((f) => f.event === 'approval_required'), 60_000);
        const asked = client.events().find((e) => e.type === 'approval_required') as unknown as { approvalId: string; runId: string };
        for (let attempt = 0; ; attempt++) {
          const decided = await call(b!, 'POST', '/api/chat/approve', { body: { approvalId: asked.approvalId, decision: 'approve' } });
          if (decided.status === 202 || attempt >= 40) return { runId, asked, status: decided.status, json: decided.json };
          await pause(250);
        }
      });

      // The kill: once enough runs have completed, freeze the victim (SIGSTOP), and read in one
      // statement the calls it executed in runs it still holds that have no stored result. None:
      // let it go on and look again. Some: SIGKILL it while frozen, so they were in flight.
      await until('runs to complete before the kill', async () => {
        const [row] = await adminQuery<{ n: string }>(`SELECT count(*) AS n FROM ${t}.troupe_runs WHERE status = 'completed'`);
        return Number(row!.n) >= COMPLETED_BEFORE_KILL ? true : undefined;
      });
      const inFlightSql = `SELECT x.run_id, x.call_id FROM ${t}.test_executions x JOIN ${t}.troupe_leases l ON l.run_id = x.run_id AND l.owner = $1
        WHERE x.pid = $2 AND NOT EXISTS (SELECT 1 FROM ${t}.troupe_entries e WHERE e.run_id = x.run_id AND e.kind = 'result' AND e.data::json -> 'message' ->> 'callId' = x.call_id)
        ORDER BY x.run_id, x.call_id`;
      let held: string[] = [];
      let lastEventId = 0;
      const inFlight = await until('the victim to have calls in flight', async () => {
        victim.process.signal('SIGSTOP');
        // Statements it sent before it froze finish on their own; let them, then look.
        await pause(100);
        const rows = await adminQuery<{ run_id: string; call_id: string }>(inFlightSql, [victim.owner, victim.process.pid]);
        // Not while it holds a run whose head is already finished: it may not have published that
        // run's last events yet. Its watchers then get the end from the log after a few seconds
        // (remote-streams.test.ts proves that), not from a survivor, which check 5 below asks for.
        const finishing = await adminQuery(`SELECT 1 FROM ${t}.troupe_leases l JOIN ${t}.troupe_runs r ON r.run_id = l.run_id WHERE l.owner = $1 AND r.status <> 'running'`, [victim.owner]);
        if (rows.length === 0 || finishing.length > 0) {
          victim.process.signal('SIGCONT');
          // It renews its leases before the next freeze: a worker kept frozen loses its runs while alive.
          await pause(FREEZE_GAP_MS);
          return undefined;
        }
        held = (await adminQuery<{ run_id: string }>(`SELECT run_id FROM ${t}.troupe_leases WHERE owner = $1 ORDER BY run_id`, [victim.owner])).map((r) => r.run_id);
        const [row] = await adminQuery<{ last: string }>(`SELECT coalesce(max(id), 0) AS last FROM ${t}.troupe_events`);
        lastEventId = Number(row!.last);
        return rows;
      });
      victim.process.signal('SIGKILL');
      expect(await victim.process.exited).toBe('SIGKILL');
      /** What the store, the bus and the worker logs say of a run whose stream did not end. */
      const explain = async (runId: string): Promise<string> => {
        const [head] = await adminQuery(`SELECT r.status, r.entry_count, l.owner, l.expires_at FROM ${t}.troupe_runs r LEFT JOIN ${t}.troupe_leases l ON l.run_id = r.run_id WHERE r.run_id = $1`, [runId]);
        const stored = await adminQuery<{ id: string; type: string }>(`SELECT id, type FROM ${t}.troupe_events WHERE run_id = $1 ORDER BY id`, [runId]);
        const seen = streamOf.get(runId)!.frames.map((f) => `${f.id}:${f.event}`);
        const logs = workers.map((w) => w.process.output().split('\n').filter((line) => line.includes(runId)).join(' | '));
        return JSON.stringify({ runId, agent: agentOf.get(runId), held: held.includes(runId), now: Date.now(), head, stored: stored.map((e) => `${e.id}:${e.type}`), seen, logs });
      };
      const inFlightRuns = [...new Set(inFlight.map((r) => r.run_id))];
      expect(inFlightRuns.every((id) => held.includes(id))).toBe(true);

      // Every stream on A ends, every head is completed (a stream that does not end is named with what the store says).
      for (const runId of runIds) {
        await streamOf.get(runId)!.all(60_000).catch(async (error: unknown) => {
          throw new Error(`${(error as Error).message}: ${await explain(runId)}`);
        });
      }
      const decided = await Promise.all(decisions);
      const heads = await until('every run to be completed', async () => {
        const runs = await store.list();
        return runs.length === RUNS && runs.every((r) => r.head.status === 'completed') ? runs : undefined;
      });

      // 1. Every run's stored head: completed with output "done".
      expect(heads.map((r) => [r.runId, r.head.status, r.head.output]).sort()).toEqual(runIds.map((id) => [id, 'completed', 'done']));

      // 2. Every run's log: exactly one result per call id, the five its agent asks for.
      const logs = new Map<string, readonly CheckpointEntry[]>();
      for (const runId of runIds) logs.set(runId, (await store.load(runId))!.entries);
      for (const runId of runIds) expect([runId, resultIds(logs.get(runId)!)]).toEqual([runId, expectedCalls(agentOf.get(runId)!)]);

      // 3. Executions: every (run, call) ran; the ones that ran twice are exactly the calls in
      // flight on the killed worker, first there, then once on a survivor; all others ran once.
      const executions = await adminQuery<{ run_id: string; call_id: string; pid: number }>(`SELECT run_id, call_id, pid FROM ${t}.test_executions ORDER BY seq`);
      const pidsOf = new Map<string, number[]>();
      for (const row of executions) pidsOf.set(key(row.run_id, row.call_id), [...(pidsOf.get(key(row.run_id, row.call_id)) ?? []), row.pid]);
      const expectedKeys = runIds.flatMap((id) => expectedCalls(agentOf.get(id)!).map((c) => key(id, c))).sort();
      expect([...pidsOf.keys()].sort()).toEqual(expectedKeys);
      const twice = [...pidsOf].filter(([, pids]) => pids.length > 1).map(([k]) => k).sort();
      expect(twice).toEqual(inFlight.map((r) => key(r.run_id, r.call_id)).sort());
      const survivors = workers.slice(1).map((w) => w.process.pid);
      for (const k of twice) {
        const pids = pidsOf.get(k)!;
        expect([k, pids.length, pids[0]]).toEqual([k, 2, victim.process.pid]);
        expect(survivors).toContain(pids[1]);
      }
      expect(inFlight.length).toBeGreaterThan(0);

      // 4. Approvals: payout ran only in approver runs (in each of them; once, unless it was in
      // flight at the kill), and each approver run's log holds one decision: its own approval's.
      const payoutRuns = [...pidsOf.keys()].filter((k) => k.endsWith(' p1')).map((k) => k.split(' ')[0]!).sort();
      expect(payoutRuns).toEqual(approverRuns);
      for (const result of decided) {
        expect(result.status).toBe(202);
        expect(result.asked.runId).toBe(result.runId);
        expect(result.json).toEqual({ runId: result.runId, approvalId: result.asked.approvalId, callId: 'p1', decision: 'approve', statusUrl: `/api/runs/${result.runId}/waits/${encodeURIComponent(result.asked.approvalId)}`, delivered: 'sent to the run’s worker' });
      }
      for (const runId of runIds) {
        const entries = logs.get(runId)!;
        const requests = entries.filter((e) => e.kind === 'approval_request');
        const decisionsLogged = entries.filter((e) => e.kind === 'approval_decision');
        if (agentOf.get(runId) === 'fiver') {
          expect([runId, requests.length, decisionsLogged.length]).toEqual([runId, 0, 0]);
          continue;
        }
        const askedOnA = decided.find((d) => d.runId === runId)!.asked.approvalId;
        expect(requests.map((e) => [e.approvalId, e.callId, e.tool])).toEqual([[askedOnA, 'p1', 'payout']]);
        expect(askedOnA.startsWith(`${runId}:`)).toBe(true);
        // Applied to the live run ("consumer"), or, in a run the killed worker held, possibly
        // written into its log by the survivor before resuming it ("api", the message's sender).
        const by = held.includes(runId) ? decisionsLogged[0]?.by : 'consumer';
        expect(['consumer', 'api']).toContain(by);
        expect(decisionsLogged.map((e) => [e.approvalId, e.callId, e.approved, e.by])).toEqual([[askedOnA, 'p1', true, by]]);
      }

      // 5. A's streams: every run's ends with its one run_completed ("done"); for the runs the
      // killed worker held, that event came from the survivor that resumed it.
      for (const runId of runIds) {
        const events = streamOf.get(runId)!.events();
        // A stream that ends otherwise shows its last event's error (and whether it came from the log) in the diff.
        const last = events.at(-1) as { output?: unknown; error?: unknown; fromLog?: boolean } | undefined;
        expect([runId, events.filter((e) => e.type === 'run_completed').length, events.at(-1)?.type, last?.output ?? { error: last?.error, fromLog: last?.fromLog }] as unknown[]).toEqual([
          runId,
          1,
          'run_completed',
          'done',
        ]);
      }
      for (const runId of held) {
        const frames = streamOf.get(runId)!.frames;
        expect(Number(frames.at(-1)!.id)).toBeGreaterThan(lastEventId);
      }
      expect(held.length).toBeGreaterThan(0);
    },
    180_000,
  );


  it('a run started through server process A is watched and cancelled through server process B; both streams end with the cancel and the worker stops its call', async () => {
    const schema = await freshSchema();
    await adminQuery(`CREATE TABLE "${schema}".test_executions (seq bigint GENERATED ALWAYS AS IDENTITY, run_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL)`);
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    stores.push(store);
    const [, [a, b]] = (await Promise.all([
      startWorkerProcess(POSTGRES_URL!, schema, { concurrency: 2, leaseTtlMs: LEASE_TTL_MS, pollMs: 100, env: {} }),
      Promise.all([startServeProcess(POSTGRES_URL!, schema, 'token-server-a'), startServeProcess(POSTGRES_URL!, schema, 'token-server-b')]),
    ])) as [WorkerProcess, ServeAddress[]];
    const started = await openSse(a!, 'POST', '/api/chat', { body: { agent: 'hanger', input: 'wait' } });
    streams.push(started);
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'tool_call_started'), 30_000);
    const watched = await openSse(b!, 'GET', `/api/runs/${runId}/stream`);
    streams.push(watched);
    await watched.until((frames) => frames.some((f) => f.event === 'tool_call_started'), 30_000);
    const cancel = await call(b!, 'POST', '/api/chat/cancel', { body: { runId } });
    expect([cancel.status, cancel.json]).toEqual([202, { runId, status: 'cancelling' }]);
    await Promise.all([started.all(30_000), watched.all(30_000)]);
    const kinds = (client: SseClient) => client.events().filter((e) => e.type !== 'checkpoint_saved').map((e) => e.type);
    expect(kinds(started)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started', 'tool_call_completed', 'run_failed']);
    expect(kinds(watched)).toEqual(kinds(started));
    expect(watched.frames.map((f) => f.id)).toEqual(started.frames.map((f) => f.id));
    expect(started.events().at(-1)).toMatchObject({ type: 'run_failed', runId, error: { code: 'RUN_CANCELLED' } });
    expect((await store.load(runId))!.head.status).toBe('cancelled');
  }, 60_000);
});
