/**
 * Runner.pending: what a stored run waits for, read from its log by any process, so the
 * process that decides later finds the ids without reading log entries itself.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, waitForEvent } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';

describe('Runner.pending', () => {
  it('lists a parked run’s open approval, then its event wait once the approval is settled, then nothing', async () => {
    const store = new MemoryCheckpointStore();
    const refund = tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number() }), needsApproval: true, execute: ({ cents }) => `refunded ${cents}` });
    const pay = tool({ name: 'pay', description: 'd', parameters: z.object({}), execute: () => waitForEvent('paid') });
    const agent = () => new Agent({ name: 'desk', model: new ScriptedModel([batch([['refund', { cents: 7 }, 'r1'], ['pay', {}, 'p1']]), text('done')]), tools: [refund, pay], approvalHandler: () => 'ask' });
    const checkpoint = { store, runId: 'p', suspendOnWait: true };
    await Runner.stream(agent(), 'go', { checkpoint }).result().catch(() => undefined);
    expect(store.load('p')!.head.status).toBe('suspended');
    // Preflight is serial: the approval waits alone, pay has not started.
    const open = await Runner.pending(store, 'p');
    expect(open.approvals.map((a) => [a.approvalId, a.callId, a.tool])).toEqual([['p:1.0', 'r1', 'refund']]);
    expect(open.waits).toEqual([]);

    await Runner.decide(store, 'p', 'p:1.0', { approved: true });
    expect(await Runner.pending(store, 'p')).toEqual({ approvals: [], waits: [] });
    await Runner.resume(agent(), checkpoint).result().catch(() => undefined);
    const waiting = await Runner.pending(store, 'p');
    expect(waiting.approvals).toEqual([]);
    expect(waiting.waits.map((w) => [w.waitId, w.waitKind, w.callId, w.tool])).toEqual([['p:1.1', 'event', 'p1', 'pay']]);

    await Runner.signal(store, 'p', 'paid', 'ok');
    expect(await Runner.pending(store, 'p')).toEqual({ approvals: [], waits: [] });
    await expect(Runner.pending(store, 'nope')).rejects.toThrow("Run 'nope' is not in the checkpoint store.");
  });
});
