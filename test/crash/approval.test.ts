import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { entriesOf, killWhenStored, leaseExpired, load, marks, outcome, run, start, trace, workspace, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('approval');
afterAll(() => ws.cleanup());

const config = (name: string): FixtureConfig => ({ scenario: 'approval', phase: 'first', mode: 'start', db: ws.file(`${name}.sqlite`), marks: ws.file(`${name}.marks`), runId: name });
const WAITING = ['input', 'reply:1', 'approval_request:p1', 'result:w1'];
const DENIAL = "Tool error: approval denied for tool 'pay': too much";

/** First process: w1 runs, p1 waits and the run parks (run_suspended, status suspended, lease released). */
async function parked(base: FixtureConfig, how: 'suspendOnWait' | 'suspendByHandle'): Promise<void> {
  const first = await run({ ...base, [how]: true });
  expect(first.code).toBe(0);
  expect(trace(first.lines)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:w1', 'approval_required:p1', 'tool_call_completed:w1', 'run_suspended']);
  expect(outcome(first).suspended).toEqual([{ approvalId: `${base.runId}:1.1`, callId: 'p1', tool: 'pay', arguments: '{"n":100}', requestedAt: expect.any(Number) }]);
  const stored = load(base.db, base.runId)!;
  expect(stored.head.status).toBe('suspended');
  expect(stored.lease).toBeUndefined();
  expect(entriesOf(base.db, base.runId)).toEqual(WAITING);
  expect(marks(base.marks)).toEqual(['first w1']);
}

/** Second process: Runner.decide; third: Runner.resume. Returns the third's outcome. */
async function decideAndResume(base: FixtureConfig, approved: boolean) {
  const decision = approved ? { approved: true, by: 'alice' } : { approved: false, reason: 'too much', by: 'alice' };
  const decided = await run({ ...base, phase: 'decide', mode: 'decide', approvalId: `${base.runId}:1.1`, decision });
  expect(decided.code).toBe(0);
  expect(outcome(decided).decided).toMatchObject({ kind: 'approval_decision', approvalId: `${base.runId}:1.1`, callId: 'p1', ...decision });
  expect(entriesOf(base.db, base.runId)).toEqual([...WAITING, `approval_decision:p1:${approved ? 'approved' : 'denied'}`]);
  const resumed = await run({ ...base, phase: 'resume', mode: 'resume', claimWaitMs: 10_000 });
  expect(resumed.code).toBe(0);
  expect(outcome(resumed).result).toEqual({ output: 'payment handled', turns: 2 });
  expect(entriesOf(base.db, base.runId)).toEqual([...WAITING, `approval_decision:p1:${approved ? 'approved' : 'denied'}`, 'result:p1', 'turn_end:1', 'reply:2', 'turn_end:2']);
  expect(load(base.db, base.runId)!.head).toMatchObject({ status: 'completed', output: 'payment handled' });
  return resumed;
}

describe('crash during an approval wait, decided from another process (real processes)', { timeout: 90_000 }, () => {
  it('suspendOnWait: parks, Runner.decide approves, Runner.resume runs only the approved call, once', async () => {
    const base = config('parked-option');
    await parked(base, 'suspendOnWait');
    const resumed = await decideAndResume(base, true);
    expect(marks(base.marks)).toEqual(['first w1', 'resume p1']);
    expect(trace(resumed.lines)).toEqual(['run_started', 'turn_started', 'tool_call_started:p1', 'tool_call_completed:p1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(outcome(resumed).requests!.cashier!.map((r) => r.messages)).toEqual([['user:go', 'assistant:', 'tool:w1:work w1 done', 'tool:p1:pay p1 done']]);
  });

  it('handle.suspend(): parks the same way; a denied call gets the denial text and never runs', async () => {
    const base = config('parked-handle');
    await parked(base, 'suspendByHandle');
    const resumed = await decideAndResume(base, false);
    expect(marks(base.marks)).toEqual(['first w1']);
    expect(resumed.lines.find((l) => l.event?.type === 'tool_call_completed' && l.event.callId === 'p1')!.event!.output).toBe(DENIAL);
    expect(outcome(resumed).requests!.cashier!.map((r) => r.messages)).toEqual([['user:go', 'assistant:', 'tool:w1:work w1 done', `tool:p1:${DENIAL}`]]);
  });

  it('SIGKILL while waiting (no suspend): decided once the lease ran out, resumed, the approved call runs once', async () => {
    const base = config('killed-waiting');
    // The handler answers "ask": the call keeps waiting for a decision from outside.
    const first = start({ ...base, askForApproval: true });
    await killWhenStored(first, base.db, base.runId, WAITING);
    expect(load(base.db, base.runId)!.head.status).toBe('running');
    // Runner.decide takes the run's lease: the killed process's lease has to run out first.
    await leaseExpired(base.db, base.runId);
    await decideAndResume(base, true);
    expect(marks(base.marks)).toEqual(['first w1', 'resume p1']);
  });

  it('a decision whose args hash does not match the request is not applied: the call waits again and does not run', async () => {
    const base = config('stale-hash');
    await parked(base, 'suspendOnWait');
    const store = new SqliteCheckpointStore(base.db);
    const saved = store.load(base.runId)!;
    const staleHash = createHash('sha256').update('{"n":1000000}').digest('hex');
    store.append(base.runId, [{ kind: 'approval_decision', approvalId: `${base.runId}:1.1`, callId: 'p1', argsHash: staleHash, approved: true, by: 'mallory', decidedAt: Date.now() }], saved.head);
    store.close();

    const again = await run({ ...base, phase: 'resume', mode: 'resume', suspendOnWait: true });
    expect(again.code).toBe(0);
    expect(trace(again.lines)).toEqual(['run_started', 'turn_started', 'approval_required:p1', 'run_suspended']);
    expect(outcome(again).suspended!.map((a) => a.callId)).toEqual(['p1']);
    expect(marks(base.marks)).toEqual(['first w1']);
    expect(entriesOf(base.db, base.runId)).toEqual([...WAITING, 'approval_decision:p1:approved']);
    expect(load(base.db, base.runId)!.head.status).toBe('suspended');

    // A decision for the stored arguments still applies.
    const decided = await run({ ...base, phase: 'decide', mode: 'decide', approvalId: `${base.runId}:1.1`, decision: { approved: true, by: 'alice' } });
    expect(outcome(decided).decided).toMatchObject({ approved: true, by: 'alice' });
    const resumed = await run({ ...base, phase: 'resume', mode: 'resume' });
    expect(outcome(resumed).result).toEqual({ output: 'payment handled', turns: 2 });
    expect(marks(base.marks)).toEqual(['first w1', 'resume p1']);
  });
});
