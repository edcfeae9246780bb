import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, CHECKPOINT_SCHEMA_VERSION, MemoryCheckpointStore, Runner, UserError, parseRunExport, tool, type Model } from '../../src/index.js';
import { ScriptedModel, call, forkOrigin, forkRun, text, type ScriptStep } from '../../src/entry/testing.js';

function supportDesk(model: Model): Agent {
  const lookupOrder = tool({ name: 'lookup_order', description: 'Find an order.', parameters: z.object({ order: z.string() }), execute: async ({ order }) => ({ order, cents: 4200 }) });
  const refund = tool({ name: 'refund', description: 'Refund an order.', parameters: z.object({ order: z.string(), cents: z.number() }), needsApproval: true, execute: async ({ order }) => `Refunded ${order}.` });
  const refunds = new Agent({ name: 'Refunds', model, tools: [lookupOrder, refund], approvalHandler: () => true });
  return new Agent({ name: 'Desk', model, handoffs: [refunds] });
}
const recorded = () => new ScriptedModel([call('transfer_to_refunds', {}, 't1'), call('lookup_order', { order: 'A1' }, 'l1'), call('refund', { order: 'A1', cents: 4200 }, 'r1'), text('A1 is refunded.')]);
/** The closing reply, from what the transcript says about the refund. */
const closing: ScriptStep = {
  text: '',
  calls: [],
  respond: (request) => {
    const refund = request.messages.find((m) => m.role === 'tool' && m.callId === 'r1');
    return { text: refund && refund.role === 'tool' && refund.isError ? `Not refunded: ${refund.content}` : 'A1 is refunded.' };
  },
};

async function recordedStore() {
  const store = new MemoryCheckpointStore();
  await Runner.run(supportDesk(recorded()), 'Refund A1.', { checkpoint: { store, runId: 'refund-A1' } });
  return store;
}

describe('forkRun: a new run from any turn of a stored one', () => {
  it('asks "what if the refund had been denied" without running the earlier turns again, and leaves the original alone', async () => {
    const store = await recordedStore();
    const original = structuredClone(await store.load('refund-A1'));
    const fork = await forkRun(store, 'refund-A1', { atTurn: 4, decisions: { r1: false } });
    expect(fork).toEqual({ runId: 'refund-A1~fork-4' });
    const model = new ScriptedModel([closing]);
    const result = await Runner.resume(supportDesk(model), { store, runId: fork.runId }).result();
    expect(result.output).toBe("Not refunded: Tool error: approval denied for tool 'refund'");
    // One model request (turn 4); no tool ran again.
    expect(model.requests.map((r) => [r.agent, r.messages.length])).toEqual([['Refunds', 7]]);
    const forked = (await store.load(fork.runId))!;
    expect(forked.entries[0]).toEqual({ kind: 'input', message: { role: 'user', content: 'Refund A1.' }, forkedFrom: { runId: 'refund-A1', atTurn: 4 } });
    expect(forked.entries.filter((e) => e.kind === 'result').map((e) => (e as { message: { callId: string; isError: boolean } }).message)).toEqual([
      { role: 'tool', callId: 't1', name: 'transfer_to_refunds', content: 'Transferred to Refunds', isError: false },
      { role: 'tool', callId: 'l1', name: 'lookup_order', content: '{"order":"A1","cents":4200}', isError: false },
      { role: 'tool', callId: 'r1', name: 'refund', content: "Tool error: approval denied for tool 'refund'", isError: true },
    ]);
    // The denied call's approval entries are not in the fork.
    expect(forked.entries.filter((e) => e.kind === 'approval_request' || e.kind === 'approval_decision')).toEqual([]);
    expect(forkOrigin(forked.entries)).toEqual({ runId: 'refund-A1', atTurn: 4 });
    expect(forkOrigin((await store.load('refund-A1'))!.entries)).toBeUndefined();
    expect(forked.head).toMatchObject({ status: 'completed', output: result.output, turn: 4 });
    expect(await store.load('refund-A1')).toEqual(original);
  });

  it('starts from an earlier turn with another next message and a changed tool result', async () => {
    const store = await recordedStore();
    const fork = await forkRun(store, 'refund-A1', { atTurn: 3, runId: 'what-if', message: 'Only refund half.', results: { l1: { content: 'order A1 not found', isError: true } } });
    const model = new ScriptedModel([text('Cannot find A1.')]);
    const result = await Runner.resume(supportDesk(model), { store, runId: fork.runId }).result();
    expect(result.output).toBe('Cannot find A1.');
    expect(model.requests[0]!.messages.slice(-2)).toEqual([
      { role: 'tool', callId: 'l1', name: 'lookup_order', content: 'order A1 not found', isError: true },
      { role: 'user', content: 'Only refund half.' },
    ]);
    expect(model.requests[0]!.agent).toBe('Refunds');
  });

  it('refuses what it cannot fork, with a UserError that says why', async () => {
    const store = await recordedStore();
    await expect(forkRun(store, 'nope', { atTurn: 1 })).rejects.toThrow(new UserError("forkRun: no stored run 'nope'."));
    await expect(forkRun(store, 'refund-A1', { atTurn: 6 })).rejects.toThrow(new UserError("forkRun: atTurn must be an integer from 1 to 5 (run 'refund-A1' has 4 turns), got 6."));
    await expect(forkRun(store, 'refund-A1', { atTurn: 2, results: { r1: 'x' } })).rejects.toThrow(new UserError("forkRun: 'r1' is not a call of turns 1 to 1 of run 'refund-A1' (its calls: t1)."));
    await expect(forkRun(store, 'refund-A1', { atTurn: 4, decisions: { r1: true as never } })).rejects.toThrow(new UserError("forkRun: decisions can only deny a call after the fact (call 'r1'); to approve it, fork at its turn and decide it there."));
    await forkRun(store, 'refund-A1', { atTurn: 2 });
    await expect(forkRun(store, 'refund-A1', { atTurn: 2 })).rejects.toThrow(new UserError("forkRun: run 'refund-A1~fork-2' is stored already; give the fork another runId."));
  });

  it('stores the origin as format 5 says: a forkedFrom that is not { runId, atTurn } is a corrupt record', () => {
    const head = { agent: 'A', turn: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 }, status: 'suspended' };
    const read = (forkedFrom: unknown) => () => parseRunExport({ format: 'troupe.checkpoint', schemaVersion: CHECKPOINT_SCHEMA_VERSION, runId: 'r', head, entries: [{ kind: 'input', message: { role: 'user', content: 'q' }, forkedFrom }] });
    expect(read({ runId: 'x', atTurn: 2 })().entries[0]).toEqual({ kind: 'input', message: { role: 'user', content: 'q' }, forkedFrom: { runId: 'x', atTurn: 2 } });
    expect(read({ runId: 'x', atTurn: 1.5 })).toThrow("run export, run 'r' entry 1 is corrupt: field 'forkedFrom.atTurn' must be a non-negative integer, got 1.5.");
    expect(read('x')).toThrow("run export, run 'r' entry 1 is corrupt: field 'forkedFrom' must be an object, got \"x\".");
  });
});
