import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the fixture in a real Node process; resolves with its stdout once `until` matches or it exits. */
function runFixture(args: string[], until?: string): Promise<{ stdout: string; kill(): Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-run.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ? null : code)));
  return new Promise((resolve, reject) => {
    const done = () => resolve({ stdout, kill: () => (child.kill('SIGKILL'), exited) });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (until && stdout.includes(until)) done();
    });
    void exited.then((code) => (code === 0 && !until ? done() : reject(new Error(`fixture exited with ${code}: ${stderr}`))));
  });
}

describe('crash and resume with a real process', () => {
  it('keeps every stored result, re-runs only the call that was in flight, and completes', async () => {
    const db = join(dir, 'runs.sqlite');
    const marks = join(dir, 'marks.txt');

    const first = await runFixture(['first', db, marks], 'READY');
    expect(await first.kill()).toBeNull(); // killed by SIGKILL mid-batch

    const afterCrash = new SqliteCheckpointStore(db);
    const stored = afterCrash.load('crash-run')!;
    afterCrash.close();
    expect(stored.head.status).toBe('running');
    expect(stored.entries.map((e) => (e.kind === 'result' ? `result:${(e.message as { callId: string }).callId}` : e.kind))).toEqual(['input', 'reply', 'result:q1', 'result:q2']);

    const second = await runFixture(['resume', db, marks]);
    expect(JSON.parse(second.stdout.trim())).toEqual({ output: 'all three answered', turns: 2 });

    // q1 and q2 ran once (first process); only s1, in flight at the crash, ran again.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toEqual(['first q1', 'first s1', 'first q2', 'resume s1']);
    const reopened = new SqliteCheckpointStore(db);
    const final = reopened.load('crash-run')!;
    reopened.close();
    expect(final.head.status).toBe('completed');
    expect(final.entries.map((e) => (e.kind === 'result' ? `result:${(e.message as { callId: string }).callId}` : e.kind))).toEqual([
      'input',
      'reply',
      'result:q1',
      'result:q2',
      'result:s1',
      'turn_end',
      'reply',
      'turn_end',
    ]);
  });
});
