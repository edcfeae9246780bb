import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../src/errors.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { POSTGRES_URL, adminQuery } from '../store/harnesses.js';
import { call, eventually, openSse, type SseClient } from '../server/helpers.js';
import { useCluster } from './cluster-harness.js';
import { TcpProxy } from './tcp-proxy.js';

const resultsByCall = (entries: readonly { kind: string; message?: unknown }[]) =>
  entries.filter((e) => e.kind === 'result').map((e) => (e.message as { callId: string }).callId).sort();

describe(`cluster nodes when the database fails`, () => {
  const cluster = useCluster();
  const open: SseClient[] = [];
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    for (const client of open.splice(0)) client.close();
    for (const proxy of proxies.splice(0)) await proxy.stop();
    delete process.env.TROUPE_TEST_WORK_MS;
  });
  const proxy = async () => {
    const target = new URL(POSTGRES_URL!);
    const p = new TcpProxy(target.hostname, Number(target.port));
    await p.start();
    proxies.push(p);
    return p;
  };

  it('a worker whose listening connection is killed listens again and still gets the messages sent to its runs', async () => {
    const c = await cluster();
    const server = await c.server();
    await c.worker({ owner: 'listener-test' });
    const started = await openSse(server, 'POST', '/api/chat', { body: { agent: 'hanger', input: 'go' } });
    open.push(started);
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    // Every listening connection of this schema is killed: the server's (last LISTEN: events) and the worker's (messages).
    const listeners = () => adminQuery<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'troupe listener' AND query IN ('LISTEN "troupe_e_${c.schema}"', 'LISTEN "troupe_m_${c.schema}"')`);
    const before = (await listeners()).map((row) => row.pid);
    expect(before.length).toBe(2);
    await adminQuery('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before]);
    // Both listen again on new connections; then a cancel sent through the server reaches the worker.
    await eventually(listeners, (rows) => rows.length === 2 && rows.every((row) => !before.includes(row.pid)), 10_000);
    expect((await call(server, 'POST', '/api/chat/cancel', { body: { runId } })).status).toBe(202);
    await started.all();
    expect(started.events().at(-1)).toMatchObject({ type: 'run_failed', error: { code: 'RUN_CANCELLED' } });
  });

  it('a worker cut off from the database mid-run loses no stored result; once the database is back the run resumes from its log and completes, each call stored once', async () => {
    const c = await cluster();
    const server = await c.server();
    const cut = await proxy();
    process.env.TROUPE_TEST_WORK_MS = '150';
    const lines: string[] = [];
    await c.worker({ owner: 'cut-off', leaseTtlMs: 1_500, pollMs: 200, log: (line) => lines.push(line) }, cut.route(POSTGRES_URL!));
    const started = await openSse(server, 'POST', '/api/chat', { body: { agent: 'fiver', input: 'go' } });
    open.push(started);
    const runId = started.res.headers['x-run-id'] as string;
    await started.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    cut.cut();
    // The calls finish while the database is away: their results cannot be stored, and the run
    // stops on this worker (StoreUnavailable) without telling watchers it failed.
    await eventually(() => lines, (seen) => seen.some((line) => line.startsWith(`run ${runId}: failed: StoreUnavailable: `)), 20_000);
    const during = (await c.store.load(runId))!;
    expect(during.head.status).toBe('running');
    expect(started.events().some((e) => e.type === 'run_failed')).toBe(false);
    cut.restore();
    await started.all(20_000);
    expect(started.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    const saved = (await c.store.load(runId))!;
    expect(saved.head.status).toBe('completed');
    expect(resultsByCall(saved.entries)).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
    // Results stored before the cut were kept; the calls whose results were lost ran again.
    const executed = (await c.executions()).map((row) => row.call_id);
    expect(new Set(executed)).toEqual(new Set(['w0', 'w1', 'w2', 'w3', 'w4']));
    expect(executed.length).toBe(5 + (5 - resultsByCall(during.entries).length));
  });

  it('a bus on an unreachable database or with wrong credentials fails with StoreUnavailable naming it, and writes nothing', async () => {
    const c = await cluster();
    const down = await proxy();
    down.cut();
    const unreachable = new PostgresRunBus({ connectionString: down.route(POSTGRES_URL!), connectionTimeoutMillis: 1_000 }, { schema: c.schema });
    const wrong = new URL(POSTGRES_URL!);
    wrong.password = 'wrong-password';
    const refused = new PostgresRunBus(wrong.toString(), { schema: c.schema });
    try {
      for (const bus of [unreachable, refused]) {
        const error = await bus.send('r1', { kind: 'cancel' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreUnavailable);
        expect((error as Error).message).toMatch(new RegExp(`^Cannot use PostgreSQL run bus 'postgres://postgres@127\\.0\\.0\\.1:\\d+/troupe_test' schema '${c.schema}': .+; nothing was written\\.$`));
        expect(await bus.listen({}).catch((e: unknown) => e)).toBeInstanceOf(StoreUnavailable);
      }
      expect(await adminQuery(`SELECT count(*)::int AS n FROM "${c.schema}".troupe_messages`)).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all([unreachable.close(), refused.close()]);
    }
  });
});
