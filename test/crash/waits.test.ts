/**
 * A process killed with SIGKILL while its calls wait for an external event and for a time
 * (waitForEvent, waitUntil; real processes on a real SQLite file): the event is delivered from
 * another process (Runner.signal) and a third process resumes the run. Each tool ran once, in
 * the killed process; the resumed calls get the stored payload and the stored timer.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, killWhenStored, load, marks, outcome, run, start, trace, workspace, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('waits');
afterAll(() => ws.cleanup());

const WAITING = ['input', 'reply:1', 'wait_request:p1:event', 'wait_request:r1:timer'];

describe('crash while calls wait for an event and a time (real processes)', { timeout: 90_000 }, () => {
  it('SIGKILL during both waits: Runner.signal from a second process, Runner.resume in a third; no tool runs again', async () => {
    // The timer is due 3 s after its call ran: after the kill, before the resume.
    const base: FixtureConfig = { scenario: 'waits', phase: 'first', mode: 'start', db: ws.file('w.sqlite'), marks: ws.file('w.marks'), runId: 'waits-1', reportInMs: 3_000 };
    const first = start(base);
    await killWhenStored(first, base.db, base.runId, WAITING);
    expect(load(base.db, base.runId)!.head.status).toBe('running');
    expect(marks(base.marks)).toEqual(['first p1', 'first r1']);
    const [payWait, reportWait] = load(base.db, base.runId)!.entries.slice(2) as Array<{ waitId: string; deadline?: number; detail: unknown }>;
    expect([payWait!.waitId, payWait!.detail, payWait!.deadline]).toEqual(['waits-1:1.0', { name: 'paid:A1' }, undefined]);
    const reportAt = reportWait!.deadline!;
    expect([reportWait!.waitId, reportWait!.detail]).toEqual(['waits-1:1.1', { until: reportAt }]);

    // The killed process's lease is taken over at once (its owner is provably dead).
    const signalled = await run({ ...base, phase: 'signal', mode: 'signal', event: { name: 'paid:A1', payload: { amount: 7 } } });
    expect(signalled.code).toBe(0);
    expect(outcome(signalled).signalled).toMatchObject([{ kind: 'wait_resolution', waitId: 'waits-1:1.0', callId: 'p1', ended: 'resolved', resolution: { amount: 7 }, by: 'webhook' }]);
    expect(entriesOf(base.db, base.runId)).toEqual([...WAITING, 'wait_resolution:p1:resolved']);

    // Resumed once the timer is due: its call ends at once, from the stored deadline.
    while (Date.now() <= reportAt) await new Promise((resolve) => setTimeout(resolve, reportAt + 1 - Date.now()));
    const resumed = await run({ ...base, phase: 'resume', mode: 'resume' });
    expect(resumed.code).toBe(0);
    expect(outcome(resumed).result).toEqual({ output: 'paid and reported', turns: 2 });
    expect(marks(base.marks)).toEqual(['first p1', 'first r1']);
    // A wait whose resolution is stored resolves at once (it opened in the killed process); the
    // timer opens again with its stored deadline, already due, and resolves at once too.
    const events = trace(resumed.lines);
    expect(events.filter((e) => e.endsWith(':p1'))).toEqual(['tool_call_started:p1', 'wait_resolved:p1', 'tool_call_completed:p1']);
    expect(events.filter((e) => e.endsWith(':r1'))).toEqual(['tool_call_started:r1', 'wait_opened:r1', 'wait_resolved:r1', 'tool_call_completed:r1']);
    expect(events.filter((e) => !e.includes(':'))).toEqual(['run_started', 'turn_started', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(outcome(resumed).requests!.cashier!.map((r) => r.messages)).toEqual([['user:go', 'assistant:', 'tool:p1:{"amount":7}', `tool:r1:Waited until ${new Date(reportAt).toISOString()}.`]]);
    const stored = entriesOf(base.db, base.runId);
    // The two results are stored in the order the calls ended; the timer's resolution before its result.
    const resolvedAndResults = stored.slice(5, 8);
    expect([...resolvedAndResults].sort()).toEqual(['result:p1', 'result:r1', 'wait_resolution:r1:resolved']);
    expect(resolvedAndResults.indexOf('wait_resolution:r1:resolved')).toBeLessThan(resolvedAndResults.indexOf('result:r1'));
    expect(stored).toEqual([...WAITING, 'wait_resolution:p1:resolved', ...resolvedAndResults, 'turn_end:1', 'reply:2', 'turn_end:2']);
    expect(load(base.db, base.runId)!.head).toMatchObject({ status: 'completed', output: 'paid and reported' });
  });
});
