/**
 * The verdict on a decision sent through the bus, from the log (server/decision-verdicts.ts,
 * server/stored-wait-state.ts): every state a wait can be in, how long a request asks to wait,
 * and the waiting loop.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { awaitVerdict, requestedWaitMs, verdictOf, type WaitVerdict } from '../../src/server/decision-verdicts.js';
import { waitStateIn } from '../../src/server/stored-wait-state.js';
import type { CheckpointEntry } from '../../src/store/checkpoint-store.js';
import { hashArguments } from '../../src/runtime/args-hash.js';

const request = { kind: 'approval_request', turn: 1, index: 0, callId: 'c1', approvalId: 'r:1.0', tool: 'pay', argsHash: 'h', requestedAt: 10 } as const;
const decision = (approved: boolean, extra: Record<string, unknown> = {}) => ({ kind: 'approval_decision', approvalId: 'r:1.0', callId: 'c1', argsHash: 'h', approved, by: 'api', decidedAt: 20, ...extra }) as const;
const question = { kind: 'wait_request', waitId: 'r:1.0', waitKind: 'question', turn: 1, index: 0, callId: 'c1', tool: 'ask', detail: { question: 'Which?' }, requestedAt: 10 } as const;
const log = (...entries: object[]) => entries as unknown as CheckpointEntry[];
const base = { waitId: 'r:1.0', runId: 'r', callId: 'c1' };

describe('waitStateIn: a wait as one log tells it', () => {
  it('an approval: open, decided (the decision as stored), closed by its turn or its call ending undecided, unknown', () => {
    expect(waitStateIn('r', log(request), 'r:1.0')).toEqual({ ...base, kind: 'approval', tool: 'pay', state: 'open' });
    expect(waitStateIn('r', log(request, decision(false, { reason: 'no' })), 'r:1.0')).toEqual({ ...base, kind: 'approval', tool: 'pay', state: 'decided', decision: { decision: 'deny', reason: 'no', by: 'api', decidedAt: 20 } });
    expect(waitStateIn('r', log(request, decision(true, { editedArguments: '{"a":1}', editedArgsHash: hashArguments('{"a":1}') })), 'r:1.0')).toMatchObject({ state: 'decided', decision: { decision: 'approve', editedArguments: '{"a":1}' } });
    expect(waitStateIn('r', log(request, { kind: 'turn_end', turn: 1 }), 'r:1.0')).toEqual({ ...base, kind: 'approval', tool: 'pay', state: 'closed' });
    expect(waitStateIn('r', log(request, { kind: 'result', turn: 1, message: { role: 'tool', callId: 'c1', content: 'cancelled' } }), 'r:1.0')).toMatchObject({ state: 'closed' });
    expect(waitStateIn('r', log(request), 'r:2.0')).toBeUndefined();
  });

  it('a call wait: open, resolved, timed out, closed', () => {
    expect(waitStateIn('r', log(question), 'r:1.0')).toEqual({ ...base, kind: 'question', tool: 'ask', state: 'open' });
    const resolved = { kind: 'wait_resolution', waitId: 'r:1.0', waitKind: 'question', callId: 'c1', ended: 'resolved', resolution: 'blue', by: 'api', resolvedAt: 30 };
    expect(waitStateIn('r', log(question, resolved), 'r:1.0')).toEqual({ ...base, kind: 'question', tool: 'ask', state: 'resolved', resolution: 'blue', by: 'api', resolvedAt: 30 });
    expect(waitStateIn('r', log(question, { ...resolved, ended: 'timedOut', resolution: undefined }), 'r:1.0')).toEqual({ ...base, kind: 'question', tool: 'ask', state: 'timed_out', resolvedAt: 30 });
    expect(waitStateIn('r', log(question, { kind: 'turn_end', turn: 1 }), 'r:1.0')).toMatchObject({ state: 'closed' });
  });
});

describe('verdictOf: what a sent decision came to', () => {
  const approve = { kind: 'approve', approved: true } as const;
  const deny = (reason?: string) => ({ kind: 'approve', approved: false, ...(reason ? { reason } : {}) }) as const;
  const state = (entries: object[]) => waitStateIn('r', log(...entries), 'r:1.0');

  it('pending while the wait is open and the run goes on; applied when the log holds the same decision; refused otherwise, with what stands', () => {
    expect(verdictOf(state([request]), approve, 'running', 'r:1.0')).toEqual({ verdict: 'pending' });
    expect(verdictOf(state([request]), approve, 'suspended', 'r:1.0')).toEqual({ verdict: 'pending' });
    expect(verdictOf(undefined, approve, 'queued', 'r:1.0')).toEqual({ verdict: 'pending' });
    expect(verdictOf(state([request, decision(true)]), approve, 'running', 'r:1.0')).toEqual({ verdict: 'applied', at: 20 });
    expect(verdictOf(state([request, decision(false, { reason: 'no' })]), deny('no'), 'completed', 'r:1.0')).toEqual({ verdict: 'applied', at: 20 });
    const standing = state([request, decision(false, { by: 'timeout' })]);
    expect(verdictOf(standing, approve, 'running', 'r:1.0')).toEqual({ verdict: 'refused', status: 409, code: 'already_decided', message: "Approval 'r:1.0' was already decided: deny by timeout.", standing });
    expect(verdictOf(state([request, decision(false)]), deny('no'), 'running', 'r:1.0')).toMatchObject({ verdict: 'refused', code: 'already_decided' });
    // Approved with other edits than those sent: another decision stands.
    expect(verdictOf(state([request, decision(true, { editedArguments: '{"a":2}', editedArgsHash: hashArguments('{"a":2}') })]), { ...approve, editedArguments: '{"a":1}' }, 'running', 'r:1.0')).toMatchObject({ verdict: 'refused', code: 'already_decided' });
  });

  it('the run finished with the wait open, the call ended, the wait timed out, the run is gone', () => {
    expect(verdictOf(state([request]), approve, 'cancelled', 'r:1.0')).toEqual({ verdict: 'refused', status: 409, code: 'run_finished', message: "The run finished (cancelled) before 'r:1.0' was decided.", standing: state([request]) });
    expect(verdictOf(state([request, { kind: 'turn_end', turn: 1 }]), approve, 'running', 'r:1.0')).toMatchObject({ verdict: 'refused', status: 409, code: 'wait_closed', message: "The call of 'r:1.0' ended without a decision (the run was cancelled, aborted or moved on)." });
    const timedOut = { kind: 'wait_resolution', waitId: 'r:1.0', waitKind: 'question', callId: 'c1', ended: 'timedOut', resolvedAt: 30 };
    expect(verdictOf(state([question, timedOut]), { kind: 'resolve', value: 'red' }, 'running', 'r:1.0')).toMatchObject({ verdict: 'refused', status: 409, code: 'timed_out', message: "Wait 'r:1.0' has timed out." });
    expect(verdictOf(undefined, approve, undefined, 'r:1.0')).toEqual({ verdict: 'refused', status: 404, code: 'run_not_found', message: "The run of wait 'r:1.0' is gone." });
  });

  it('a resolution applies when the log holds an equal value (deeply), else it is refused', () => {
    const resolved = (resolution: unknown) => state([question, { kind: 'wait_resolution', waitId: 'r:1.0', waitKind: 'question', callId: 'c1', ended: 'resolved', resolution, by: 'api', resolvedAt: 30 }]);
    expect(verdictOf(resolved({ a: [1, 2] }), { kind: 'resolve', value: { a: [1, 2] } }, 'running', 'r:1.0')).toEqual({ verdict: 'applied', at: 30 });
    expect(verdictOf(resolved('blue'), { kind: 'resolve', value: 'red' }, 'running', 'r:1.0')).toMatchObject({ verdict: 'refused', status: 409, code: 'already_resolved', message: `Wait 'r:1.0' was already resolved by api with "blue".` });
  });
});

describe('requestedWaitMs: ?wait= and Prefer: wait=', () => {
  const req = (prefer?: string) => ({ headers: prefer === undefined ? {} : { prefer } }) as unknown as IncomingMessage;
  const url = (query = '') => new URL(`http://x/api/chat/approve${query}`);

  it('reads whole seconds, the query first; a Prefer beyond the limit is cut to it; a malformed Prefer is ignored', () => {
    expect(requestedWaitMs(req(), url())).toBeUndefined();
    expect(requestedWaitMs(req(), url('?wait=5'))).toBe(5_000);
    expect(requestedWaitMs(req('wait=2'), url('?wait=5'))).toBe(5_000);
    expect(requestedWaitMs(req('respond-async, wait=7'), url())).toBe(7_000);
    expect(requestedWaitMs(req('wait=600'), url())).toBe(60_000);
    expect(requestedWaitMs(req('wait=soon'), url())).toBeUndefined();
    expect(requestedWaitMs(req('wait=0'), url())).toBeUndefined();
  });

  it.each(['0', '61', '1.5', 'true', '', '-1'])('?wait=%s is 400 invalid_wait', (value) => {
    expect(() => requestedWaitMs(req(), url(`?wait=${value}`))).toThrow(expect.objectContaining({ status: 400, code: 'invalid_wait', message: `Query parameter 'wait' must be a whole number of seconds from 1 to 60, got '${value}'.` }));
  });
});

describe('awaitVerdict', () => {
  it('looks again at a notice and returns the first verdict that is not pending; unsubscribes', async () => {
    const verdicts: WaitVerdict[] = [{ verdict: 'pending' }, { verdict: 'applied', at: 5 }];
    let looks = 0;
    let subscribed = 0;
    let notify: (() => void) | undefined;
    const verdict = await awaitVerdict(
      async () => {
        const next = verdicts[Math.min(looks++, verdicts.length - 1)]!;
        if (next.verdict === 'pending') queueMicrotask(() => notify?.());
        return next;
      },
      30_000,
      (handler) => {
        subscribed++;
        notify = handler;
        return () => {
          subscribed--;
          notify = undefined;
        };
      },
    );
    expect([verdict, looks, subscribed]).toEqual([{ verdict: 'applied', at: 5 }, 2, 0]);
  });

  it('returns pending once the time is up', async () => {
    let looks = 0;
    const verdict = await awaitVerdict(async () => (looks++, { verdict: 'pending' }), 1, () => () => undefined);
    expect(verdict).toEqual({ verdict: 'pending' });
    expect(looks).toBeGreaterThanOrEqual(1);
  });
});
