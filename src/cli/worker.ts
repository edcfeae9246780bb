import { parseArgs } from 'node:util';
import { StoreUnavailable, UserError } from '../errors.js';
import { parseDuration } from '../store/event-retention.js';
import type { EventPruning } from '../worker/event-pruning.js';
import { loadAgents } from './load-agents.js';

export const WORKER_USAGE = `usage: troupe worker --db <postgres://…> --agents <module> [options]

Runs enqueued runs (enqueueRun from troupe/postgres) and resumes runs whose process died,
taking them from PostgreSQL with FOR UPDATE SKIP LOCKED under a renewed lease. Start as many
workers as you like on one database. SIGINT/SIGTERM: stop taking runs, finish the ones in
progress; a second signal exits at once (their leases expire and other workers resume them).

options:
  --db <url>           the database (default: $TROUPE_DATABASE_URL); run \`troupe db migrate\` first
  --agents <module>    ESM module exporting \`agents\` (or a default export): { name: Agent | () => Agent }
  --schema <name>      the schema of troupe's tables (default public)
  --concurrency <n>    runs at once (default 4)
  --lease-ttl <ms>     lease time, renewed every third of it (default 30000)
  --poll <ms>          wait between polls when there is no work (default 1000; NOTIFY wakes it sooner)
  --approval-timeout <ms>  deny undecided approvals after this long (default: they wait for a decision)
  --suspend-approvals  park a run that waits only on approvals (frees this worker's slot; any worker
                       resumes it once a decision arrives): for approvals that take hours or days
  --prune-older-than <duration>  prune the stored events of runs that finished this long ago (7d, 12h, …)
  --prune-keep-last <runs>       prune the stored events of all finished runs but the last <runs>
  --prune-every <duration>       how often to prune (default 1h; first when the worker starts); as
                                 \`troupe db prune\`, safe on every worker, logs are never pruned
`;

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UserError(`--${name} must be a positive integer, got '${value}'.`);
  return n;
}

/** The worker's `pruneEvents` from its --prune-* flags; undefined without them. @throws UserError naming the flag. */
function pruningOptions(olderThan: string | undefined, keepLast: string | undefined, every: string | undefined): EventPruning | undefined {
  if (olderThan === undefined && keepLast === undefined) {
    if (every !== undefined) throw new UserError('--prune-every needs --prune-older-than and/or --prune-keep-last.');
    return undefined;
  }
  if (keepLast !== undefined && !/^\d+$/.test(keepLast)) throw new UserError(`--prune-keep-last must be a whole number of runs (0 or more), got '${keepLast}'.`);
  return {
    ...(olderThan !== undefined ? { olderThan: parseDuration(olderThan, '--prune-older-than') } : {}),
    ...(keepLast !== undefined ? { keepLast: Number(keepLast) } : {}),
    ...(every !== undefined ? { every: parseDuration(every, '--prune-every') } : {}),
  };
}

/**
 * `troupe worker`: resolves with the exit code once the worker has stopped (after a signal).
 * 1 when the database cannot be reached, 2 for bad arguments, agents or tables (the migrate hint).
 */
export async function worker(argv: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(WORKER_USAGE);
    return 0;
  }
  let options: { url: string; agents: string; schema?: string; concurrency?: number; leaseTtlMs?: number; pollMs?: number; approvalTimeoutMs?: number; suspendOnWait: boolean; pruneEvents?: EventPruning };
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        db: { type: 'string' },
        agents: { type: 'string' },
        schema: { type: 'string' },
        concurrency: { type: 'string' },
        'lease-ttl': { type: 'string' },
        poll: { type: 'string' },
        'approval-timeout': { type: 'string' },
        'suspend-approvals': { type: 'boolean' },
        'prune-older-than': { type: 'string' },
        'prune-keep-last': { type: 'string' },
        'prune-every': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    const url = values.db ?? process.env.TROUPE_DATABASE_URL;
    if (!url) throw new UserError('--db is required (or set TROUPE_DATABASE_URL).');
    if (!values.agents) throw new UserError('--agents is required.');
    const concurrency = positiveInt(values.concurrency, 'concurrency');
    const leaseTtlMs = positiveInt(values['lease-ttl'], 'lease-ttl');
    const pollMs = positiveInt(values.poll, 'poll');
    const approvalTimeoutMs = positiveInt(values['approval-timeout'], 'approval-timeout');
    const pruneEvents = pruningOptions(values['prune-older-than'], values['prune-keep-last'], values['prune-every']);
    options = {
      url,
      agents: values.agents,
      ...(values.schema !== undefined ? { schema: values.schema } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
      ...(pollMs !== undefined ? { pollMs } : {}),
      ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
      suspendOnWait: values['suspend-approvals'] === true,
      ...(pruneEvents !== undefined ? { pruneEvents } : {}),
    };
  } catch (error) {
    err(`troupe worker: ${(error as Error).message}\n\n${WORKER_USAGE}`);
    return 2;
  }
  const [{ PostgresCheckpointStore }, { PostgresRunBus }, { startWorker }] = await Promise.all([
    import('../store/postgres-checkpoint-store.js'),
    import('../store/postgres-bus.js'),
    import('../worker/worker.js'),
  ]);
  const storeOptions = options.schema !== undefined ? { schema: options.schema } : {};
  const store = new PostgresCheckpointStore(options.url, storeOptions);
  const bus = new PostgresRunBus(options.url, storeOptions);
  try {
    const agents = await loadAgents(options.agents);
    // Fail fast on an unusable database (unreachable, not migrated) instead of logging it every poll.
    await store.load('troupe-worker-check');
    const { concurrency, leaseTtlMs, pollMs, approvalTimeoutMs, suspendOnWait, pruneEvents } = options;
    const running = startWorker({
      store,
      bus,
      agents,
      suspendOnWait,
      ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
      log: out,
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
      ...(pollMs !== undefined ? { pollMs } : {}),
      ...(pruneEvents !== undefined ? { pruneEvents } : {}),
    });
    out(`troupe worker ${running.owner}: ${Object.keys(agents).join(', ')}; concurrency ${options.concurrency ?? 4}`);
    await new Promise<void>((resolve) => {
      const onSignal = (): void => {
        process.once('SIGINT', () => process.exit(130));
        process.once('SIGTERM', () => process.exit(143));
        out('troupe worker: stopping (finishing the runs in progress; signal again to exit now)');
        void running.stop().then(resolve);
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
    });
    return 0;
  } catch (error) {
    err(`troupe worker: ${(error as Error).message}`);
    return error instanceof StoreUnavailable ? 1 : 2;
  } finally {
    await Promise.all([store.close(), bus.close()]);
  }
}
