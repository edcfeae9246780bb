/**
 * POST /api/chat/approve for an approval a run of this server is about to reopen (issue 25,
 * item 3): the run was just resumed and is still restoring its log, so no live run lists the
 * approval yet; the stored log has it pending. The server waits for the run to reopen it and
 * decides it, instead of answering 404 approval_not_found for an approval that exists. Before
 * that, a run held by a live process of this machine answers 409 run_locked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, Runner, tool, type CheckpointStore } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/entry/server.js';
import { leaseOwner } from '../../src/store/lease-owner.js';
import { call, eventually } from './helpers.js';

let server: TroupeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A store whose loads wait, once `hold()` was called and the run was claimed again, until `open()`. */
function gatedStore(inner: MemoryCheckpointStore) {
  let holding = false;
  let claimed = false;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const blocked = { count: 0 };
  const store: CheckpointStore = {
    append: (...args) => inner.append(...args),
    list: (options) => inner.list(options),
    delete: (runId) => inner.delete(runId),
    release: (runId, owner) => inner.release(runId, owner),
    renew: (runId, owner, ttl) => inner.renew(runId, owner, ttl),
    claim: (runId, owner, ttl, options) => {
      if (holding) claimed = true;
      return inner.claim(runId, owner, ttl, options);
    },
    load: async (runId) => {
      if (holding && claimed) {
        blocked.count += 1;
        await gate;
      }
      return inner.load(runId);
    },
  };
  return { store, blocked, hold: () => void (holding = true), open: () => release() };
}

describe('approving a run that is still restoring', () => {
  it('409 run_locked while a live process of this machine holds it; once resumed here, the approval waits for the run to reopen it, then 200', async () => {
    const ran: string[] = [];
    const refund = tool({ name: 'refund', description: 'd', parameters: z.object({ cents: z.number() }), needsApproval: true, execute: ({ cents }, ctx) => (ran.push(ctx.callId), `refunded ${cents}`) });
    const memory = new MemoryCheckpointStore();
    const parked = Runner.stream(new Agent({ name: 'desk', model: new ScriptedModel([batch([['refund', { cents: 9 }, 'r1']])]), tools: [refund] }), 'go', {
      checkpoint: { store: memory, runId: 'job', suspendOnWait: true },
    });
    await parked.result().catch(() => undefined);
    // This (live) process holds the run: the server leaves it alone.
    const owner = leaseOwner();
    const held = memory.claim('job', owner, 60_000);
    const gated = gatedStore(memory);
    server = await createServer({ agents: { desk: () => new Agent({ name: 'desk', model: new ScriptedModel([text('done after refund')]), tools: [refund] }) }, checkpointStore: gated.store });
    expect(server.recovered).toEqual([]);
    const listed = await call(server, 'GET', '/api/runs/job');
    expect(listed.json.pendingApprovals.map((p: { approvalId: string }) => p.approvalId)).toEqual(['job:1.0']);
    const locked = await call(server, 'POST', '/api/chat/approve', { body: { approvalId: 'job:1.0', decision: 'approve' } });
    expect([locked.status, locked.json]).toEqual([409, { error: { code: 'run_locked', message: `Run 'job' is held by '${owner}' until ${new Date(held.expiresAt).toISOString()}.` } }]);

    memory.release('job', owner);
    gated.hold();
    const resumed = await call(server, 'POST', '/api/runs/job/resume');
    expect(resumed.status).toBe(202);
    // The run claimed the lease and waits for its log; the approval is not listed by a live run yet.
    await eventually(() => gated.blocked.count, (n) => n === 1);
    const approving = call(server, 'POST', '/api/chat/approve', { body: { approvalId: 'job:1.0', decision: 'approve' } });
    // The approve route looks the approval up in the stored log (a second load) before it waits for the run.
    const first = await Promise.race([approving.then(() => 'answered'), eventually(() => gated.blocked.count, (n) => n === 2).then(() => 'waiting')]);
    expect(first).toBe('waiting');
    gated.open();
    const answer = await approving;
    expect([answer.status, answer.json]).toEqual([200, { runId: 'job', approvalId: 'job:1.0', callId: 'r1', decision: 'approve' }]);
    const done = await eventually(() => call(server!, 'GET', '/api/runs/job'), (r) => r.json?.status === 'completed');
    expect(done.json.output).toBe('done after refund');
    expect(ran).toEqual(['r1']);
  });
});
