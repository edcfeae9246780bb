import { z } from 'zod';
import { Agent } from '../../src/agent.js';
import { BudgetExceeded, RunCancelled } from '../../src/errors.js';
import { handoff } from '../../src/handoff/handoff.js';
import type { AgentHooks } from '../../src/hooks.js';
import type { Model, ModelRequest, ModelStreamPart } from '../../src/models/model.js';
import { ScriptedModel, batch, call, text } from '../../src/models/scripted.js';
import type { RunOptions } from '../../src/runtime/run-options.js';
import { MemoryCheckpointStore, type CheckpointEntry, type CheckpointHead, type CheckpointStore } from '../../src/store/checkpoint-store.js';
import { MemorySession, type Session } from '../../src/store/session.js';
import { toolResult } from '../../src/tools/result.js';
import { tool, type Tool, type ToolPolicy } from '../../src/tools/tool.js';
import type { Message, RunEvent } from '../../src/types.js';
import { REPLIES, REPLY_CONTENT, STORED_OPEN_TURN, STORED_OUTPUT, TOOL_NAME, callId, profileOf, type ProfileName, type ReplyKind, type ResultClass } from './chart-spec.js';

/**
 * The concrete side of the run-chart model: agents, tools, model, stores and session for
 * one profile, each held at the point where the real runtime waits for the outside world,
 * so a test step releases exactly one thing (a model reply, a tool body, a store write).
 * Imports src modules one by one (not src/index.js) so a mutant test can reload them cheaply.
 */

export const ROOT_ID = 'root';

interface Deferred {
  promise: Promise<unknown>;
  resolve(value?: unknown): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: (v?: unknown) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<unknown>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Named one-shot gates: the runtime awaits `wait(key)`, a test step opens it. */
export class Gates {
  private readonly gates = new Map<string, Deferred>();
  private readonly waiting = new Set<string>();

  private gate(key: string): Deferred {
    let d = this.gates.get(key);
    if (!d) this.gates.set(key, (d = deferred()));
    return d;
  }

  wait(key: string): Promise<unknown> {
    this.waiting.add(key);
    return this.gate(key).promise;
  }

  isWaiting(key: string): boolean {
    return this.waiting.has(key);
  }

  /** Opens gate `key`: its waiters get `value`, or are rejected with `error`. */
  open(key: string, error?: Error, value?: unknown): void {
    this.waiting.delete(key);
    if (error) this.gate(key).reject(error);
    else this.gate(key).resolve(value);
  }
}

const USAGE = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/** The root's model: each request waits until a step answers it with a reply kind (or an error). */
export class HeldModel implements Model {
  readonly name = 'held';
  private pending: Deferred | undefined;

  get waiting(): boolean {
    return this.pending !== undefined;
  }

  answer(answer: { reply: ReplyKind; turn: number } | Error): void {
    const p = this.pending!;
    this.pending = undefined;
    if (answer instanceof Error) p.reject(answer);
    else p.resolve(answer);
  }

  async *stream(_request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const p = (this.pending = deferred());
    const { reply, turn } = (await p.promise) as { reply: ReplyKind; turn: number };
    const kinds = REPLIES[reply];
    const content = REPLY_CONTENT[reply];
    if (content) yield { type: 'text_delta', delta: content };
    for (const [i, kind] of kinds.entries()) {
      const args = kind === 'badJson' ? '{' : kind === 'nested' || kind === 'waiter' ? JSON.stringify({ input: 'go' }) : '{}';
      yield { type: 'tool_call', call: { id: callId(turn, i), name: TOOL_NAME[kind], arguments: args } };
    }
    yield { type: 'finish', usage: USAGE, finishReason: kinds.length ? 'tool-calls' : 'stop' };
  }
}

/**
 * A checkpoint store whose writes made while the run waits in a checkpoint state (`holdWhile`)
 * wait for a step: `land()` lets them through, `fail()` rejects them. Other writes land at
 * once, as on SQLite.
 */
export class HeldStore implements CheckpointStore {
  /** Whether a write now is one the chart waits for (set by the driver from the run's snapshot). */
  holdWhile: () => boolean = () => true;
  readonly inner = new MemoryCheckpointStore();
  private mode: 'hold' | 'land' | 'fail' = 'hold';
  private held: Array<{ d: Deferred; write: () => void }> = [];

  constructor(private readonly gates: Gates) {}

  /** Called at every step: writes land only during the step that lets them (a failed store stays failed). */
  hold(): void {
    if (this.mode === 'land') this.mode = 'hold';
  }

  append(runId: string, entries: readonly CheckpointEntry[], head: CheckpointHead): Promise<void> | void {
    const write = (): void => this.inner.append(runId, entries, head);
    if (this.mode === 'fail') return Promise.reject(new Error('disk full'));
    if (!this.holdWhile()) return write();
    if (this.mode === 'land') return Promise.resolve().then(write);
    const d = deferred();
    this.held.push({ d, write });
    return d.promise as Promise<void>;
  }

  async load(runId: string) {
    await this.gates.wait('load');
    return this.inner.load(runId);
  }

  land(): void {
    this.mode = 'land';
    for (const { d, write } of this.held.splice(0)) {
      write();
      d.resolve();
    }
  }

  fail(): void {
    this.mode = 'fail';
    for (const { d } of this.held.splice(0)) d.reject(new Error('disk full'));
  }
}

/** A session whose history load and append wait for a step. */
export class HeldSession implements Session {
  private readonly inner = new MemorySession();
  constructor(private readonly gates: Gates) {}
  async history(id: string): Promise<Message[]> {
    await this.gates.wait('load');
    return this.inner.history(id);
  }
  async append(id: string, runId: string, messages: readonly Message[]): Promise<boolean> {
    await this.gates.wait('session');
    return this.inner.append(id, runId, messages);
  }
  clear(id: string): void {
    this.inner.clear(id);
  }
}

export interface World {
  readonly agent: Agent;
  readonly options: RunOptions;
  readonly model: HeldModel;
  readonly gates: Gates;
  readonly store: HeldStore | undefined;
}

const input = (content: string): Message => ({ role: 'user', content });
const usage = { ...USAGE, requests: 1 };

function seed(store: MemoryCheckpointStore, profile: ProfileName): void {
  const stored = profileOf(profile).stored ?? 'none';
  if (stored === 'completed') {
    const reply: Message = { role: 'assistant', content: STORED_OUTPUT, toolCalls: [], agent: 'main' };
    store.append(ROOT_ID, [{ kind: 'input', message: input('go') }, { kind: 'reply', turn: 1, message: reply }, { kind: 'turn_end', turn: 1 }], { agent: 'main', turn: 1, usage, status: 'completed', output: STORED_OUTPUT });
  }
  if (stored === 'openTurn') {
    const { turn, kinds, settled } = STORED_OPEN_TURN;
    const calls = kinds.map((kind, i) => ({ id: callId(turn, i), name: TOOL_NAME[kind], arguments: '{}' }));
    const entries: CheckpointEntry[] = [{ kind: 'input', message: input('go') }, { kind: 'reply', turn, message: { role: 'assistant', content: '', toolCalls: calls, agent: 'main' } }];
    for (const i of settled) entries.push({ kind: 'result', turn, message: { role: 'tool', callId: calls[i]!.id, name: calls[i]!.name, content: `result:${calls[i]!.id}`, isError: false } });
    store.append(ROOT_ID, entries, { agent: 'main', turn, usage, status: 'running' });
  }
}

/** Builds the agents and options of `profile`; every tool body waits at gate `call:<callId>`. */
export function buildWorld(profile: ProfileName): World {
  const p = profileOf(profile);
  const gates = new Gates();
  const model = new HeldModel();
  const held: ToolPolicy = async (invoke, args, ctx) => {
    await gates.wait(`call:${ctx.callId}`);
    return invoke(args, ctx);
  };
  const gatedTool = (t: Tool): Tool => ({ ...t, policies: [held] });
  const make = (name: string, execute: Tool['execute'], extra: { parallel?: boolean; ask?: boolean } = {}): Tool =>
    gatedTool(
      tool({
        name,
        description: `model-test tool ${name}`,
        parameters: z.object({}),
        execute,
        ...(extra.parallel === false ? { parallel: false } : {}),
        // A predicate answering 'yes' (truthy, not true): it must still ask.
        ...(extra.ask ? { needsApproval: (() => 'yes') as unknown as () => boolean } : {}),
      }),
    );
  const result = (_a: unknown, ctx: { callId: string }) => `result:${ctx.callId}`;
  const ask = (): 'ask' => 'ask';
  const other = new Agent({ name: 'other', model, approvalHandler: ask });

  // Sub-run agents for the agent-as-tool kinds (scripted: they run on their own once started).
  const work = tool({ name: 'work', description: 'leaf work', parameters: z.object({}), execute: () => 'worked' });
  const leaf = new Agent({ name: 'leaf', model: new ScriptedModel([batch([['work', {}], ['work', {}]]), text('leaf done')]), tools: [work] });
  const mid = new Agent({ name: 'mid', model: new ScriptedModel([call('ask_leaf', { input: 'go' }), text('mid done')]), tools: [leaf.asTool()] });
  const hold = tool({ name: 'hold', description: 'waits for the test', parameters: z.object({}), execute: async () => (await gates.wait('hold'), 'held') });
  const waiter = new Agent({ name: 'waiter', model: new ScriptedModel([call('hold', {}), text('waited')]), tools: [hold] });

  const tools: Tool[] = [
    make('ok', result),
    make('gated', result, { ask: true }),
    make('gated_alone', result, { parallel: false, ask: true }),
    make('alone', result, { parallel: false }),
    make('finish', (_a, ctx) => toolResult({ content: `result:${ctx.callId}`, terminate: true })),
    make('post_finish', (_a, ctx) => {
      ctx.mailbox.post('note');
      return toolResult({ content: `result:${ctx.callId}`, terminate: true });
    }),
    make('cancel_run', () => {
      throw new RunCancelled('tool cancelled');
    }),
    make('over_budget', () => {
      throw new BudgetExceeded('toolCalls', 9, 1);
    }),
    gatedTool(mid.asTool()),
    waiter.asTool(),
  ];
  const handoffs = [
    gatedTool(handoff(other)),
    gatedTool(handoff(other, { name: 'bad_transfer', inputFilter: () => { throw new Error('filter broke'); } })),
  ];
  let ends = 0;
  const hooks: AgentHooks = {
    ...(p.hooks
      ? {
          afterModelResponse: (reply) => (reply.content === 'retry-me' ? { retry: true } : reply.content === 'stop-me' ? { stop: true } : undefined),
          // Each run end waits at its own gate (end:1, end:2, …): a resolved gate stays open.
          onRunEnd: async () => {
            await gates.wait(`end:${++ends}`);
            return ends === 1 ? ['more'] : undefined;
          },
        }
      : {}),
    // Each turn's ask waits at its own gate; the step answers true, false, or rejects it (the hook throws).
    ...(p.stopAfterTurn ? { shouldStopAfterTurn: async ({ ctx }) => (await gates.wait(`afterTurn:${ctx.turn}`)) === true } : {}),
    ...(p.resolver ? { resolveToolCall: async (_call, ctx) => void (await gates.wait(`resolve:${ctx.turn}`)) } : {}),
  };
  const agent = new Agent({
    name: 'main', model, tools, handoffs, approvalHandler: ask,
    ...(Object.keys(hooks).length > 0 ? { hooks } : {}),
    ...(p.typed ? { outputType: z.object({ ok: z.literal(true) }) } : {}),
    ...(p.inputGuarded ? { inputGuardrails: [async function policy() { await gates.wait('guard'); return { tripwire: false }; }] } : {}),
    ...(p.plugins ? { plugins: [{ name: 'gated-setup', setup: async () => (await gates.wait('plugins'), {}) }] } : {}),
    ...(p.guarded ? { outputGuardrails: [async () => (await gates.wait('end:1'), { tripwire: true, info: 'no' })] } : {}),
  });

  const store = p.checkpoint ? new HeldStore(gates) : undefined;
  if (store) seed(store.inner, profile);
  const budget = { ...(p.maxToolCalls !== undefined ? { maxToolCalls: p.maxToolCalls } : {}), ...(p.maxTotalTokens !== undefined ? { maxTotalTokens: p.maxTotalTokens } : {}) };
  const options: RunOptions = {
    runId: ROOT_ID,
    ...(p.configError ? { maxTurns: 0 } : p.maxTurns !== undefined ? { maxTurns: p.maxTurns } : {}),
    ...(Object.keys(budget).length ? { budget } : {}),
    ...(store ? { checkpoint: { store, runId: ROOT_ID, ...(p.suspendOnWait ? { suspendOnWait: true } : {}) } } : {}),
    ...(p.session ? { session: { store: new HeldSession(gates), id: 's1' } } : {}),
    ...(p.maxConcurrentToolCalls !== undefined ? { maxConcurrentToolCalls: p.maxConcurrentToolCalls } : {}),
  };
  return { agent, options, model, gates, store };
}

/** What a tool result says, in the model's vocabulary (ResultClass). */
export function classify(event: Extract<RunEvent, { type: 'tool_call_completed' }>): string {
  const { output, isError } = event;
  const rules: Array<[ResultClass, boolean, (o: string) => boolean]> = [
    ['ok', false, (o) => o === `result:${event.call.id}`],
    ['agentOk', false, (o) => o === 'waited'],
    ['transferred', false, (o) => o.startsWith('Transferred to other')],
    ['denied', true, (o) => o === `Tool error: approval denied for tool '${event.call.name}'.`],
    ['unknownTool', true, (o) => o.startsWith(`Tool error: unknown tool '${event.call.name}'`)],
    ['badJson', true, (o) => o.startsWith(`Tool error: arguments for tool '${event.call.name}' are not valid JSON`)],
    ['handoffDup', true, (o) => o === "Handoff not performed: this turn already transferred to 'other'. Only the first handoff in a turn takes effect."],
    ['overBudget', true, (o) => /^Tool error: tool call count \d+ exceeds budget \d+$/.test(o)],
    ['notExecuted', true, (o) => o === 'Tool error: not executed: the turn ended before this call ran'],
    ['notRun', true, (o) => o.startsWith('Tool error: not executed: ')],
    ['cancelled', true, (o) => o.startsWith('Tool error: run cancelled: ')],
    ['toolError', true, (o) => o === 'Tool error: Run cancelled: tool cancelled'],
    ['agentFailed', true, (o) => o.startsWith("Tool error: agent 'mid' failed: tool call count")],
    ['badEdits', true, (o) => o === `Tool error: edited arguments for tool '${event.call.name}' must be a JSON object`],
  ];
  const hit = rules.find(([, err, test]) => err === isError && test(output));
  return hit ? hit[0] : `unexpected(${JSON.stringify({ isError, output })})`;
}

/** The model's label of a root run event; undefined for events the model does not predict (store acks, progress). */
export function label(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'checkpoint_saved':
    case 'tool_call_progress':
    case 'reasoning_delta':
      return undefined;
    case 'tool_call_completed':
      return `tool_call_completed:${event.call.id}:${classify(event)}`;
    case 'run_failed':
      return `run_failed:${event.error.name}`;
    default:
      return 'call' in event ? `${event.type}:${(event.call as { id: string }).id}` : event.type;
  }
}
