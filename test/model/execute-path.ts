import type { TestModel } from 'xstate/graph';
import { z } from 'zod';
import { Agent, tool, type RunEvent, type RunHandle } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import type { Launcher } from './harness.js';
import { serializeTurn, type CallSpec, type CallStatus, type TurnEvent, type TurnPath, type TurnSnapshot } from './turn-model.js';

/**
 * Runs one abstract path against a real run: START launches the run, APPROVE/DENY decide
 * the pending approval, SETTLE releases a tool body. After every step the run is flushed
 * and checked: the four invariants, then conformance with the abstract state.
 */

/** How the test's consumer decides approvals. */
export type ApprovalMode =
  /** No approvalHandler; the reader stops pulling at approval_required and the step decides with ev.approve()/ev.reject(). */
  | 'parked'
  /** approvalHandler returns "ask"; the reader keeps pulling and the step decides with handle.approvals.approve/reject(id). */
  | 'ask';

/** One of the four run invariants was broken by the runtime. */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  constructor(
    /** Every violation seen so far, first one first. */
    readonly violations: readonly string[],
    /** Serialized abstract state after the step that exposed them. */
    readonly state: string,
  ) {
    super(`${violations.join('; ')} (in abstract state ${state})`);
  }
}

/** The runtime is not in the state the abstract model is in (but no invariant broke). */
export class ModelMismatch extends Error {
  override name = 'ModelMismatch';
}

const deniedOutput = (id: string): string => `Tool error: approval denied for tool '${toolName(id)}'.`;
const resultOf = (id: string): string => `result:${id}`;
const toolName = (id: string): string => `t_${id}`;

/** Events after the last tool result of the batch: end of turn 1, the final reply, completion. */
export const RUN_TAIL = ['turn_ended', 'turn_started', 'text_delta', 'message_completed', 'turn_ended', 'run_completed'] as const;

/** Readable, exact label of a run event; tool results carry ok / denied / the unexpected output. */
export function label(event: RunEvent): string {
  if (event.type === 'tool_call_completed') {
    const id = event.call.id;
    const outcome =
      !event.isError && event.output === resultOf(id) && event.result === resultOf(id)
        ? 'ok'
        : event.isError && event.output === deniedOutput(id)
          ? 'denied'
          : `unexpected(${JSON.stringify({ isError: event.isError, output: event.output })})`;
    return `tool_call_completed:${id}:${outcome}`;
  }
  return 'call' in event ? `${event.type}:${event.call.id}` : event.type;
}

/** The events one abstract step must produce: the stepped call first, then the cascade in request order. */
export function expectedEvents(prev: TurnSnapshot, event: TurnEvent, next: TurnSnapshot): string[] {
  const out: string[] = [];
  if (event.type === 'START') out.push('run_started', 'turn_started', 'message_completed');
  const calls = next.context.calls;
  const stepped = event.type === 'START' ? -1 : calls.findIndex((c) => event.type.endsWith(`_${c.id}`));
  const order = [...calls.keys()].sort((a, b) => (a === stepped ? -1 : b === stepped ? 1 : a - b));
  for (const i of order) {
    const from = prev.context.status[i]!;
    const to = next.context.status[i]!;
    if (from === to) continue;
    const id = calls[i]!.id;
    const key = `${from}>${to}`;
    if (to === 'running') out.push(`tool_call_started:${id}`);
    else if (key === 'pending>awaiting') out.push(`approval_required:${id}`);
    else if (key === 'running>done') out.push(`tool_call_completed:${id}:ok`);
    else if (key === 'awaiting>denied') out.push(`tool_call_completed:${id}:denied`);
    else if (key !== 'awaiting>approved') throw new Error(`unexpected abstract change ${id} ${key}`);
  }
  if (next.status === 'done') out.push(...RUN_TAIL);
  return out;
}

interface Deferred {
  promise: Promise<string>;
  resolve(value: string): void;
}

function deferred(): Deferred {
  let resolve!: (value: string) => void;
  const promise = new Promise<string>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

type ApprovalRequired = Extract<RunEvent, { type: 'approval_required' }>;

export class PathExecution {
  /** Invariant violations seen so far (real-time hooks and the event stream). */
  readonly violations: string[] = [];
  /** Every run event the consumer read, in order. */
  readonly events: RunEvent[] = [];
  /** Expected labels, built step by step from the abstract model. */
  readonly expected: string[] = [];
  /** Chronological log of tool-body starts and ends. */
  readonly bodyLog: string[] = [];

  private readonly index = new Map<string, number>();
  private readonly gates = new Map<string, Deferred>();
  private readonly executing = new Set<string>();
  private readonly decided = new Map<string, boolean>();
  private lastBodyStart = -1;
  // Event-derived view of the run.
  private readonly started = new Set<string>();
  private readonly inFlight = new Set<string>();
  private readonly results = new Map<string, number>();
  private lastStartedEvent = -1;
  private terminal: RunEvent | undefined;

  private run: RunHandle | undefined;
  private model: ScriptedModel | undefined;
  private readerDone = false;
  private parked: ApprovalRequired | undefined;
  private resume: (() => void) | undefined;

  constructor(
    readonly calls: readonly CallSpec[],
    readonly launch: Launcher,
    readonly mode: ApprovalMode,
  ) {
    calls.forEach((c, i) => this.index.set(c.id, i));
  }

  private spec(id: string): CallSpec {
    const i = this.index.get(id);
    if (i === undefined) throw new ModelMismatch(`unknown call id ${id}`);
    return this.calls[i]!;
  }

  private gate(id: string): Deferred {
    let d = this.gates.get(id);
    if (!d) this.gates.set(id, (d = deferred()));
    return d;
  }

  private violate(message: string): void {
    this.violations.push(message);
  }

  // ── the system under test ──────────────────────────────────────────

  private startRun(): void {
    const tools = this.calls.map((c) => {
      const made = tool({
        name: toolName(c.id),
        description: `model-test tool for ${c.id}`,
        parameters: z.object({}),
        parallel: c.handoff ? true : !c.barrier,
        needsApproval: c.gated,
        execute: async (_args, ctx) => {
          this.bodyStarted(ctx.callId);
          try {
            return await this.gate(ctx.callId).promise;
          } finally {
            this.executing.delete(ctx.callId);
            this.bodyLog.push(`end ${ctx.callId}`);
          }
        },
      });
      // A handoff-style tool: the runtime must treat it as a barrier because it is a handoff.
      return c.handoff ? { ...made, source: 'handoffs', handoff: { targetName: `target-${c.id}` } } : made;
    });
    this.model = new ScriptedModel([batch(this.calls.map((c) => [toolName(c.id), {}, c.id] as const)), text('done')]);
    const agent = new Agent({
      name: 'model-test',
      model: this.model,
      tools,
      ...(this.mode === 'ask' ? { approvalHandler: () => 'ask' as const } : {}),
    });
    const run = (this.run = this.launch(agent, 'go'));
    void (async () => {
      for await (const event of run) {
        this.onEvent(event);
        if (this.mode === 'parked' && event.type === 'approval_required') {
          // Do not pull past an undecided approval: that would deny it.
          await new Promise<void>((resume) => {
            this.parked = event;
            this.resume = resume;
          });
        }
      }
      this.readerDone = true;
    })();
  }

  /** Invariants at the instant a tool body starts executing. */
  private bodyStarted(id: string): void {
    const spec = this.spec(id);
    const i = this.index.get(id)!;
    this.bodyLog.push(`start ${id}`);
    if (spec.gated && this.decided.get(id) !== true) {
      this.violate(`(1) gated call ${id} ran ${this.decided.get(id) === false ? 'after it was denied' : 'before it was approved'}`);
    }
    if (spec.barrier && this.executing.size > 0) this.violate(`(2) barrier call ${id} started while ${sorted(this.executing).join(',')} running`);
    for (const other of this.executing) {
      if (this.spec(other).barrier) this.violate(`(2) call ${id} started while barrier call ${other} running`);
    }
    if (i <= this.lastBodyStart) this.violate(`(4) call ${id} started after a later call`);
    this.lastBodyStart = Math.max(this.lastBodyStart, i);
    this.executing.add(id);
  }

  /** Invariants on the event stream, in stream order. */
  private onEvent(event: RunEvent): void {
    this.events.push(event);
    if (this.terminal) this.violate(`event ${label(event)} after ${this.terminal.type}`);
    switch (event.type) {
      case 'approval_required': {
        if (!this.spec(event.call.id).gated) this.violate(`approval_required for ungated call ${event.call.id}`);
        break;
      }
      case 'tool_call_started': {
        const id = event.call.id;
        const spec = this.spec(id);
        const i = this.index.get(id)!;
        if (this.started.has(id)) this.violate(`tool_call_started twice for ${id}`);
        if (spec.gated && this.decided.get(id) !== true) this.violate(`(1) gated call ${id} started without approval`);
        if (spec.barrier && this.inFlight.size > 0) this.violate(`(2) barrier call ${id} started while ${sorted(this.inFlight).join(',')} in flight`);
        for (const other of this.inFlight) {
          if (this.spec(other).barrier) this.violate(`(2) call ${id} started while barrier call ${other} in flight`);
        }
        if (i <= this.lastStartedEvent) this.violate(`(4) tool_call_started:${id} after a later call`);
        this.lastStartedEvent = Math.max(this.lastStartedEvent, i);
        this.started.add(id);
        this.inFlight.add(id);
        break;
      }
      case 'tool_call_completed': {
        const id = event.call.id;
        const n = (this.results.get(id) ?? 0) + 1;
        this.results.set(id, n);
        if (n > 1) this.violate(`(3) call ${id} has ${n} results`);
        this.inFlight.delete(id);
        break;
      }
      case 'run_completed':
      case 'run_failed': {
        this.terminal ??= event;
        for (const c of this.calls) {
          const n = this.results.get(c.id) ?? 0;
          if (n !== 1) this.violate(`(3) call ${c.id} has ${n} results at ${event.type}`);
        }
        break;
      }
      default:
        break;
    }
  }

  // ── steps ──────────────────────────────────────────────────────────

  /** Lets the run reach quiescence: macrotask turns until nothing observable changes. */
  private async flush(): Promise<void> {
    const progress = (): string => `${this.events.length}/${this.bodyLog.length}/${this.run?.approvals.pending().length ?? 0}/${String(this.readerDone)}`;
    let last = '';
    for (let stable = 0, round = 0; stable < 3 && round < 50; round++) {
      await tick();
      const now = progress();
      stable = now === last ? stable + 1 : 0;
      last = now;
    }
  }

  /** Makes the run do what the abstract event says. */
  async perform(prev: TurnSnapshot, event: TurnEvent, next: TurnSnapshot): Promise<void> {
    this.expected.push(...expectedEvents(prev, event, next));
    const [kind, id = ''] = event.type.split(/_(.*)/s) as [string, string | undefined];
    if (kind === 'START') {
      this.startRun();
    } else if (kind === 'SETTLE') {
      if (!this.executing.has(id)) throw new ModelMismatch(`${event.type}: the body of ${id} is not executing`);
      this.gate(id).resolve(resultOf(id));
    } else if (kind === 'APPROVE' || kind === 'DENY') {
      const approve = kind === 'APPROVE';
      this.decided.set(id, approve);
      if (this.mode === 'parked') {
        const parked = this.parked;
        if (parked?.call.id !== id) throw new ModelMismatch(`${event.type}: the consumer is not parked at approval_required:${id}`);
        // Decide before pulling further, then let the reader go on.
        if (approve) parked.approve();
        else parked.reject();
        this.parked = undefined;
        this.resume?.();
      } else {
        const decided = approve ? this.run!.approvals.approve(id) : this.run!.approvals.reject(id);
        if (!decided) throw new ModelMismatch(`${event.type}: handle.approvals has no waiting call ${id}`);
      }
    } else {
      throw new Error(`unknown abstract event ${event.type}`);
    }
    await this.flush();
  }

  /** After every step: invariants, then the real run against the abstract state. */
  check(state: TurnSnapshot): void {
    const where = `in abstract state ${serializeTurn(state)}`;
    if (this.violations.length) throw new InvariantViolation([...this.violations], serializeTurn(state));
    const want = (s: CallStatus) => state.context.calls.filter((_, i) => state.context.status[i] === s).map((c) => c.id);
    const running = sorted(want('running'));
    if (!same(sorted(this.executing), running)) {
      throw new ModelMismatch(`executing bodies [${sorted(this.executing).join(',')}], model says running [${running.join(',')}] ${where}`);
    }
    if (!this.run) return;
    const pending = sorted(this.run.approvals.pending().map((p) => p.callId));
    if (!same(pending, sorted(want('awaiting')))) {
      throw new ModelMismatch(`approvals pending [${pending.join(',')}], model says awaiting [${want('awaiting').join(',')}] ${where}`);
    }
    const awaiting = want('awaiting');
    if (this.mode === 'parked' && awaiting.length > 0 && this.parked?.call.id !== awaiting[0]) {
      throw new ModelMismatch(`the consumer should be parked at approval_required:${awaiting[0]} ${where}`);
    }
    const observed = this.events.map(label);
    const parked = this.parked !== undefined;
    // A parked consumer has read up to the approval; later events wait in the channel.
    const ok = parked
      ? same(observed, this.expected.slice(0, observed.length)) && observed[observed.length - 1] === `approval_required:${this.parked!.call.id}`
      : same(observed, this.expected);
    if (!ok) {
      throw new ModelMismatch(`events${parked ? ' (consumer parked)' : ''}:\n  observed ${observed.join(' ')}\n  expected ${this.expected.join(' ')}\n${where}`);
    }
    if (state.status === 'done' && !this.readerDone) throw new ModelMismatch(`model is done but the event stream did not end ${where}`);
  }

  /** After the last step: the run result and what the model saw in its second request. */
  async finish(): Promise<void> {
    if (!this.readerDone || !this.run || !this.model) throw new ModelMismatch('the run did not end');
    const result = await this.run.result();
    if (result.output !== 'done' || result.turns !== 2) throw new ModelMismatch(`result ${JSON.stringify({ output: result.output, turns: result.turns })}`);
    const completedOrder = this.events.flatMap((e) => (e.type === 'tool_call_completed' ? [e.call.id] : []));
    const second = this.model.requests[1];
    const seen = second?.messages.flatMap((m) => (m.role === 'tool' ? [m.callId] : [])) ?? [];
    // (3) before the next model request every requested call has exactly one result, in completion order.
    if (this.model.requests.length !== 2 || !same(seen, completedOrder) || !same(sorted(seen), sorted(this.calls.map((c) => c.id)))) {
      throw new InvariantViolation([`(3) second model request saw results [${seen.join(',')}], completion order [${completedOrder.join(',')}]`], 'done');
    }
    const bodyStarts = this.bodyLog.filter((l) => l.startsWith('start ')).map((l) => l.slice(6));
    const ran = this.calls.filter((c) => this.decided.get(c.id) !== false).map((c) => c.id);
    if (!same(bodyStarts, ran)) throw new ModelMismatch(`bodies started [${bodyStarts.join(',')}], expected [${ran.join(',')}]`);
  }

  /** Leaves nothing pending, whatever happened. */
  async dispose(): Promise<void> {
    for (const c of this.calls) this.gate(c.id).resolve(resultOf(c.id));
    this.run?.approvals.release(false);
    this.parked = undefined;
    this.resume?.();
    this.run?.cancel('model test cleanup');
    await this.flush();
  }
}

/**
 * Executes `path` with xstate/graph's TestModel.testPath: each step's event is performed on
 * the run, then the state is checked. Throws InvariantViolation or ModelMismatch (with the
 * path appended to the message by xstate/graph).
 */
export async function executePath(
  model: TestModel<TurnSnapshot, TurnEvent, unknown>,
  calls: readonly CallSpec[],
  path: TurnPath,
  launch: Launcher,
  mode: ApprovalMode,
): Promise<PathExecution> {
  const execution = new PathExecution(calls, launch, mode);
  let prev = path.steps[0]!.state;
  const perform = async (step: { state: TurnSnapshot; event: TurnEvent }): Promise<void> => execution.perform(prev, step.event, step.state);
  const events = Object.fromEntries(
    [...new Set(path.steps.slice(1).map((s) => s.event.type))].map((type) => [type, perform]),
  ) as Parameters<typeof model.testPath>[1]['events'];
  try {
    await model.testPath(path, {
      events,
      states: {
        '*': (state) => {
          execution.check(state);
          prev = state;
        },
      },
    });
    await execution.finish();
    return execution;
  } finally {
    await execution.dispose();
  }
}
