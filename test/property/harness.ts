/**
 * Builds the agents, tools and scripted models of a planned scenario, instrumented so that
 * the invariants can be checked afterwards: every tool body records when it runs (per run,
 * for the barrier check) and every approval decision this test makes is recorded by `n`.
 */
import { z } from 'zod';
import { Agent, tool, toolResult } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import type { AgentPlan, HandlerPlan, Plan, SlotPlan } from './scenario.js';
import { needsApproval } from './scenario.js';

type AnyTool = ReturnType<typeof tool>;

export type DecisionSource = 'consumer' | 'handle' | 'handler' | 'resolver' | 'release';

export interface Decision {
  readonly approved: boolean;
  readonly by: DecisionSource;
  readonly reason?: string;
}

export interface BodyRun {
  readonly n: number;
  readonly runId: string;
  readonly attempt: number;
}

/** Everything the scenario's code saw, filled in while the case runs. */
export class Recorder {
  /** Violations noticed while running (barrier overlap, approvals API answers, …). */
  readonly violations: string[] = [];
  readonly bodies: BodyRun[] = [];
  /** Decisions this test made, by slot `n`, in the order they were made. */
  readonly decisions = new Map<number, Decision[]>();
  readonly handlerCalls = new Map<number, number>();
  readonly predicateCalls = new Map<number, number>();
  readonly models = new Map<string, ScriptedModel>();
  /** Cancellation was requested (through the handle, the signal, or because a call hangs). */
  cancelRequested = false;
  /** Set by the runner once the run has started: requests a cancel soon (used by hanging bodies). */
  cancelSoon: () => void = () => {};
  /** Set by the runner: what the handler's "ask" hands over to (a later handle.approvals decision). */
  resolveLater: (slot: SlotPlan) => void = () => {};

  /** Coverage notes (how often a path of the test was taken), for the stats line. */
  readonly notes = new Map<string, number>();
  private readonly active = new Map<string, Map<number, boolean>>();

  note(what: string): void {
    this.notes.set(what, (this.notes.get(what) ?? 0) + 1);
  }
  private readonly attempts = new Map<number, number>();

  decide(n: number, decision: Decision): void {
    const list = this.decisions.get(n) ?? [];
    list.push(decision);
    this.decisions.set(n, list);
  }

  firstDecision(n: number): Decision | undefined {
    return this.decisions.get(n)?.[0];
  }

  /** Records a body starting; a barrier must be alone in its run, and nothing starts beside one. */
  enter(slot: SlotPlan, runId: string, barrier: boolean): number {
    const attempt = (this.attempts.get(slot.n) ?? 0) + 1;
    this.attempts.set(slot.n, attempt);
    this.bodies.push({ n: slot.n, runId, attempt });
    const running = this.active.get(runId) ?? new Map<number, boolean>();
    for (const [other, otherIsBarrier] of running) {
      if (barrier || otherIsBarrier) {
        this.violations.push(
          `barrier overlap in run ${runId}: ${barrier ? 'barrier' : 'call'} #${slot.n} (${slot.tool}) started while ${otherIsBarrier ? 'barrier' : 'call'} #${other} was running`,
        );
      }
    }
    running.set(slot.n, barrier);
    this.active.set(runId, running);
    if (isGatedBody(slot)) {
      const first = this.firstDecision(slot.n);
      if (!first?.approved) {
        this.violations.push(`gated call #${slot.n} (${slot.tool}) ran in run ${runId} without an approval (decisions: ${JSON.stringify(this.decisions.get(slot.n) ?? [])})`);
      }
    }
    return attempt;
  }

  exit(slot: SlotPlan, runId: string): void {
    this.active.get(runId)?.delete(slot.n);
  }

  bodyRuns(n: number): BodyRun[] {
    return this.bodies.filter((b) => b.n === n);
  }
}

/** The body of a call that needs an approval (predicate truthy or throwing) must never run unapproved. */
function isGatedBody(slot: SlotPlan): boolean {
  return needsApproval(slot) !== false;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason ?? new Error('aborted'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Never settles by itself: only an abort of `signal` (cancel or attempt timeout) ends it. */
function hang(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
  });
}

const parameters = z.object({ n: z.number().int() });

interface ToolCtx {
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly mailbox: { post(text: string): void };
  onUpdate(progress: unknown): void;
}

/** The body every instrumented tool shares: it looks its slot up by `n` and behaves as planned. */
function body(p: Plan, rec: Recorder, toolName: string, barrier: boolean) {
  return async (args: { n: number }, ctx: ToolCtx): Promise<unknown> => {
    if (typeof args.n !== 'number') rec.violations.push(`tool ${toolName} received non-number n: ${JSON.stringify(args)}`);
    const slot = p.byN.get(args.n);
    if (!slot) {
      rec.violations.push(`tool ${toolName} ran with arguments of no requested call: ${JSON.stringify(args)}`);
      return 'stray';
    }
    if (slot.tool !== toolName) rec.violations.push(`call #${slot.n} planned for ${slot.tool} ran in ${toolName}`);
    const attempt = rec.enter(slot, ctx.runId, barrier);
    try {
      return await behave(slot, attempt, ctx, rec);
    } finally {
      rec.exit(slot, ctx.runId);
    }
  };
}

async function behave(slot: SlotPlan, attempt: number, ctx: ToolCtx, rec: Recorder): Promise<unknown> {
  const ok = `ok:${slot.n}`;
  switch (slot.kind) {
    case 'slow':
    case 'barrierSlow':
      await sleep(1 + (slot.n % 3), ctx.signal);
      return ok;
    case 'mail':
      ctx.mailbox.post(`mail ${slot.n}`);
      return ok;
    case 'progress':
      ctx.onUpdate({ n: slot.n });
      return ok;
    case 'errResult':
      return toolResult({ content: `err:${slot.n}`, isError: true, details: { n: slot.n } });
    case 'throw':
    case 'throwRetry':
    case 'barrierThrow':
      throw new Error(`boom ${slot.n}`);
    case 'failOnce':
      if (attempt === 1) throw new Error(`flaky ${slot.n}`);
      return ok;
    case 'hang':
    case 'barrierHang':
      rec.cancelSoon();
      return hang(ctx.signal);
    case 'hangTimeout':
      return hang(ctx.signal);
    case 'huge':
      return slot.huge;
    case 'gated':
    case 'gatedAlways':
    case 'gatedBarrier':
      if (slot.gate?.slowBody) await sleep(1, ctx.signal);
      return ok;
    default:
      return ok;
  }
}

/** The answers of the 'weird' handler plan: none of them is an approval. */
const WEIRD_ANSWERS: readonly unknown[] = ['yes', 1, {}, 'ALLOW', null, undefined, 'Allow'];

/** The handler every agent shares (when the scenario has one): it answers per call, by `n`. */
function approvalHandler(p: Plan, rec: Recorder) {
  return (request: { args: unknown }): unknown => {
    const n = (request.args as { n?: unknown } | undefined)?.n;
    const slot = typeof n === 'number' ? p.byN.get(n) : undefined;
    if (!slot?.gate) {
      rec.violations.push(`approvalHandler asked about a call that is not gated: ${JSON.stringify(request.args)}`);
      return false;
    }
    rec.handlerCalls.set(slot.n, (rec.handlerCalls.get(slot.n) ?? 0) + 1);
    if (rec.decisions.has(slot.n)) {
      rec.violations.push(`approvalHandler consulted for call #${slot.n} after it was decided: ${JSON.stringify(rec.decisions.get(slot.n))}`);
    }
    const answer = handlerAnswer(slot, slot.gate.handler, rec);
    return slot.gate.asyncHandler ? Promise.resolve().then(answer) : answer();
  };
}

function handlerAnswer(slot: SlotPlan, plan: HandlerPlan, rec: Recorder): () => unknown {
  const record = (approved: boolean) => rec.decide(slot.n, { approved, by: 'handler' });
  switch (plan) {
    case 'allow': return () => (record(true), 'allow');
    case 'true': return () => (record(true), true);
    case 'deny': return () => (record(false), 'deny');
    case 'false': return () => (record(false), false);
    case 'weird': return () => (record(false), WEIRD_ANSWERS[slot.n % WEIRD_ANSWERS.length]);
    case 'throw':
      return () => {
        record(false);
        throw new Error(`handler down ${slot.n}`);
      };
    case 'ask':
      return () => {
        rec.resolveLater(slot);
        return 'ask';
      };
  }
}

const PREDICATE_ANSWERS: Record<string, unknown> = { obj: {} };

function predicate(p: Plan, rec: Recorder) {
  return (args: { n: number }): boolean => {
    const slot = p.byN.get(args.n);
    rec.predicateCalls.set(args.n, (rec.predicateCalls.get(args.n) ?? 0) + 1);
    const needs = slot?.gate?.needs ?? true;
    if (needs === 'throw') throw new Error(`predicate down ${args.n}`);
    // Truthy non-booleans ('yes', 1, {}) mean "needs approval"; the public type says boolean.
    return (typeof needs === 'string' && needs in PREDICATE_ANSWERS ? PREDICATE_ANSWERS[needs] : needs) as boolean;
  };
}

function standardTools(p: Plan, rec: Recorder): AnyTool[] {
  const s = p.scenario;
  const make = (name: string, options: { parallel?: boolean; retries?: number; timeoutMs?: number; maxOutputChars?: number; needsApproval?: unknown }) =>
    tool({
      name,
      description: `instrumented ${name}`,
      parameters,
      execute: body(p, rec, name, options.parallel === false) as never,
      ...(options as object),
    });
  return [
    make('work', {}),
    make('work_retry', { retries: 1 }),
    make('work_timeout', { timeoutMs: s.toolTimeoutMs }),
    make('work_huge', { maxOutputChars: s.maxOutputChars }),
    make('barrier', { parallel: false }),
    make('gated', { needsApproval: predicate(p, rec) }),
    make('gated_always', { needsApproval: true }),
    make('gated_barrier', { needsApproval: true, parallel: false }),
  ];
}

/** The root agent of the plan, with every handoff target and sub-agent built bottom-up. */
export function buildAgents(p: Plan, rec: Recorder): Agent {
  const handler = p.scenario.handler ? approvalHandler(p, rec) : undefined;
  const build = (a: AgentPlan): Agent => {
    const steps = [...a.replies.map((reply) => batch(reply.map((c) => [c.tool, c.args, c.id] as const))), text(a.finalText)];
    const model = new ScriptedModel(steps);
    rec.models.set(a.name, model);
    const subTools = a.subs.map((s) => build(s.agent).asTool({ name: s.tool, ...(s.maxTurns !== undefined ? { maxTurns: s.maxTurns } : {}) }));
    return new Agent({
      name: a.name,
      model,
      tools: [...standardTools(p, rec), ...subTools],
      handoffs: a.handoff ? [build(a.handoff)] : [],
      ...(handler ? { approvalHandler: handler as never } : {}),
    });
  };
  return build(p.root);
}
