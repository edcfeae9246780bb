/**
 * Server restart recovery with real processes (issue "Durable runs you can trust", item 6):
 * a server is SIGKILLed while a run waits for approval; a new server on the same SQLite file
 * lists and resumes it, the approval is decided through the API, and the run completes with
 * the refund executed exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TroupeServer } from '../../src/server/index.js';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { call, eventually, openSse, trace } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-restart-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the fixture server; resolves with a handle the HTTP helpers accept. */
function startServer(mode: 'first' | 'second', db: string, marks: string): Promise<{ server: TroupeServer; recovered: string[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/server-restart.ts', mode, db, marks], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const line = stdout.split('\n')[0]!;
      if (stdout.includes('\n')) {
        const info = JSON.parse(line) as { url: string; token: string; recovered: string[] };
        resolve({ server: { url: info.url, token: info.token } as TroupeServer, recovered: info.recovered, child });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
}

describe('a server killed while a run waits for approval', () => {
  it('restarts, resumes the run, takes the approval through the API, and completes it; the tool runs once', async () => {
    const db = join(dir, 'runs.sqlite');
    const marks = join(dir, 'marks.txt');
    const first = await startServer('first', db, marks);
    expect(first.recovered).toEqual([]);
    const chat = await openSse(first.server, 'POST', '/api/chat', { body: { agent: 'desk', input: 'refund me' } });
    const runId = chat.res.headers['x-run-id'] as string;
    const waiting = await eventually(
      () => call(first.server, 'GET', `/api/runs/${runId}`),
      (r) => r.json?.pendingApprovals?.length === 1,
    );
    const approvalId = waiting.json.pendingApprovals[0].approvalId as string;
    expect(approvalId).toBe(`${runId}:1.0`);
    chat.close();
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const stored = new SqliteCheckpointStore(db);
    expect(stored.load(runId)!.entries.map((e) => e.kind)).toEqual(['input', 'reply', 'approval_request']);
    expect(stored.load(runId)!.head.status).toBe('running');
    const firstAppend = stored.list().find((r) => r.runId === runId)!.createdAt;
    stored.close();

    const second = await startServer('second', db, marks);
    expect(second.recovered).toEqual([runId]);
    // The resumed run waits for the same approval again, under the same id.
    const again = await eventually(
      () => call(second.server, 'GET', `/api/runs/${runId}`),
      (r) => r.json?.pendingApprovals?.length === 1,
    );
    expect(again.json.pendingApprovals[0]).toMatchObject({ approvalId, callId: 'r1', tool: 'refund' });
    // The resumed run shows what it was started with, when, and what it spent (from the log), not a blank new run.
    const listed = await call(second.server, 'GET', '/api/runs');
    const row = (listed.json.runs as Array<Record<string, unknown>>).find((r) => r['runId'] === runId)!;
    expect(row).toMatchObject({ source: 'live', status: 'running', input: 'refund me', startedAt: firstAppend });
    expect(again.json.usage).toEqual(waiting.json.usage);
    const stream = await openSse(second.server, 'GET', `/api/runs/${encodeURIComponent(runId)}/stream`);
    const approved = await call(second.server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } });
    expect(approved.status).toBe(200);
    expect(approved.json).toEqual({ runId, approvalId, callId: 'r1', decision: 'approve' });
    await stream.all();
    const events = stream.events();
    expect(events[0]).toMatchObject({ type: 'run_started', input: 'refund me' });
    expect(trace(events).filter((t) => t !== 'checkpoint_saved')).toEqual([
      'run_started',
      'turn_started',
      'approval_required:r1',
      'tool_call_started:r1',
      'tool_call_completed:r1',
      'turn_ended',
      'turn_started',
      'message_completed',
      'turn_ended',
      'run_completed',
    ]);
    expect(readFileSync(marks, 'utf8')).toBe('second r1\n');
    const reopened = new SqliteCheckpointStore(db);
    expect(reopened.load(runId)!.head).toMatchObject({ status: 'completed', output: 'your refund is on its way' });
    reopened.close();
    second.child.kill('SIGKILL');
  });
});
