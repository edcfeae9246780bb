/**
 * A server closed while a run waits for a person: with a checkpoint store the run parks
 * (stored as suspended, lease released) instead of being cancelled, and the next server on
 * the same store resumes it at the same approval. A run that is working is cancelled.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, tool } from '../../src/index.js';
import { ScriptedModel, call as scriptedCall, text } from '../../src/entry/testing.js';
import { createServer } from '../../src/entry/server.js';
import { call, eventually, openSse } from './helpers.js';

describe('closing a server with a store', () => {
  it('parks a run that waits for an approval; the next server resumes it at the same approval and the tool runs once', async () => {
    const ran: string[] = [];
    const refund = tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number() }), needsApproval: true, execute: ({ cents }, ctx) => (ran.push(ctx.callId), `refunded ${cents}`) });
    const agents = { desk: () => new Agent({ name: 'desk', model: new ScriptedModel([scriptedCall('refund', { cents: 9 }, 'r1'), text('refunded')]), tools: [refund] }) };
    const store = new MemoryCheckpointStore();
    const first = await createServer({ agents, checkpointStore: store });
    const chat = await openSse(first, 'POST', '/api/chat', { body: { agent: 'desk', input: 'refund me' } });
    const runId = chat.res.headers['x-run-id'] as string;
    await eventually(() => call(first, 'GET', `/api/runs/${runId}`), (r) => r.json?.pendingApprovals?.length === 1);
    await first.close();
    chat.close();
    expect(store.load(runId)!.head.status).toBe('suspended');
    expect(store.load(runId)!.lease).toBeUndefined();

    const second = await createServer({ agents, checkpointStore: store });
    try {
      expect(second.recovered).toEqual([runId]);
      const detail = await call(second, 'GET', `/api/runs/${runId}`);
      expect(detail.json.pendingApprovals.map((a: { approvalId: string }) => a.approvalId)).toEqual([`${runId}:1.0`]);
      const approved = await call(second, 'POST', '/api/chat/approve', { body: { approvalId: `${runId}:1.0`, decision: 'approve' } });
      expect(approved.status).toBe(200);
      const done = await eventually(() => call(second, 'GET', `/api/runs/${runId}`), (r) => r.json?.status === 'completed');
      expect(done.json.output).toBe('refunded');
      expect(ran).toEqual(['r1']);
    } finally {
      await second.close();
    }
  });
});
