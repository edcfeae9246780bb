/**
 * `ctx.extra` survives a crash (issue 29, item 6): a real process running a durable run on a
 * SQLite file is killed with SIGKILL while a tool of turn 2 hangs; the value its turn-1 tool
 * and its hooks left in `ctx.extra` is in the log, and a resumed run's tools and hooks get it back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { describeEntry, load, workspace } from './crash-helpers.js';

const children = new Set<ChildProcess>();
const cleanups: Array<() => void> = [];

afterEach(async () => {
  // Every child this file started is gone before the next test (and before vitest exits).
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  children.clear();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Starts the fixture; resolves once it printed `until` (an event type and call id), with a kill that resolves on exit. */
function startFixture(config: { db: string; runId: string }, until: string): Promise<{ kill(): Promise<NodeJS.Signals | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/extra-crash.ts', JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes(until)) resolve({ kill: () => (child.kill('SIGKILL'), exited) });
    });
    void exited.then(() => reject(new Error(`the fixture ended before ${until}: ${stderr}\n${stdout}`)));
  });
}

describe('ctx.extra across a SIGKILL', () => {
  it('is stored before the entry it was changed for, and a resumed run continues with it', async () => {
    const ws = workspace('extra');
    cleanups.push(ws.cleanup);
    const db = ws.file('runs.db');
    const fixture = await startFixture({ db, runId: 'x1' }, '{"event":{"type":"tool_call_started","callId":"h1"}}');
    expect(await fixture.kill()).toBe('SIGKILL');

    const stored = load(db, 'x1')!;
    expect(stored.head.status).toBe('running');
    // The given value is stored with the input; each change before the entry it was made for.
    expect(stored.entries.map(describeEntry)).toEqual(['extra', 'input', 'extra', 'reply:1', 'extra', 'result:c1', 'turn_end:1', 'extra', 'reply:2']);
    expect(stored.entries.filter((e) => e.kind === 'extra').map((e) => (e.kind === 'extra' ? e.value : undefined))).toEqual([
      { owner: 'ada' },
      { owner: 'ada', requests: 1 },
      { owner: 'ada', requests: 1, count: 1 },
      { owner: 'ada', requests: 2, count: 1 },
    ]);

    const seen: unknown[] = [];
    const hang = tool({ name: 'hang', description: 'd', parameters: z.object({}), execute: (_a, ctx) => (seen.push({ ...ctx.extra }), 'done') });
    const count = tool({ name: 'count', description: 'd', parameters: z.object({}), execute: () => 'never called' });
    const agent = new Agent({
      name: 'counter',
      model: new ScriptedModel([text('finished')]),
      tools: [count, hang],
      hooks: { beforeModelCall: (_r, ctx) => void (ctx.extra['requests'] = (ctx.extra['requests'] as number) + 1) },
    });
    const store = new SqliteCheckpointStore(db);
    try {
      // The option's value loses to the stored one on resume.
      const result = await Runner.resume(agent, { store, runId: 'x1' }, { extra: { owner: 'someone else' } }).result();
      expect(result.output).toBe('finished');
      expect(seen).toEqual([{ owner: 'ada', requests: 2, count: 1 }]);
      const entries = (await store.load('x1'))!.entries;
      expect(entries.slice(9).map(describeEntry)).toEqual(['result:h1', 'turn_end:2', 'extra', 'reply:3', 'turn_end:3']);
      expect(entries.filter((e) => e.kind === 'extra').at(-1)).toEqual({ kind: 'extra', value: { owner: 'ada', requests: 3, count: 1 } });
    } finally {
      store.close();
    }
  });
});
