import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, shownUrl, usePostgresSchema } from '../store/harnesses.js';

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

describe('troupe db prune arguments', () => {
  // Several CLI processes (each loads tsx): slow on a loaded machine.
  it('refuses a bad duration or count, or no rule, with exact messages and exit 2 (before connecting); an unreachable database exits 1', { timeout: 90_000 }, async () => {
    const db = ['--db', 'postgres://app:secret@127.0.0.1:1/troupe'];
    expect(await troupe('db', 'prune', ...db, '--older-than', 'banana')).toEqual({ code: 2, stdout: '', stderr: 'troupe db prune: --older-than must be a duration such as 7d, 12h, 30m, 45s or 500ms, got "banana".\n' });
    expect(await troupe('db', 'prune', ...db, '--keep-last', 'ten')).toEqual({ code: 2, stdout: '', stderr: 'troupe db prune: --keep-last must be a whole number of runs (0 or more), got "ten".\n' });
    const neither = await troupe('db', 'prune', ...db, '--dry-run');
    expect([neither.code, neither.stderr.split('\n')[0]]).toEqual([2, 'troupe db prune: give --older-than <duration> and/or --keep-last <runs>: which finished runs keep their events']);
    const worker = await troupe('worker', ...db, '--agents', 'test/worker/agents.ts', '--prune-older-than', 'banana');
    expect([worker.code, worker.stderr.split('\n')[0]]).toEqual([2, 'troupe worker: --prune-older-than must be a duration such as 7d, 12h, 30m, 45s or 500ms, got "banana".']);
    const help = await troupe('db', 'prune', '--help');
    expect([help.code, help.stdout.split('\n')[0]]).toEqual([0, 'usage: troupe db prune --db <postgres://…> (--older-than <duration> | --keep-last <runs>) [--dry-run] [--schema <name>]']);
    expect(await troupe('db', 'prune', ...db, '--older-than', '7d')).toEqual({
      code: 1,
      stdout: '',
      stderr: "troupe db prune: Cannot use PostgreSQL run bus 'postgres://app@127.0.0.1:1/troupe' schema 'public': connection refused, is the server running and listening there? (connect ECONNREFUSED 127.0.0.1:1); nothing was written.\n",
    });
  });
});

describe('troupe db prune on PostgreSQL', () => {
  const freshSchema = usePostgresSchema();

  it('on a schema without troupe tables: the migrate hint, exit 2; on an empty one: nothing to prune', { timeout: 60_000 }, async () => {
    const bare = await freshSchema(false);
    expect(await troupe('db', 'prune', '--db', POSTGRES_URL!, '--schema', bare, '--older-than', '7d')).toEqual({
      code: 2,
      stdout: '',
      stderr: `troupe db prune: PostgreSQL run bus '${shownUrl(POSTGRES_URL!)}' schema '${bare}' has no troupe checkpoints tables: run \`troupe db migrate --db '${shownUrl(POSTGRES_URL!)}' --schema ${bare}\` first (troupe never creates tables on its own).\n`,
    });
    const schema = await freshSchema();
    expect(await troupe('db', 'prune', '--db', POSTGRES_URL!, '--schema', schema, '--older-than', '7d', '--dry-run')).toEqual({ code: 0, stdout: 'dry run: no finished run has events to prune\n', stderr: '' });
  });
});
