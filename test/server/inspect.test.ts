import { afterEach, describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { demoAgent } from '../../src/cli/demo.js';
import { getRunMachine } from '../../src/index.js';
import { activeStateIds, sanitize, walkMachine, type WireStateNode } from '../../src/inspect/index.js';
import type { ActorRecord, DefinitionRecord, MicrostepRecord, RunEventRecord, RunRecord, SnapshotRecord, WireRecord } from '../../src/inspect/wire.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { calcAgent, gatedAgent } from './agents.js';
import { call, eventually, openSse, type SseClient } from './helpers.js';

const servers: TroupeServer[] = [];
const clients: SseClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await server.close();
});

async function start(inspect: 'always' | 'on-demand' | 'off'): Promise<TroupeServer> {
  const server = await createServer({ agents: { calc: calcAgent, gated: gatedAgent, demo: demoAgent }, inspect });
  servers.push(server);
  return server;
}

async function sse(server: TroupeServer, method: 'GET' | 'POST', path: string, body?: object, headers?: Record<string, string>): Promise<SseClient> {
  const client = await openSse(server, method, path, { ...(body ? { body } : {}), ...(headers ? { headers } : {}) });
  clients.push(client);
  return client;
}

async function runToEnd(server: TroupeServer, agent: string): Promise<string> {
  const client = await sse(server, 'POST', '/api/chat', { agent, input: 'go' });
  await client.all();
  return client.res.headers['x-run-id'] as string;
}

function findNode(node: WireStateNode, id: string): WireStateNode | undefined {
  if (node.id === id) return node;
  for (const child of node.states) {
    const found = findNode(child, id);
    if (found) return found;
  }
  return undefined;
}

const ofKind = <K extends WireRecord['kind']>(records: readonly WireRecord[], kind: K) => records.filter((r): r is Extract<WireRecord, { kind: K }> => r.kind === kind);

describe('inspection feed: replay', () => {
  it('replays a finished run to a late client: definition, actors, snapshots, run events, then sync', async () => {
    const server = await start('always');
    const runId = await runToEnd(server, 'calc');
    const client = await sse(server, 'GET', '/api/inspect');
    expect(client.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await client.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    const records = client.records();
    const sync = records.at(-1)!;
    expect(sync).toMatchObject({ kind: 'sync', version: 1, replayed: records.length - 1 });
    // Strictly increasing seq, SSE id = seq.
    const seqs = records.slice(0, -1).map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(client.frames.slice(0, -1).map((f) => Number(f.id))).toEqual(seqs);

    const [definition] = ofKind(records, 'definition') as DefinitionRecord[];
    expect(definition!.machineId).toBe('run');
    const actors = ofKind(records, 'actor') as ActorRecord[];
    const root = actors.find((a) => a.logic === 'run')!;
    expect(root).toMatchObject({ run: runId, actorId: runId, runId, parentSessionId: null, definitionId: definition!.definitionId });
    expect(definition!.seq).toBeLessThan(root.seq);
    const executor = actors.find((a) => a.logic === 'executor')!;
    expect(executor).toMatchObject({ actorId: 'tools', parentSessionId: root.sessionId });
    // Tool-call actors are named `<turn>.<index>` (the model's call ids c1, c2 need not be unique).
    expect(actors.filter((a) => a.logic === 'toolCall').map((a) => [a.actorId, a.parentSessionId])).toEqual([
      ['1.0', executor.sessionId],
      ['1.1', executor.sessionId],
    ]);
    // The run, its executor and one actor per call: model turns are the run's own requestModel action, not actors.
    expect(actors.map((a) => a.logic)).toEqual(['run', 'executor', 'toolCall', 'toolCall']);

    const snapshots = ofKind(records, 'snapshot') as SnapshotRecord[];
    const last = snapshots.filter((s) => s.sessionId === root.sessionId).at(-1)!;
    expect(last).toMatchObject({ status: 'done', value: 'completed', active: ['run', 'run.completed'] });
    // The run machine's context is a summary, never the RunCore.
    expect(last.context).toEqual({ run: { $run: runId, agent: 'calc', turn: 2, inFlight: 0 } });
    const callSnap = snapshots.find((s) => s.sessionId === actors.find((a) => a.actorId === '1.0')!.sessionId && s.status === 'done')!;
    expect(callSnap.context).toEqual({ callId: 'c1', tool: 'add' });
    expect(callSnap.output).toMatchObject({ output: '3', isError: false });
    expect(snapshots.find((s) => s.sessionId === executor.sessionId)!.context).toEqual({});

    const microsteps = ofKind(records, 'microstep') as MicrostepRecord[];
    // A reply with calls goes from the model request to preflight in one step.
    expect(microsteps.some((m) => m.transitions.some((t) => t.source === 'run.turn.model' && t.targets[0] === 'run.turn.executing' && t.event === 'model.replied'))).toBe(true);
    const dispatch = ofKind(records, 'event').find((e) => e.event.type === 'dispatch')!;
    expect(dispatch.event).toEqual({ type: 'dispatch', calls: [{ callId: 'c1', tool: 'add' }, { callId: 'c2', tool: 'add' }] });

    const runRecords = ofKind(records, 'run') as RunRecord[];
    expect(runRecords.map((r) => r.status)).toEqual(['running', 'completed']);
    expect(runRecords[1]).toMatchObject({ agent: 'calc', output: 'done', inspected: true });
    const runEvents = ofKind(records, 'run_event') as RunEventRecord[];
    expect(runEvents.at(-1)!.event).toMatchObject({ type: 'run_completed', output: 'done' });
    // Nothing on the wire is a function or a live reference.
    expect(JSON.stringify(records)).not.toMatch(/"\$type":"(RunCore|Actor)"/);
  });

  it('resumes after Last-Event-ID without repeating records', async () => {
    const server = await start('always');
    await runToEnd(server, 'calc');
    const first = await sse(server, 'GET', '/api/inspect');
    await first.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    const cut = first.records()[9]!.seq;
    const resumed = await sse(server, 'GET', '/api/inspect', undefined, { 'last-event-id': String(cut) });
    await resumed.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    const replayed = resumed.records().slice(0, -1);
    expect(replayed[0]!.seq).toBeGreaterThan(cut);
    expect(replayed.map((r) => r.seq)).toEqual(first.records().slice(0, -1).filter((r) => r.seq > cut).map((r) => r.seq));
  });

  it('draws sub-runs under the tool call that spawned them', async () => {
    const server = await start('always');
    const client = await sse(server, 'POST', '/api/chat', { agent: 'demo', input: 'trip' });
    const runId = client.res.headers['x-run-id'] as string;
    await client.until((frames) => frames.some((f) => f.event === 'approval_required'));
    const approvalId = client.events().find((e) => e.type === 'approval_required')!.approvalId as string;
    expect((await call(server, 'POST', '/api/chat/approve', { body: { approvalId, decision: 'approve' } })).status).toBe(200);
    await client.all();
    const records = server.feed.historyOf(runId);
    const actors = ofKind(records, 'actor') as ActorRecord[];
    // call_research is call 0 of the specialist's turn 2; its sub-run is `<runId>/2.0`.
    const sub = actors.find((a) => a.runId === `${runId}/2.0`)!;
    expect(sub).toMatchObject({ logic: 'run', actorId: `${runId}/2.0` });
    const spawner = actors.find((a) => a.sessionId === sub.parentSessionId)!;
    expect(spawner).toMatchObject({ logic: 'toolCall', actorId: '2.0' });
    const subCalls = actors.filter((a) => a.logic === 'toolCall' && actors.find((e) => e.sessionId === a.parentSessionId)?.parentSessionId === sub.sessionId);
    expect(subCalls.map((a) => a.actorId)).toEqual(['1.0', '1.1', '1.2']);
    expect(ofKind(records, 'approval').map((a) => [a.approvalId, a.callId, a.state])).toEqual([
      [approvalId, 'call_book', 'pending'],
      [approvalId, 'call_book', 'approved'],
    ]);
  });
});

describe('inspection feed: zero cost when nobody watches', () => {
  it('on-demand: a run nobody watches is not inspected; its run events still replay', async () => {
    const server = await start('on-demand');
    const runId = await runToEnd(server, 'calc');
    const kinds = new Set(server.feed.historyOf(runId).map((r) => r.kind));
    expect([...kinds].sort()).toEqual(['run', 'run_event']);
    const client = await sse(server, 'GET', '/api/inspect');
    await client.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    expect((ofKind(client.records(), 'run') as RunRecord[]).at(-1)).toMatchObject({ run: runId, status: 'completed', inspected: false });
  });

  it('on-demand: an inspector connecting mid-run attaches late and bootstraps the actor tree', async () => {
    const server = await start('on-demand');
    const chat = await sse(server, 'POST', '/api/chat', { agent: 'gated', input: 'refund' });
    const runId = chat.res.headers['x-run-id'] as string;
    await chat.until((frames) => frames.some((f) => f.event === 'approval_required'));
    expect(server.feed.isInspecting(runId)).toBe(false);

    const inspector = await sse(server, 'GET', '/api/inspect');
    await inspector.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    expect(server.feed.isInspecting(runId)).toBe(true);
    await inspector.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'snapshot'));
    const actors = ofKind(inspector.records(), 'actor') as ActorRecord[];
    // No call has run yet, so the run has no executor: the run and its approval wait (a wait machine).
    expect(actors.map((a) => [a.actorId, a.logic, a.bootstrap])).toEqual([
      [runId, 'run', true],
      ['approval', 'wait', true],
    ]);
    const rootSnap = (ofKind(inspector.records(), 'snapshot') as SnapshotRecord[]).find((s) => s.sessionId === actors[0]!.sessionId)!;
    expect(rootSnap).toMatchObject({ eventType: 'bootstrap', status: 'active' });
    expect(rootSnap.active).toEqual(['run', 'run.turn', 'run.turn.executing', 'run.turn.executing.approvalWait']);

    // Live from here on: approving shows the call actor and the transitions out of approvalWait.
    await call(server, 'POST', '/api/chat/approve', { body: { runId, callId: 'r1', decision: 'approve' } });
    await chat.all();
    await inspector.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'run' && JSON.parse(f.data).status === 'completed'));
    const live = inspector.records();
    expect((ofKind(live, 'actor') as ActorRecord[]).some((a) => a.actorId === '1.0' && a.logic === 'toolCall' && !a.bootstrap)).toBe(true);
    expect((ofKind(live, 'microstep') as MicrostepRecord[]).some((m) => m.transitions.some((t) => t.source === 'run.turn.executing.approvalWait'))).toBe(true);

    // Once the last inspector leaves, new runs are not inspected again.
    inspector.close();
    await eventually(() => server.stats().inspectorClients, (n) => n === 0);
    const next = await runToEnd(server, 'calc');
    expect(server.feed.historyOf(next).some((r) => r.kind === 'actor')).toBe(false);
  });

  it('off: never inspects, even with a client connected', async () => {
    const server = await start('off');
    const inspector = await sse(server, 'GET', '/api/inspect');
    await inspector.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'sync'));
    const runId = await runToEnd(server, 'calc');
    expect(server.feed.historyOf(runId).some((r) => r.kind === 'actor' || r.kind === 'snapshot')).toBe(false);
    await inspector.until((frames) => frames.some((f) => JSON.parse(f.data).kind === 'run_event'));
  });
});

describe('inspection: definitions and sanitising', () => {
  it('walks the run machine from machine.root, keeping eventless transitions, guards, invokes and entries', () => {
    const root = walkMachine(getRunMachine() as never);
    expect(root.id).toBe('run');
    // The executor is made with the run's first call, not invoked: the root invokes nothing.
    expect(root.invoke).toEqual([]);
    expect(root.transitions.find((t) => t.event === 'CANCEL')).toMatchObject({ kind: 'on', targets: ['run.cancelled'] });
    expect(root.transitions.find((t) => t.event === 'child.spend')).toMatchObject({ targets: [], actions: ['foldChildSpend'] });
    const model = findNode(root, 'run.turn.model')!;
    expect([model.invoke, model.entry]).toEqual([[], ['requestModel']]);
    expect(model.transitions.map((t) => [t.kind, t.event, t.guard ?? null, t.targets[0], t.actions])).toEqual([
      ['on', 'model.replied', 'replyRetried', 'run.turn', ['discardReply']],
      ['on', 'model.replied', 'replyOverBudget', 'run.stopping', ['recordReply', 'stopOverBudget']],
      ['on', 'model.replied', 'replyStops', 'run.turn.turnEnd', ['recordReply', 'closeStoppedCalls']],
      ['on', 'model.replied', 'noToolCalls', 'run.turn.turnEnd', ['recordReply']],
      ['on', 'model.replied', 'replyNeedsResolving', 'run.turn.executing.resolving', ['recordReply']],
      ['on', 'model.replied', null, 'run.turn.executing', ['recordReply']],
      ['on', 'model.failed', null, 'run.failed', ['failWithModelError']],
    ]);
    expect(findNode(root, 'run.turn.executing')!.initial).toBe('run.turn.executing.preflight');
    // The last turnEnd transition re-enters the turn (the next turn starts at checkLimits).
    expect(findNode(root, 'run.turn.turnEnd')!.transitions.at(-1)).toMatchObject({ kind: 'always', targets: ['run.turn'], reenter: true });
    expect(findNode(root, 'run.completed')!).toMatchObject({ type: 'final', entry: ['emitCompleted', 'closePlugins'] });
    expect(JSON.parse(JSON.stringify(root))).toEqual(root);
    expect(activeStateIds(getRunMachine() as never, { turn: { executing: { barrier: 'runningAlone' } } })).toEqual([
      'run',
      'run.turn',
      'run.turn.executing',
      'run.turn.executing.barrier',
      'run.turn.executing.barrier.runningAlone',
    ]);
  });

  it('sanitize drops functions, replaces refs and class instances, truncates and cuts cycles', () => {
    // Any actor reference will do (never started).
    const actor = createActor(createMachine({ id: 'ref' }));
    class Secret {
      constructor(readonly key = 'hidden') {}
    }
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const value = {
      fn: () => 1,
      ref: actor,
      secret: new Secret(),
      long: 'x'.repeat(1000),
      list: Array.from({ length: 30 }, (_, i) => i),
      error: new RangeError('bad'),
      cyclic,
      deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
      big: 10n,
      nan: Number.NaN,
    };
    const clean = sanitize(value) as Record<string, any>;
    expect('fn' in clean).toBe(false);
    expect(clean.ref).toEqual({ $actor: actor.sessionId, id: actor.id });
    expect(clean.secret).toEqual({ $type: 'Secret' });
    expect(clean.long).toBe(`${'x'.repeat(240)}… [760 more chars]`);
    expect(clean.list).toHaveLength(25);
    expect(clean.list.at(-1)).toBe('[… 6 more]');
    expect(clean.error).toEqual({ name: 'RangeError', code: undefined, message: 'bad' });
    expect(clean.cyclic).toEqual({ name: 'loop', self: '[circular]' });
    expect(clean.deep).toEqual({ a: { b: { c: { d: '[…]' } } } });
    expect(clean.big).toBe('10n');
    expect(clean.nan).toBe('NaN');
    expect(() => JSON.stringify(clean)).not.toThrow();
  });
});
