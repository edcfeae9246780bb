/**
 * In-process cluster for tests: server nodes (createServer with `cluster`) and workers
 * (startWorker with a bus) on one fresh PostgreSQL schema, each with its own store, bus and
 * connections, as separate processes would have. Everything opened is closed after each test.
 */
import { afterEach } from 'vitest';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { PostgresRunBus } from '../../src/store/postgres-bus.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { startWorker, type Worker, type WorkerOptions } from '../../src/worker/worker.js';
import { POSTGRES_URL, adminQuery, usePostgresSchema } from '../store/harnesses.js';
import { agents } from './agents.js';

export interface Cluster {
  readonly schema: string;
  /** A store of its own for the test's checks. */
  readonly store: PostgresCheckpointStore;
  server(): Promise<TroupeServer>;
  /** A worker with its own store and bus, connecting to `url` (default: the test database; a TcpProxy route to cut it off). */
  worker(options?: Partial<Omit<WorkerOptions, 'store' | 'bus' | 'agents'>>, url?: string): Promise<Worker>;
  /** Rows of the executions table the agents write to. */
  executions(): Promise<Array<{ run_id: string; call_id: string }>>;
}

export function useCluster(): () => Promise<Cluster> {
  const freshSchema = usePostgresSchema();
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    delete process.env.TROUPE_TEST_EXEC_URL;
    delete process.env.TROUPE_TEST_EXEC_SCHEMA;
  });
  return async () => {
    const schema = await freshSchema();
    await adminQuery(`CREATE TABLE "${schema}".test_executions (run_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL)`);
    process.env.TROUPE_TEST_EXEC_URL = POSTGRES_URL!;
    process.env.TROUPE_TEST_EXEC_SCHEMA = schema;
    const open = (url = POSTGRES_URL!) => {
      // Short connect timeouts: a test that cuts the database off sees the failure soon.
      const store = new PostgresCheckpointStore({ connectionString: url, connectionTimeoutMillis: 1_000 }, { schema });
      const bus = new PostgresRunBus({ connectionString: url, connectionTimeoutMillis: 1_000 }, { schema });
      closers.push(() => Promise.all([store.close(), bus.close()]));
      return { store, bus };
    };
    const { store } = open();
    return {
      schema,
      store,
      async server() {
        const { store: own, bus } = open();
        const server = await createServer({ agents, cluster: { store: own, bus } });
        closers.push(() => server.close());
        return server;
      },
      async worker(options = {}, url?: string) {
        const { store: own, bus } = open(url);
        const worker = startWorker({ store: own, bus, agents, pollMs: 2_000, leaseTtlMs: 3_000, ...options });
        closers.push(() => worker.stop());
        await worker.listening;
        return worker;
      },
      executions: () => adminQuery(`SELECT run_id, call_id FROM "${schema}".test_executions ORDER BY call_id`),
    };
  };
}
