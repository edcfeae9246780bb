import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { UserError } from '../../src/errors.js';
import { PostgresCheckpointStore } from '../../src/store/postgres-checkpoint-store.js';
import { POSTGRES_URL, shownUrl, usePostgresSchema } from '../store/harnesses.js';
import { call, openSse } from './helpers.js';

const agents = fileURLToPath(new URL('./fixtures/agents-module.ts', import.meta.url));

describe(`troupe serve --db postgres://…`, () => {
  const freshSchema = usePostgresSchema();

  it('checkpoints every run to PostgreSQL', async () => {
    const schema = await freshSchema();
    const lines: string[] = [];
    const server = await serve(['--port', '0', '--agents', agents, '--db', POSTGRES_URL!, '--schema', schema], (line) => lines.push(line));
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    try {
      expect(lines[0]).toBe(`  runs are checkpointed to PostgreSQL checkpoint store '${shownUrl(POSTGRES_URL!)}' schema '${schema}'`);
      const sse = await openSse(server, 'POST', '/api/chat', { body: { agent: 'calc', input: 'add' } });
      await sse.all();
      const runId = (await call(server, 'GET', '/api/runs')).json.runs[0].runId as string;
      const saved = (await store.load(runId))!;
      expect(saved.head).toMatchObject({ agent: 'calc', status: 'completed', output: 'done' });
      expect(saved.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('with --workers external enqueues runs for workers instead of running them, and refuses a setup that cannot work', async () => {
    const schema = await freshSchema();
    const lines: string[] = [];
    const server = await serve(['--port', '0', '--agents', agents, '--db', POSTGRES_URL!, '--schema', schema, '--workers', 'external'], (line) => lines.push(line));
    const store = new PostgresCheckpointStore(POSTGRES_URL!, { schema });
    try {
      expect(lines[0]).toBe(`  runs are enqueued for troupe worker processes on PostgreSQL checkpoint store '${shownUrl(POSTGRES_URL!)}' schema '${schema}'`);
      const sse = await openSse(server, 'POST', '/api/chat', { body: { agent: 'calc', input: 'add' } });
      const runId = sse.res.headers['x-run-id'] as string;
      sse.close();
      // Nothing runs in the server: the run waits in the queue for a worker.
      expect(await store.runState(runId)).toBe('queued');
      expect(await store.load(runId)).toBeUndefined();
    } finally {
      await server.close();
      await store.close();
    }
    const sqlite = await serve(['--port', '0', '--agents', agents, '--db', 'x.sqlite', '--workers', 'external'], () => {}).catch((e: unknown) => e as Error);
    expect((sqlite as Error).message.split('\n')[0]).toBe('--workers external needs a postgres:// --db (the workers share it).');
    const demo = await serve(['--port', '0', '--db', POSTGRES_URL!, '--workers', 'external'], () => {}).catch((e: unknown) => e as Error);
    expect((demo as Error).message.split('\n')[0]).toBe('--workers external needs --agents (the module the workers load), so the server knows the agents\' names.');
    const bad = await serve(['--port', '0', '--workers', 'elsewhere'], () => {}).catch((e: unknown) => e as Error);
    expect((bad as Error).message.split('\n')[0]).toBe("--workers must be in-process or external, got 'elsewhere'.");
  });

  it('refuses to start on a schema that was not migrated, naming the command', async () => {
    const schema = await freshSchema(false);
    const error = await serve(['--port', '0', '--agents', agents, '--db', POSTGRES_URL!, '--schema', schema], () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      `PostgreSQL checkpoint store '${shownUrl(POSTGRES_URL!)}' schema '${schema}' has no troupe checkpoints tables: run \`troupe db migrate --db '${shownUrl(POSTGRES_URL!)}' --schema ${schema}\` first (troupe never creates tables on its own).`,
    );
  });
});
