import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { InspectMode } from '../inspect/feed.js';
import { banner, startDemoServer } from '../server/demo.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import { loadAgents } from './load-agents.js';
import { SqliteCheckpointStore } from '../store/sqlite-checkpoint-store.js';
import { createServer, type AgentSource, type TroupeServer } from '../server/server.js';
import type { ServerCluster } from '../server/cluster-routes.js';

export const SERVE_USAGE = `usage: troupe serve [options]

Starts the HTTP API and the live inspector (loopback only by default).

options:
  --agents <module>        ESM module exporting \`agents\` (or a default export): { name: Agent | () => Agent }
                           (default: the scripted demo agent, as "demo")
  --port <n>               default 4317 (0 = any free port)
  --host <addr>            default 127.0.0.1
  --allowed-host <name>    also accept this Host header (repeatable; localhost, 127.0.0.1, [::1] and
                           the bound address always are; others get 403 host_not_allowed)
  --request-timeout <ms>   the whole request must arrive within this, else 408 (default 30000; 0 = none)
  --token <token>          bearer token, 8+ characters, no whitespace (default: $TROUPE_TOKEN, else a random one, printed)
  --approval-timeout <ms>  auto-deny undecided approvals after this long (default 300000)
  --inspect <mode>         on-demand | always | off (default: always for the demo, on-demand otherwise)
  --db <file|url>          where runs are checkpointed: a SQLite file (default .troupe/troupe.sqlite), a
                           postgres://… URL (run \`troupe db migrate\` first), or "off" (none)
  --schema <name>          with a postgres:// --db: the schema of troupe's tables (default public)
  --coverage <file>        a coverage report (JSON of exploreAgent(...).coverage or CoverageRecorder.report())
                           for the inspector's "coverage" switch to lay onto the run chart; read again at each
                           load, so a rerun of your tests shows when the page switches coverage on again
  --workers <where>        in-process (default): this server runs the runs; external: \`troupe worker\`
                           processes on the same postgres:// --db run them, and this server enqueues
                           runs, streams their events and sends approvals, cancels and steers to the
                           worker that owns each run (needs --agents, the module the workers load)
`;

/**
 * `troupe serve`: starts the server and prints its URL, the inspector URL (token in the
 * fragment) and the token. Resolves once listening; the process stays up while it serves.
 * Throws an Error with a usage message on bad arguments.
 */
export async function serve(argv: readonly string[], out: (line: string) => void = console.log): Promise<TroupeServer> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      agents: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'allowed-host': { type: 'string', multiple: true },
      'request-timeout': { type: 'string' },
      token: { type: 'string' },
      'approval-timeout': { type: 'string' },
      inspect: { type: 'string' },
      db: { type: 'string' },
      schema: { type: 'string' },
      workers: { type: 'string' },
      coverage: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = values.port === undefined ? 4317 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be an integer 0-65535, got '${values.port}'.\n\n${SERVE_USAGE}`);
  const approvalTimeoutMs = values['approval-timeout'] === undefined ? undefined : Number(values['approval-timeout']);
  if (approvalTimeoutMs !== undefined && !(approvalTimeoutMs >= 0)) throw new Error(`--approval-timeout must be a non-negative number of ms.\n\n${SERVE_USAGE}`);
  const requestTimeoutMs = values['request-timeout'] === undefined ? undefined : Number(values['request-timeout']);
  if (requestTimeoutMs !== undefined && !(Number.isInteger(requestTimeoutMs) && requestTimeoutMs >= 0)) throw new Error(`--request-timeout must be a non-negative integer of ms.\n\n${SERVE_USAGE}`);
  const allowedHosts = values['allowed-host'] ?? [];
  const inspect = values.inspect as InspectMode | undefined;
  if (inspect !== undefined && !['on-demand', 'always', 'off'].includes(inspect)) throw new Error(`--inspect must be on-demand, always or off.\n\n${SERVE_USAGE}`);
  const token = values.token ?? process.env.TROUPE_TOKEN ?? undefined;
  // Checked before anything is opened or printed: a refused start leaves no store behind and says nothing else.
  if (token !== undefined && (token.length < 8 || /\s/.test(token))) {
    throw new Error(`${values.token !== undefined ? '--token' : '$TROUPE_TOKEN'} must be at least 8 characters without whitespace (leave it out for a random one).\n\n${SERVE_USAGE}`);
  }
  const workers = values.workers ?? 'in-process';
  if (workers !== 'in-process' && workers !== 'external') throw new Error(`--workers must be in-process or external, got '${workers}'.\n\n${SERVE_USAGE}`);
  const db = values.db ?? '.troupe/troupe.sqlite';
  if (workers === 'external') {
    if (!/^postgres(ql)?:\/\//.test(db)) throw new Error(`--workers external needs a postgres:// --db (the workers share it).\n\n${SERVE_USAGE}`);
    if (values.agents === undefined) throw new Error(`--workers external needs --agents (the module the workers load), so the server knows the agents' names.\n\n${SERVE_USAGE}`);
  }
  const store = db === 'off' ? undefined : await checkpointStoreFor(db, values.schema);
  const cluster = workers === 'external' && store ? await clusterFor(db, values.schema, store.store) : undefined;
  const common = {
    ...(cluster ? { cluster } : store ? { checkpointStore: store.store } : {}),
    port,
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(token ? { token } : {}),
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    ...(inspect ? { inspect } : {}),
    ...(values.coverage !== undefined ? { coverage: resolve(values.coverage) } : {}),
  };
  if (values.coverage !== undefined) out(`  coverage:  ${resolve(values.coverage)} (the inspector's "coverage" switch)`);
  if (store) out(cluster ? `  runs are enqueued for troupe worker processes on ${store.where}` : `  runs are checkpointed to ${store.where}`);
  if (values.agents === undefined) return startDemoServer({ ...common, out });
  const agents = await loadAgents(values.agents);
  const server = await createServer({ ...common, agents });
  out(banner(server));
  out(`  agents:    ${Object.keys(agents).join(', ')}`);
  return server;
}

/** With `--workers external`: the Postgres store (it enqueues) and the bus on the same database. */
async function clusterFor(db: string, schema: string | undefined, store: CheckpointStore): Promise<ServerCluster> {
  const { PostgresRunBus } = await import('../store/postgres-bus.js');
  return { store: store as ServerCluster['store'], bus: new PostgresRunBus(db, schema !== undefined ? { schema } : {}) };
}

/** The store `--db` names; PostgreSQL is loaded only for a postgres:// URL. */
async function checkpointStoreFor(db: string, schema: string | undefined): Promise<{ store: CheckpointStore; where: string }> {
  if (/^postgres(ql)?:\/\//.test(db)) {
    const { PostgresCheckpointStore } = await import('../store/postgres-checkpoint-store.js');
    const store = new PostgresCheckpointStore(db, schema !== undefined ? { schema } : {});
    try {
      // Fail at start, not on the first run, when the database is down or not migrated.
      await store.load('troupe-serve-check');
    } catch (error) {
      await store.close();
      throw error;
    }
    return { store, where: store.where };
  }
  if (schema !== undefined) throw new Error(`--schema needs a postgres:// --db.\n\n${SERVE_USAGE}`);
  return { store: new SqliteCheckpointStore(db), where: resolve(db) };
}
