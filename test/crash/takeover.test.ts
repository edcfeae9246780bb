/**
 * A crashed owner is taken over at once when it is provably dead (issue 25, item 2), with
 * real processes on a real SQLite file: SIGKILL, then "run the same line again" resumes at
 * once although the dead process's 30 s lease has not expired; a live owner is never taken
 * over (RunLocked, or a wait that says so), and a paused owner that wakes up after the lease
 * moved on can never write again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, killWhenStored, load, marks, openGate, outcome, run, start, trace, until, workspace, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('takeover');
afterAll(() => ws.cleanup());

const DONE = ['input', 'reply:1', 'result:c1', 'result:c2', 'turn_end:1', 'reply:2', 'turn_end:2'];

describe('a crashed owner on this machine (real processes, real SQLite)', { timeout: 90_000 }, () => {
  it('"run the same line again" resumes at once after SIGKILL, although the dead process’s lease has 30 s left', async () => {
    const runId = 'again';
    // The same line both times: the default 30 s lease, no claimWaitMs.
    const line: FixtureConfig = { scenario: 'batch', calls: 2, phase: 'first', mode: 'start', db: ws.file('again.sqlite'), marks: ws.file('again.marks'), runId, leaseMs: 30_000 };
    const first = start({ ...line, hang: ['c2'] });
    await killWhenStored(first, line.db, runId, ['input', 'reply:1', 'result:c1']);
    const deadLease = load(line.db, runId)!.lease!;
    expect(deadLease.owner).toMatch(new RegExp(`^pid ${first.pid} on `));
    expect(deadLease.expiresAt).toBeGreaterThan(Date.now() + 20_000);

    const again = await run({ ...line, phase: 'again' });
    expect(again.code, again.stderr).toBe(0);
    expect(outcome(again).result).toEqual({ output: 'all calls done', turns: 2 });
    expect(trace(again.lines)).toEqual(['run_started', 'turn_started', 'tool_call_started:c2', 'tool_call_completed:c2', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(again.stderr).not.toContain('waiting for the lease');
    expect(marks(line.marks)).toEqual(['first c1', 'first c2', 'again c2']);
    expect(entriesOf(line.db, runId)).toEqual(DONE);
    expect(load(line.db, runId)!.lease).toBeUndefined();
  });

  it('Runner.decide records a decision at once on a run whose owner was killed while it waited for approval', async () => {
    const runId = 'decide-dead';
    const base: FixtureConfig = { scenario: 'approval', phase: 'first', mode: 'start', db: ws.file('decide.sqlite'), marks: ws.file('decide.marks'), runId, leaseMs: 30_000, askForApproval: true };
    const first = start(base);
    await killWhenStored(first, base.db, runId, ['input', 'reply:1', 'approval_request:p1', 'result:w1']);
    const decided = await run({ ...base, phase: 'decide', mode: 'decide', approvalId: `${runId}:1.1`, decision: { approved: true, by: 'alice' } });
    expect(decided.code, JSON.stringify(decided.lines)).toBe(0);
    expect(entriesOf(base.db, runId)).toEqual(['input', 'reply:1', 'approval_request:p1', 'result:w1', 'approval_decision:p1:approved']);
    // decide released its lease; the same line resumes at once and runs the approved call.
    const resumed = await run({ ...base, phase: 'resume', mode: 'resume' });
    expect(outcome(resumed).result).toEqual({ output: 'payment handled', turns: 2 });
    expect(marks(base.marks)).toEqual(['first w1', 'resume p1']);
  });

  it('a live owner is not taken over: RunLocked at once, or with claimWaitMs a wait that says who and until when; paused past its lease, it never writes again', async () => {
    const runId = 'live';
    const base: FixtureConfig = { scenario: 'batch', calls: 1, phase: 'first', mode: 'start', db: ws.file('live.sqlite'), marks: ws.file('live.marks'), runId };
    // The owner's tool waits at a gate, then freezes the process (a long pause); its lease (8 s) outlasts the start of the next process, not the pause.
    const gate = ws.file('live.gate');
    const thaw = ws.file('live.thaw');
    const owner = start({ ...base, gate, freeze: thaw, leaseMs: 8_000 });
    await until(owner, 'c1 running', () => marks(base.marks).includes('first c1'));

    const refused = await run({ ...base, phase: 'second', leaseMs: 30_000 });
    expect(refused.code).toBe(3);
    const held = load(base.db, runId)!.lease!;
    expect(held.owner).toMatch(new RegExp(`^pid ${owner.pid} on `));
    expect(outcome(refused).error).toMatchObject({ name: 'RunLocked', code: 'RUN_LOCKED' });
    expect(outcome(refused).error!.message).toMatch(new RegExp(`^Run 'live' is locked by '${held.owner.replace(/[()]/g, '\\$&')}' until \\S+; nothing was written\\.`));
    expect(trace(refused.lines)).toEqual(['run_started', 'run_failed']);

    // Paused: it renews no more, its lease runs out, and nothing proves it dead.
    openGate(gate);
    await until(owner, 'the owner froze', () => marks(base.marks).includes('first c1 frozen'));
    const paused = load(base.db, runId)!.lease!;
    const waiter = await run({ ...base, phase: 'waiter', leaseMs: 30_000, claimWaitMs: 60_000 });
    expect(waiter.code, waiter.stderr).toBe(0);
    expect(waiter.lines[0]!.event).toEqual({ type: 'lease_waiting', runId, owner: paused.owner, expiresAt: paused.expiresAt });
    expect(trace(waiter.lines)).toEqual(['lease_waiting', 'run_started', 'turn_started', 'tool_call_started:c1', 'tool_call_completed:c1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(waiter.stderr).toContain(`troupe: run 'live' is leased to '${paused.owner}' until ${new Date(paused.expiresAt).toISOString()}; waiting for the lease to expire (claimWaitMs 60000).`);
    const completed = entriesOf(base.db, runId);
    expect(completed).toEqual(['input', 'reply:1', 'result:c1', 'turn_end:1', 'reply:2', 'turn_end:2']);

    // Woken up, the old owner's tool returns, but its writes are refused: its run fails and the log is unchanged.
    openGate(thaw);
    const woken = await owner.done;
    expect(woken.code).toBe(3);
    expect(outcome(woken).error).toMatchObject({ name: 'RunLocked', message: `Run 'live' is not leased to '${paused.owner}' (no lease is held); nothing was written.` });
    expect(entriesOf(base.db, runId)).toEqual(completed);
    expect(load(base.db, runId)!.head).toMatchObject({ status: 'completed', output: 'all calls done' });
    expect(marks(base.marks)).toEqual(['first c1', 'first c1 frozen', 'waiter c1']);
  });
});
