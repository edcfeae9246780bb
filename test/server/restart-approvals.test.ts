/**
 * A restarted server decides approvals at once (issue 25, item 3), with real server processes
 * on one SQLite file and the default 30 s lease: a server SIGKILLed while a run waits for
 * approval is replaced by one that lists the approval and decides it the moment it answers
 * (the dead server's lease is taken over); a run held by another live process, or by an owner
 * nothing can prove dead, answers 409 run_locked naming the owner and the lease's expiry,
 * never 404 approval_not_found for an approval that exists.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import type { TroupeServer } from '../../src/server/index.js';
import { call, eventually, openSse, trace } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-restart-approvals-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  readonly server: Pick<TroupeServer, 'url' | 'token'>;
  readonly recovered: string[];
  readonly child: ChildProcess;
  readonly stderr: () => string;
}

/** Starts the fixture server with the default lease; resolves once it printed its address. */
function startServer(mode: 'first' | 'second', db: string, marks: string): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/server-restart.ts', mode, db, marks, 'default'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (!stdout.includes('\n')) return;
      const info = JSON.parse(stdout.split('\n')[0]!) as { url: string; token: string; recovered: string[] };
      resolve({ server: { url: info.url, token: info.token }, recovered: info.recovered, child, stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A first server whose run waits for approval of the refund r1; returns the run id and approval id. */
async function waitingRun(db: string, marks: string): Promise<{ first: Started; runId: string; approvalId: string }> {
  const first = await startServer('first', db, marks);
  const chat = await openSse(first.server, 'POST', '/api/chat', { body: { agent: 'desk', input: 'refund me' } });
  const runId = chat.res.headers['x-run-id'] as string;
  const waiting = await eventually(
    () => call(first.server, 'GET', `/api/runs/${runId}`),
    (r) => r.json?.pendingApprovals?.length === 1,
  );
  chat.close();
  return { first, runId, approvalId: waiting.json.pendingApprovals[0].approvalId as string };
}

/** Refund executions so far ("<mode> <callId>" lines). */
function marksOf(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function lease(db: string, runId: string): { owner: string; expiresAt: number } {
  const store = new SqliteCheckpointStore(db);
  try {
    const { owner, expiresAt } = store.load(runId)!.lease!;
    return { owner, expiresAt };
  } finally {
    store.close();
  }
}

describe('a restarted server decides approvals at once (real processes, default lease)', { timeout: 60_000 }, () => {
  it('after SIGKILL, the new server lists the approval and decides it as soon as it answers; the refund runs once', async () => {
    const db = join(dir, 'killed.sqlite');
    const marks = join(dir, 'killed.marks');
    const { first, runId, approvalId } = await waitingRun(db, marks);
    await kill(first.child);
    expect(lease(db, runId).expiresAt).toBeGreaterThan(Date.now() + 20_000);

    const second = await startServer('second', db, marks);
    expect(second.recovered).toEqual([runId]);
    // No polling: listed and decidable at once.
    const listed = await call(second.server, 'GET', '/api/runs');
    expect(listed.json.runs.map((r: { runId: string; pendingApprovals: Array<{ approvalId: string }> }) => [r.runId, r.pendingApprovals.map((p) => p.approvalId)])).toEqual([[runId, [approvalId]]]);
    const detail = await call(second.server, 'GET', `/api/runs/${runId}`);
    expect(detail.json.pendingApprovals).toEqual([expect.objectContaining({ approvalId, callId: 'r1', tool: 'refund' })]);
    const stream = await openSse(second.server, 'GET', `/api/runs/${encodeURIComponent(runId)}/stream`);
    const approved = await call(second.server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } });
    expect([approved.status, approved.json]).toEqual([200, { runId, approvalId, callId: 'r1', decision: 'approve' }]);
    await stream.all();
    expect(trace(stream.events()).filter((t) => t !== 'checkpoint_saved')).toEqual([
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
    expect(marksOf(marks)).toBe('second r1\n');
    expect(second.stderr()).toBe('');
    await kill(second.child);
  });

  it('a run held by another live server: listed, 409 run_locked naming the owner and expiry (never 404); decided once that server is killed', async () => {
    const db = join(dir, 'live.sqlite');
    const marks = join(dir, 'live.marks');
    const { first, runId, approvalId } = await waitingRun(db, marks);
    const second = await startServer('second', db, marks);
    // It runs on the first server: the second leaves it there.
    expect(second.recovered).toEqual([]);
    const detail = await call(second.server, 'GET', `/api/runs/${runId}`);
    expect([detail.json.source, detail.json.status, detail.json.pendingApprovals.map((p: { approvalId: string }) => p.approvalId)]).toEqual(['stored', 'running', [approvalId]]);
    // The live server renews its lease (every 10 s): compare with the lease just before and after each answer.
    const before = lease(db, runId);
    expect(before.owner).toMatch(new RegExp(`^pid ${first.child.pid} on `));
    expect([before, lease(db, runId)]).toContainEqual(detail.json.lease);
    const held = lease(db, runId);
    const locked = await call(second.server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } });
    const message = (l: { owner: string; expiresAt: number }) => `Run '${runId}' is held by '${l.owner}' until ${new Date(l.expiresAt).toISOString()}.`;
    expect(locked.status).toBe(409);
    expect(locked.json.error.code).toBe('run_locked');
    expect([message(held), message(lease(db, runId))]).toContain(locked.json.error.message);
    expect(marksOf(marks)).toBe('');

    await kill(first.child);
    const approved = await call(second.server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } });
    expect([approved.status, approved.json]).toEqual([200, { runId, approvalId, callId: 'r1', decision: 'approve', resumed: true }]);
    const done = await eventually(
      () => call(second.server, 'GET', `/api/runs/${runId}`),
      (r) => r.json?.status === 'completed',
    );
    expect(done.json.output).toBe('your refund is on its way');
    expect(marksOf(marks)).toBe('second r1\n');
    await kill(second.child);
  });

  it('a run whose owner nothing can prove dead: the restarted server waits for its lease and says so; approving answers 409 run_locked', async () => {
    const db = join(dir, 'foreign.sqlite');
    const marks = join(dir, 'foreign.marks');
    const { first, runId, approvalId } = await waitingRun(db, marks);
    await kill(first.child);
    // An owner on another machine (its string carries no identity of this one) holds the run for 20 s.
    const foreign = 'pid 77 on elsewhere #Remote01';
    const store = new SqliteCheckpointStore(db);
    const held = store.claim(runId, foreign, 20_000, { takeOverFrom: lease(db, runId).owner });
    store.close();

    const second = await startServer('second', db, marks);
    expect(second.recovered).toEqual([runId]);
    const expiry = new Date(held.expiresAt).toISOString();
    expect(second.stderr()).toContain(`troupe: run '${runId}' is leased to '${foreign}' until ${expiry}; waiting for the lease to expire (claimWaitMs 30000).`);
    const detail = await call(second.server, 'GET', `/api/runs/${runId}`);
    expect([detail.json.source, detail.json.status, detail.json.lease, detail.json.pendingApprovals.map((p: { approvalId: string }) => p.approvalId)]).toEqual(['live', 'running', { owner: foreign, expiresAt: held.expiresAt }, [approvalId]]);
    expect(trace(detail.json.eventLog)).toEqual(['lease_waiting']);
    const locked = await call(second.server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } });
    expect([locked.status, locked.json]).toEqual([409, { error: { code: 'run_locked', message: `Run '${runId}' is held by '${foreign}' until ${expiry}.` } }]);
    expect(marksOf(marks)).toBe('');
    await kill(second.child);
  });
});
