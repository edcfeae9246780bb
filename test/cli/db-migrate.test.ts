import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, shownUrl, usePostgresSchema } from '../store/harnesses.js';
import { head, input } from '../store/store-helpers.js';

const run = promisify(execFile);

/** The real CLI in its own process; resolves with its exit code and output. */
async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('troupe db', () => {
  it('without a subcommand or --db: usage on stderr, exit 2', async () => {
    const bare = await troupe('db');
    expect([bare.code, bare.stdout, bare.stderr.split('\n')[0]]).toEqual([2, '', 'usage: troupe db migrate --db <postgres://user:password@host:port/database> [--schema <name>]']);
    const noDb = await troupe('db', 'migrate');
    expect([noDb.code, noDb.stderr.split('\n')[0]]).toEqual([2, 'troupe db migrate: --db is required (or set TROUPE_DATABASE_URL)']);
  });

  it('an unreachable database: the StoreUnavailable message, exit 1', async () => {
    const { code, stderr } = await troupe('db', 'migrate', '--db', 'postgres://app:secret@127.0.0.1:1/troupe');
    expect([code, stderr]).toEqual([
      1,
      "troupe db migrate: Cannot use PostgreSQL database 'postgres://app@127.0.0.1:1/troupe' schema 'public': connection refused, is the server running and listening there? (connect ECONNREFUSED 127.0.0.1:1); nothing was written.\n",
    ]);
  });
});

describe(`troupe db migrate on PostgreSQL`, () => {
  const freshSchema = usePostgresSchema();

  it('creates the tables once, then reports them up to date; a store can use them', async () => {
    const schema = await freshSchema(false);
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    try {
      await expect(store.load('r1')).rejects.toThrow(`run \`troupe db migrate --db '${shownUrl(POSTGRES_URL!)}' --schema ${schema}\` first`);
      expect(await troupe('db', 'migrate', '--db', POSTGRES_URL!, '--schema', schema)).toEqual({ code: 0, stdout: 'checkpoints: created (layout 3)\nsessions: created (layout 1)\n', stderr: '' });
      expect(await troupe('db', 'migrate', '--db', POSTGRES_URL!, '--schema', schema)).toEqual({ code: 0, stdout: 'checkpoints: up to date (layout 3)\nsessions: up to date (layout 1)\n', stderr: '' });
      await store.append('r1', [input()], head());
      expect((await store.load('r1'))?.entries).toEqual([input()]);
    } finally {
      await store.close();
    }
  });
});

describe('troupe worker arguments', () => {
  // Five CLI processes (each loads tsx): on a loaded machine that alone can take over 20 s.
  it('refuses missing or malformed options with the usage, exit 2; an unreachable database exits 1', { timeout: 90_000 }, async () => {
    const noDb = await troupe('worker', '--agents', 'test/worker/agents.ts');
    expect([noDb.code, noDb.stderr.split('\n')[0]]).toEqual([2, 'troupe worker: --db is required (or set TROUPE_DATABASE_URL).']);
    const badConcurrency = await troupe('worker', '--db', 'postgres://a@127.0.0.1:1/x', '--agents', 'test/worker/agents.ts', '--concurrency', '0');
    expect([badConcurrency.code, badConcurrency.stderr.split('\n')[0]]).toEqual([2, "troupe worker: --concurrency must be a positive integer, got '0'."]);
    const badTimeout = await troupe('worker', '--db', 'postgres://a@127.0.0.1:1/x', '--agents', 'test/worker/agents.ts', '--approval-timeout', 'soon');
    expect([badTimeout.code, badTimeout.stderr.split('\n')[0]]).toEqual([2, "troupe worker: --approval-timeout must be a positive integer, got 'soon'."]);
    const valued = await troupe('worker', '--db', 'postgres://a@127.0.0.1:1/x', '--agents', 'test/worker/agents.ts', '--suspend-approvals=yes');
    expect([valued.code, valued.stderr.split('\n')[0]]).toEqual([2, "troupe worker: Option '--suspend-approvals' does not take an argument"]);
    const down = await troupe('worker', '--db', 'postgres://a@127.0.0.1:1/x', '--agents', 'test/worker/agents.ts');
    expect([down.code, down.stderr]).toEqual([
      1,
      "troupe worker: Cannot use PostgreSQL checkpoint store 'postgres://a@127.0.0.1:1/x' schema 'public': connection refused, is the server running and listening there? (connect ECONNREFUSED 127.0.0.1:1); nothing was written.\n",
    ]);
  });
});
