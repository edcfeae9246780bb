/**
 * Retention of the cluster's stored run events (troupe_events): `troupe db prune` in its own
 * process, and workers pruning on a schedule at once. What is pruned is only the event stream;
 * a client attached to it afterwards is told (410 events_pruned, naming where the result is),
 * and the run's log, detail and resume are exactly as before.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/index.js';
import { POSTGRES_URL, adminQuery } from '../store/harnesses.js';
import { call, openSse, trace, type SseClient } from '../server/helpers.js';
import { fiver } from './agents.js';
import { useCluster } from './cluster-harness.js';
import { CLUSTER_AGENTS, killAll, spawnTroupe } from './troupe-process.js';

const exec = promisify(execFile);

/** The real CLI in its own process. */
async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('retention of stored run events on a cluster', () => {
  const cluster = useCluster();
  const open: SseClient[] = [];
  afterEach(async () => {
    for (const client of open.splice(0)) client.close();
    await killAll();
  });
  const runToEnd = async (server: Parameters<typeof openSse>[0]) => {
    const client = await openSse(server, 'POST', '/api/chat', { body: { agent: 'fiver', input: 'go' } });
    open.push(client);
    await client.all();
    return { runId: client.res.headers['x-run-id'] as string, client };
  };

  it('troupe db prune (dry run, then for real) prunes the older finished run; its stream answers 410 naming where its result is; its log, detail and resume are unchanged', { timeout: 90_000 }, async () => {
    const c = await cluster();
    const [a, b] = [await c.server(), await c.server()];
    await c.worker();
    const older = await runToEnd(a);
    const newer = await runToEnd(a);
    expect(older.client.events().at(-1)).toMatchObject({ type: 'run_completed', output: 'done' });
    const logBefore = await c.store.load(older.runId);
    const detailBefore = await call(b, 'GET', `/api/runs/${older.runId}`);
    const stats = await adminQuery<{ n: number; last: string; finished: string }>(
      `SELECT count(*)::int AS n, max(e.id)::text AS last, max(r.updated_at)::text AS finished FROM "${c.schema}".troupe_events e JOIN "${c.schema}".troupe_runs r ON r.run_id = e.run_id WHERE e.run_id = $1`,
      [older.runId],
    );
    const { n, last, finished } = stats[0]!;
    expect(n).toBe(older.client.frames.length);
    const line = `  ${older.runId}  completed  finished ${new Date(Number(finished)).toISOString()}  ${n} events\n`;
    const args = ['db', 'prune', '--db', POSTGRES_URL!, '--schema', c.schema, '--keep-last', '1'];
    expect(await troupe(...args, '--dry-run')).toEqual({ code: 0, stdout: `dry run: would prune ${n} events of 1 run (nothing deleted; logs are never pruned):\n${line}`, stderr: '' });
    expect((await adminQuery(`SELECT count(*)::int AS n FROM "${c.schema}".troupe_events WHERE run_id = $1`, [older.runId]))[0]).toEqual({ n });
    expect(await troupe(...args)).toEqual({ code: 0, stdout: `pruned ${n} events of 1 run (their logs are kept):\n${line}`, stderr: '' });
    const marker = await adminQuery<{ id: string; data: string }>(`SELECT id::text, data FROM "${c.schema}".troupe_events WHERE run_id = $1`, [older.runId]);
    const prunedAt = (JSON.parse(marker[0]!.data) as { prunedAt: number }).prunedAt;
    expect(marker).toEqual([{ id: last, data: JSON.stringify({ type: 'troupe.events_pruned', runId: older.runId, through: Number(last), prunedAt }) }]);
    // A client attaching to the pruned stream, on either node, from the start or from an old cursor: 410 saying where the truth is.
    const message = `The events of run '${older.runId}' up to event ${last} were pruned at ${new Date(prunedAt).toISOString()} (event retention); its log and result are kept: read them with GET /api/runs/${older.runId} or store.load('${older.runId}').`;
    for (const [server, headers] of [[a, {}], [b, { 'last-event-id': older.client.frames[0]!.id! }]] as const) {
      const gone = await call(server, 'GET', `/api/runs/${older.runId}/stream`, { headers });
      expect([gone.status, gone.json]).toEqual([410, { error: { code: 'events_pruned', message } }]);
    }
    // The AI SDK UI message stream (useChat's resume) of the pruned run is refused the same way.
    const goneUi = await call(a, 'GET', `/api/runs/${older.runId}/stream?protocol=ui`);
    expect([goneUi.status, goneUi.json]).toEqual([410, { error: { code: 'events_pruned', message } }]);
    // The newer run's stream replays as it did.
    const replay = await openSse(b, 'GET', `/api/runs/${newer.runId}/stream`);
    open.push(replay);
    await replay.all();
    expect(trace(replay.events())).toEqual(trace(newer.client.events()));
    expect(replay.frames.map((f) => f.id)).toEqual(newer.client.frames.map((f) => f.id));
    // The truth is untouched: the log, the run's detail, and a resume that returns the stored result without a model call.
    expect(await c.store.load(older.runId)).toEqual(logBefore);
    const detailAfter = await call(a, 'GET', `/api/runs/${older.runId}`);
    expect([detailAfter.status, detailAfter.json]).toEqual([200, detailBefore.json]);
    expect(detailAfter.json).toMatchObject({ runId: older.runId, status: 'completed', output: 'done' });
    const resumed = await Runner.run(fiver(), 'go', { checkpoint: { store: c.store, runId: older.runId, ifRunExists: 'resume' } });
    expect([resumed.runId, resumed.output, resumed.turns]).toEqual([older.runId, 'done', logBefore!.head.turn]);
    expect((await c.store.load(older.runId))?.entries).toEqual(logBefore?.entries);
  });

  it('workers pruning on a schedule at once prune each finished run once', { timeout: 60_000 }, async () => {
    const c = await cluster();
    const a = await c.server();
    await c.worker();
    const done = [await runToEnd(a), await runToEnd(a), await runToEnd(a)].map((run) => run.runId).sort();
    const lines: string[][] = [[], []];
    const pruned = (i: number) => new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (lines[i]!.some((l) => l.startsWith('pruned'))) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    await Promise.all([0, 1].map((i) => c.worker({ pruneEvents: { keepLast: 0, every: '1h' }, log: (l) => lines[i]!.push(l) })));
    await Promise.all([pruned(0), pruned(1)]);
    const reported = lines.flatMap((l) => l.flatMap((x) => /^pruned \d+ stored events of \d+ finished runs: (.*)$/.exec(x)?.[1]!.split(', ') ?? []));
    expect(reported.sort()).toEqual(done);
    expect(lines.flatMap((l) => l.filter((x) => x.startsWith('pruned')))).toHaveLength(2);
    expect(await adminQuery(`SELECT run_id, type FROM "${c.schema}".troupe_events ORDER BY run_id`)).toEqual(done.map((runId) => ({ run_id: runId, type: 'troupe.events_pruned' })));
  });

  it('a troupe worker process started with --prune-keep-last prunes the finished runs but the last ones when it starts', { timeout: 60_000 }, async () => {
    const c = await cluster();
    const a = await c.server();
    const worker = await c.worker();
    const finished = [await runToEnd(a), await runToEnd(a), await runToEnd(a)];
    const done = finished.map((run) => run.runId);
    await worker.stop();
    const newest = (await adminQuery<{ run_id: string }>(`SELECT run_id FROM "${c.schema}".troupe_runs ORDER BY updated_at DESC, position DESC LIMIT 1`))[0]!.run_id;
    const older = done.filter((id) => id !== newest);
    const child = spawnTroupe(['worker', '--db', POSTGRES_URL!, '--schema', c.schema, '--agents', CLUSTER_AGENTS, '--prune-keep-last', '1', '--prune-every', '1h']);
    const [, events, runs, ids] = await child.waitFor(/^pruned (\d+) stored events of (\d+) finished runs: (.*)$/m);
    expect([runs, ids!.split(', ').sort()]).toEqual(['2', older.sort()]);
    const left = await adminQuery<{ run_id: string; type: string; n: number }>(`SELECT run_id, min(type) AS type, count(*)::int AS n FROM "${c.schema}".troupe_events GROUP BY run_id ORDER BY run_id`);
    expect(left.filter((row) => row.run_id !== newest)).toEqual(older.sort().map((runId) => ({ run_id: runId, type: 'troupe.events_pruned', n: 1 })));
    expect(left.find((row) => row.run_id === newest)?.n).toBe(finished.find((run) => run.runId === newest)!.client.frames.length);
    const prunedEvents = finished.filter((run) => run.runId !== newest).reduce((sum, run) => sum + run.client.frames.length, 0);
    expect(Number(events)).toBe(prunedEvents);
  });
});
