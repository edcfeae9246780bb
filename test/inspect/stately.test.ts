import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createWebSocketInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { Runner } from '../../src/index.js';
import { calcAgent } from '../server/agents.js';

/**
 * `@statelyai/inspect` as a plain `inspect` observer: its WebSocket inspector sends to a
 * local WebSocket server (loopback, random port) standing in for `@statelyai/inspect/server`,
 * which relays each message, JSON-parsed, to the Stately inspector page.
 */

const cleanups: Array<() => void | Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Relay {
  readonly url: string;
  readonly messages: StatelyInspectionEvent[];
  /** Resolves once the inspector has connected. */
  readonly connected: Promise<void>;
  until(predicate: (messages: readonly StatelyInspectionEvent[]) => boolean): Promise<void>;
}

async function startRelay(): Promise<Relay> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  const messages: StatelyInspectionEvent[] = [];
  const waiters = new Set<() => void>();
  const connected = new Promise<void>((resolve) =>
    wss.on('connection', (socket) => {
      socket.on('message', (data, isBinary) => {
        expect(isBinary).toBe(false);
        messages.push(JSON.parse(data.toString()) as StatelyInspectionEvent);
        for (const wake of waiters) wake();
      });
      resolve();
    }),
  );
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    messages,
    connected,
    until: (predicate) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!predicate(messages)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * The shape the Stately inspector takes (`StatelyInspectionEvent`, and the check its
 * receivers apply: an object with a string `type` and `_version`), field by field.
 * Returns the problems found; none means the message is well formed.
 */
function problems(m: unknown): string[] {
  if (!isObject(m)) return ['not an object'];
  const out: string[] = [];
  const need = (ok: boolean, what: string): void => void (ok || out.push(`${String(m.type)}: ${what}`));
  need(['@xstate.actor', '@xstate.event', '@xstate.snapshot'].includes(m.type as string), 'type');
  need(m._version === '0.7.2', '_version');
  need(typeof m.sessionId === 'string' && /^x:\d+$/.test(m.sessionId), 'sessionId');
  need(typeof m.createdAt === 'string' && /^\d+$/.test(m.createdAt), 'createdAt');
  need(optionalString(m.rootId), 'rootId');
  need(m.id === null || typeof m.id === 'string', 'id');
  if (m.type === '@xstate.actor') {
    need(typeof m.name === 'string' && m.name.length > 0, 'name');
    need(optionalString(m.parentId), 'parentId');
    need(isObject(m.snapshot) && typeof m.snapshot.status === 'string', 'snapshot');
    need(typeof m.definition === 'string' && isObject(JSON.parse(m.definition)), 'definition');
  } else {
    need(isObject(m.event) && typeof m.event.type === 'string', 'event');
    if (m.type === '@xstate.event') need(optionalString(m.sourceId), 'sourceId');
    else need(isObject(m.snapshot) && typeof m.snapshot.status === 'string', 'snapshot');
  }
  return out;
}

type Of<T extends StatelyInspectionEvent['type']> = Extract<StatelyInspectionEvent, { type: T }>;
const actors = (ms: readonly StatelyInspectionEvent[]): Array<Of<'@xstate.actor'>> => ms.filter((m): m is Of<'@xstate.actor'> => m.type === '@xstate.actor');
/** XState's snapshot as it arrives (JSON): its fields depend on the actor's logic. */
type SnapshotJson = { status: string; value?: unknown; context?: Record<string, unknown>; output?: unknown };
const snapshotsOf = (ms: readonly StatelyInspectionEvent[], sessionId: string) =>
  ms
    .filter((m): m is Of<'@xstate.snapshot'> => m.type === '@xstate.snapshot' && m.sessionId === sessionId)
    .map((m) => ({ ...m, snapshot: m.snapshot as unknown as SnapshotJson }));
const eventsOf = (ms: readonly StatelyInspectionEvent[], sessionId: string) =>
  ms.filter((m): m is Of<'@xstate.event'> => m.type === '@xstate.event' && m.sessionId === sessionId).map((m) => m.event.type);

/** Every actor of the run (run, executor, two tool calls) has reached its final snapshot. */
const finished = (ms: readonly StatelyInspectionEvent[]): boolean => {
  const named = ['tools', '1.0', '1.1'].map((name) => actors(ms).find((a) => a.name === name));
  const run = actors(ms).find((a) => a.name.startsWith('run_'));
  return [run, ...named].every((a) => a && snapshotsOf(ms, a.sessionId).some((s) => s.snapshot.status !== 'active'));
};

async function inspectRun(options: Record<string, unknown> = {}): Promise<{ runId: string; messages: StatelyInspectionEvent[] }> {
  const relay = await startRelay();
  // autoStart (the default) connects right away; events before the connection are buffered (up to maxDeferredEvents).
  const inspector = createWebSocketInspector({ url: relay.url, ...options });
  cleanups.push(() => inspector.stop());
  await relay.connected;
  const handle = Runner.stream(calcAgent(), 'add', { inspect: inspector.inspect });
  const types: string[] = [];
  for await (const event of handle) types.push(event.type);
  expect(types.at(-1)).toBe('run_completed');
  await relay.until(finished);
  return { runId: handle.runId, messages: relay.messages };
}

describe("Stately's inspector (@statelyai/inspect) as the inspect run option", () => {
  it('receives well-formed actor, event and snapshot messages for the run and its tool-call actors', async () => {
    const { runId, messages } = await inspectRun();
    expect(messages.flatMap(problems)).toEqual([]);

    // The run actor is named by the run id and is the root; its definition is the run chart.
    const run = actors(messages).find((a) => a.name === runId)!;
    expect(run).toMatchObject({ type: '@xstate.actor', rootId: run.sessionId });
    expect(run.parentId).toBeUndefined();
    const chart = JSON.parse(run.definition!) as { id: string; initial: string; states: Record<string, unknown> };
    expect([chart.id, chart.initial]).toEqual(['run', 'idle']);
    expect(Object.keys(chart.states)).toEqual(expect.arrayContaining(['idle', 'starting', 'turn', 'completed', 'failed', 'cancelled']));
    expect(eventsOf(messages, run.sessionId)).toEqual(expect.arrayContaining(['xstate.init', 'START']));
    const runSnapshots = snapshotsOf(messages, run.sessionId);
    expect(runSnapshots[0]!.snapshot).toMatchObject({ status: 'active', value: 'idle' });
    expect(runSnapshots.at(-1)!.snapshot).toMatchObject({ status: 'done', value: 'completed' });
    expect(runSnapshots.at(-1)!.rootId).toBe(run.sessionId);

    // The tree: run → executor `tools` → tool-call actors `1.0`, `1.1` (turn.index).
    const executor = actors(messages).find((a) => a.name === 'tools')!;
    expect(executor).toMatchObject({ parentId: run.sessionId, rootId: run.sessionId });
    for (const [name, callId, output] of [['1.0', 'c1', '3'], ['1.1', 'c2', '7']] as const) {
      const toolCall = actors(messages).find((a) => a.name === name)!;
      expect(toolCall).toMatchObject({ parentId: executor.sessionId, rootId: run.sessionId });
      expect(eventsOf(messages, toolCall.sessionId)).toEqual(['xstate.init', 'settled']);
      const last = snapshotsOf(messages, toolCall.sessionId).at(-1)!;
      expect(last.snapshot).toMatchObject({ status: 'done', output: { output, isError: false } });
      expect(last.snapshot.context).toMatchObject({ callId, tool: 'add' });
      // The executor heard of it finishing.
      expect(eventsOf(messages, executor.sessionId)).toContain(`xstate.done.actor.${name}`);
    }
    // Every actor (run, executor, model caller, two tool calls) belongs to this run's tree.
    expect(new Set(actors(messages).map((a) => a.rootId))).toEqual(new Set([run.sessionId]));
  });

  it('trims what it ships with a serialize option (run contexts and actor inputs hold the agent, its model and the transcript)', async () => {
    const plain = await inspectRun();
    // Unsanitised, the ScriptedModel's internals travel in the run's context and the actors' input.
    expect(plain.messages.some((m) => JSON.stringify(m).includes('"lastCursor"'))).toBe(true);
    const trimmed = await inspectRun({ serialize: trim });
    expect(trimmed.messages.flatMap(problems)).toEqual([]);
    expect(trimmed.messages.filter((m) => JSON.stringify(m).includes('"lastCursor"'))).toEqual([]);
    const run = actors(trimmed.messages).find((a) => a.name === trimmed.runId)!;
    const last = snapshotsOf(trimmed.messages, run.sessionId).at(-1)!.snapshot;
    expect([last.status, last.value, last.context]).toEqual(['done', 'completed', {}]);
    // Tool-call contexts are small and pass through.
    const toolCall = actors(trimmed.messages).find((a) => a.name === '1.0')!;
    expect(snapshotsOf(trimmed.messages, toolCall.sessionId).at(-1)!.snapshot.context).toMatchObject({ callId: 'c1', tool: 'add' });
    expect(finished(trimmed.messages)).toBe(true);
  });
});

describe('an observer object as the inspect option', () => {
  it('gets every inspection event, also beside a tracer (which adds its own observer)', async () => {
    const count = async (options: Record<string, unknown>): Promise<Map<string, number>> => {
      const seen = new Map<string, number>();
      const handle = Runner.stream(calcAgent(), 'add', { inspect: { next: (e) => void seen.set(e.type, (seen.get(e.type) ?? 0) + 1) }, ...options });
      for await (const event of handle) void event;
      return seen;
    };
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const alone = await count({});
    expect([...alone.keys()].sort()).toEqual(['@xstate.action', '@xstate.actor', '@xstate.event', '@xstate.microstep', '@xstate.snapshot']);
    expect(await count({ tracer })).toEqual(alone);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toContain('invoke_agent calc');
  });
});

/** The recipe of docs/inspector.md (Using Stately's inspector): leaves out the run's context and every actor's input (in its snapshot and its init event). */
function trim(event: StatelyInspectionEvent): StatelyInspectionEvent {
  const init = (e: { type: string }) => (e.type === 'xstate.init' ? { type: e.type } : e);
  if (event.type === '@xstate.event') return { ...event, event: init(event.event) };
  const { input: _input, ...snapshot } = event.snapshot as { input?: unknown; context?: { run?: unknown } };
  const trimmed = { ...event, snapshot: { ...snapshot, context: snapshot.context?.run ? {} : snapshot.context } };
  return (event.type === '@xstate.snapshot' ? { ...trimmed, event: init(event.event) } : trimmed) as StatelyInspectionEvent;
}
