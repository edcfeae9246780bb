import type { Attributes, Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import type { RunEvent, ToolCallRequest, Usage } from '../types.js';
import { ATTR, errorType, modelAttributes } from './gen-ai-attributes.js';
import { otelApi, type OtelApi } from './otel-api.js';

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
type ToolEvent = EventOf<'tool_call_started' | 'tool_call_failed' | 'tool_call_completed' | 'approval_required'>;

/** One requested call of a run's current turn, in reply order. */
interface CallRecord {
  readonly call: ToolCallRequest;
  readonly turn: number;
  /** Position in the model's reply; undefined when the reply was not seen (a turn resumed from a checkpoint). */
  readonly index: number | undefined;
  state: 'pending' | 'started' | 'done';
  span: Span | undefined;
  /** Context with the call's span: the parent of sub-runs the call starts. */
  ctx: Context | undefined;
  /** Failed attempts reported before the call had a span (a throwing approval predicate or handler). */
  readonly early: Error[];
  lastError: Error | undefined;
}

/** The tracing state of one run of the tree. */
interface RunRecord {
  readonly runId: string;
  readonly span: Span;
  readonly ctx: Context;
  agent: string;
  turn: number;
  calls: CallRecord[];
  chat: Span | undefined;
  /** The turn the last chat span was opened for. */
  chatTurn: number;
  approval: { readonly span: Span; readonly call: ToolCallRequest } | undefined;
  barrier: Span | undefined;
}

/** What the model actor returned for one reply (the model caller's `model.replied` output). */
export interface ModelReplyView {
  readonly usage?: Partial<Usage>;
  readonly finishReason?: string;
}

/** How an approval wait ended (the `approval` actor's output). */
export interface ApprovalOutcomeView {
  readonly approved: boolean;
  readonly by?: string;
  readonly reason?: string;
}

/**
 * Turns one run tree's events (and the few actor facts inspection adds) into OpenTelemetry
 * spans. Parent links follow the actor tree: a run's `invoke_agent` span is the parent of
 * its `chat`, `execute_tool`, approval, barrier and handoff spans; a sub-run's `invoke_agent`
 * span is a child of the `execute_tool` span of the call that started it (sub-run id
 * `<parent run id>/<turn>.<index>` names that call); the root run's parent is the context
 * active when the tracer was created. Every method is total: unknown runs and calls are
 * ignored or recorded as well as the facts allow, and nothing here throws on bad input.
 */
export class RunTracer {
  private readonly api: OtelApi = otelApi();
  private readonly runs = new Map<string, RunRecord>();
  /** Model name of each run's starting agent, known from its actor's input before run_started. */
  private readonly startModels = new Map<string, string>();
  private readonly rootContext: Context;

  constructor(private readonly tracer: Tracer) {
    this.rootContext = this.api.context.active();
  }

  /** Records one event of the run tree. */
  observe(event: RunEvent): void {
    switch (event.type) {
      case 'run_started':
        return this.startRun(event);
      case 'turn_started':
        return this.startTurn(event);
      case 'message_completed':
        return this.recordReply(event);
      case 'tool_call_started':
        return this.startTool(event);
      case 'tool_call_failed':
        return this.failAttempt(event);
      case 'tool_call_completed':
        return this.completeTool(event);
      case 'approval_required':
        return this.openApproval(event);
      case 'handoff_occurred':
        return this.recordHandoff(event);
      case 'run_completed':
      case 'run_failed':
        return this.endRun(event);
      default:
        return;
    }
  }

  /** A run actor was created: remember its agent's model for the `invoke_agent` span. */
  runActorCreated(runId: string, modelName: string | undefined): void {
    if (modelName) this.startModels.set(runId, modelName);
  }

  /** The run sent its model caller a request: the `chat` span opens. */
  modelStarted(runId: string, modelName: string | undefined): void {
    const run = this.runs.get(runId);
    if (run) this.openChat(run, modelName);
  }

  /** The model replied: usage and finish reason go on the `chat` span, which ends. */
  modelReplied(runId: string, reply: ModelReplyView | undefined): void {
    const span = this.takeChat(runId);
    if (!span) return;
    const usage = reply?.usage;
    if (typeof usage?.inputTokens === 'number') span.setAttribute(ATTR.inputTokens, usage.inputTokens);
    if (typeof usage?.outputTokens === 'number') span.setAttribute(ATTR.outputTokens, usage.outputTokens);
    if (typeof reply?.finishReason === 'string') span.setAttribute(ATTR.finishReasons, [reply.finishReason]);
    span.end(now());
  }

  /** The model request failed: the `chat` span ends with the error. */
  modelFailed(runId: string, error: unknown): void {
    const span = this.takeChat(runId);
    if (span) this.endWithError(span, error);
  }

  /** The approval wait ended with `outcome`: decision and who decided go on the approval span. */
  approvalDecided(runId: string, outcome: ApprovalOutcomeView | undefined): void {
    const run = this.runs.get(runId);
    if (run && outcome) this.endApproval(run, outcome);
  }

  /** Called on every step of a run actor: whether it now waits at the barrier (for in-flight calls). */
  barrierState(runId: string, waiting: boolean): void {
    const run = this.runs.get(runId);
    if (!run) return;
    if (waiting && !run.barrier) this.openBarrier(run);
    else if (!waiting) this.closeBarrier(run);
  }

  private startRun(event: EventOf<'run_started'>): void {
    if (this.runs.has(event.runId)) return;
    const parent = this.parentOf(event.runId);
    const parentCtx = parent?.ctx ?? this.rootContext;
    const attributes: Attributes = {
      [ATTR.operation]: 'invoke_agent',
      [ATTR.agentName]: event.agent,
      [ATTR.runId]: event.runId,
      [ATTR.runPath]: [...event.path],
      ...modelAttributes(this.startModels.get(event.runId)),
    };
    if (parent) attributes[ATTR.parentRunId] = parent.runId;
    this.startModels.delete(event.runId);
    const span = this.open(`invoke_agent ${event.agent}`, this.api.SpanKind.INTERNAL, attributes, parentCtx);
    this.runs.set(event.runId, {
      runId: event.runId,
      span,
      ctx: this.api.trace.setSpan(parentCtx, span),
      agent: event.agent,
      turn: 0,
      calls: [],
      chat: undefined,
      chatTurn: 0,
      approval: undefined,
      barrier: undefined,
    });
  }

  /** A sub-run's parent: the span of the call `<parent>/<turn>.<index>` names, else the parent run's span. */
  private parentOf(runId: string): { runId: string; ctx: Context } | undefined {
    const cut = runId.lastIndexOf('/');
    if (cut <= 0) return undefined;
    const parentId = runId.slice(0, cut);
    const parent = this.runs.get(parentId);
    if (!parent) return undefined;
    const key = runId.slice(cut + 1);
    const call = parent.calls.find((c) => c.index !== undefined && `${c.turn}.${c.index}` === key);
    return { runId: parentId, ctx: call?.ctx ?? parent.ctx };
  }

  private startTurn(event: EventOf<'turn_started'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    run.turn = event.turn;
    run.agent = event.agent;
    run.calls = [];
  }

  private openChat(run: RunRecord, modelName: string | undefined): void {
    run.chat?.end(now());
    const attributes: Attributes = { [ATTR.operation]: 'chat', [ATTR.agentName]: run.agent, [ATTR.runId]: run.runId, [ATTR.turn]: run.turn, ...modelAttributes(modelName) };
    const model = attributes[ATTR.requestModel];
    run.chat = this.open(model ? `chat ${String(model)}` : 'chat', this.api.SpanKind.CLIENT, attributes, run.ctx);
    run.chatTurn = run.turn;
  }

  private takeChat(runId: string): Span | undefined {
    const run = this.runs.get(runId);
    const span = run?.chat;
    if (run) run.chat = undefined;
    return span;
  }

  private recordReply(event: EventOf<'message_completed'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    // Normally the chat span was opened and closed from the model actor; without those facts, record the reply alone.
    if (run.chatTurn !== event.turn) {
      this.openChat(run, undefined);
      this.takeChat(event.runId)?.end(now());
    }
    run.calls = event.message.toolCalls.map((call, index) => newCall(call, event.turn, index));
  }

  private startTool(event: EventOf<'tool_call_started'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    // Only the barrier's own call is dispatched while the run waits at the barrier: the wait is over.
    this.closeBarrier(run);
    this.closeApproval(run, event.call, true);
    const record = this.callFor(run, event, ['pending']);
    record.state = 'started';
    this.openToolSpan(run, record, event, {});
  }

  private failAttempt(event: EventOf<'tool_call_failed'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    const record = this.callFor(run, event, ['started', 'pending']);
    record.lastError = event.error;
    if (!record.span) record.early.push(event.error);
    else if (event.willRetry) {
      record.span.addEvent('retry', { [ATTR.attempt]: event.attempt, [ATTR.errorType]: errorType(event.error), [ATTR.errorMessage]: event.error.message }, now());
    } else record.span.recordException(event.error, now());
  }

  private completeTool(event: EventOf<'tool_call_completed'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    const record = this.callFor(run, event, ['started', 'pending']);
    // A call rejected before it ran (denied, unknown tool, bad arguments, budget) still gets its span: the model sees its result.
    if (!record.span) {
      this.closeApproval(run, event.call, false);
      this.openToolSpan(run, record, event, { [ATTR.toolExecuted]: false });
    }
    const span = record.span!;
    for (const error of record.early.splice(0)) span.recordException(error, now());
    if (event.terminate) span.setAttribute(ATTR.toolTerminate, true);
    if (event.isError) {
      span.setAttribute(ATTR.errorType, record.lastError ? errorType(record.lastError) : 'tool_error');
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: event.output });
    }
    record.state = 'done';
    span.end(now());
  }

  private openToolSpan(run: RunRecord, record: CallRecord, event: ToolEvent, extra: Attributes): void {
    const attributes: Attributes = {
      [ATTR.operation]: 'execute_tool',
      [ATTR.toolName]: event.call.name,
      [ATTR.toolCallId]: event.call.id,
      [ATTR.toolType]: 'function',
      [ATTR.agentName]: event.agent,
      [ATTR.runId]: event.runId,
      [ATTR.turn]: event.turn,
      ...extra,
    };
    record.span = this.open(`execute_tool ${event.call.name}`, this.api.SpanKind.INTERNAL, attributes, run.ctx);
    record.ctx = this.api.trace.setSpan(run.ctx, record.span);
  }

  /** The record of `event.call`: by identity (events carry the reply's call objects), in the first matching state. */
  private callFor(run: RunRecord, event: ToolEvent, states: readonly CallRecord['state'][]): CallRecord {
    for (const state of states) {
      const found = run.calls.find((c) => c.call === event.call && c.state === state);
      if (found) return found;
    }
    const record = newCall(event.call, event.turn, undefined);
    run.calls.push(record);
    return record;
  }

  private openApproval(event: EventOf<'approval_required'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    run.approval?.span.end(now());
    const attributes: Attributes = {
      [ATTR.approvalId]: event.approvalId,
      [ATTR.runId]: event.runId,
      [ATTR.toolName]: event.call.name,
      [ATTR.toolCallId]: event.call.id,
      [ATTR.agentName]: event.agent,
      [ATTR.turn]: event.turn,
    };
    const span = this.open(`approval ${event.call.name}`, this.api.SpanKind.INTERNAL, attributes, run.ctx);
    run.approval = { span, call: event.call };
  }

  private endApproval(run: RunRecord, outcome: ApprovalOutcomeView): void {
    if (!run.approval) return;
    const { span } = run.approval;
    run.approval = undefined;
    span.setAttribute(ATTR.approvalDecision, outcome.approved ? 'approved' : 'denied');
    if (outcome.by) span.setAttribute(ATTR.approvalDecidedBy, outcome.by);
    if (outcome.reason) span.setAttribute(ATTR.approvalReason, outcome.reason);
    span.end(now());
  }

  /** Ends a wait the actor facts did not close, with the decision the events show (who decided is then unknown). */
  private closeApproval(run: RunRecord, call: ToolCallRequest, approved: boolean): void {
    if (run.approval?.call === call) this.endApproval(run, { approved });
  }

  private openBarrier(run: RunRecord): void {
    const next = run.calls.find((c) => c.state === 'pending');
    const attributes: Attributes = {
      [ATTR.runId]: run.runId,
      [ATTR.turn]: run.turn,
      [ATTR.barrierInFlight]: run.calls.filter((c) => c.state === 'started').length,
    };
    if (next) {
      attributes[ATTR.toolName] = next.call.name;
      attributes[ATTR.toolCallId] = next.call.id;
    }
    run.barrier = this.open(next ? `barrier ${next.call.name}` : 'barrier', this.api.SpanKind.INTERNAL, attributes, run.ctx);
  }

  private closeBarrier(run: RunRecord): void {
    run.barrier?.end(now());
    run.barrier = undefined;
  }

  private recordHandoff(event: EventOf<'handoff_occurred'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    run.agent = event.to;
    const attributes: Attributes = { [ATTR.handoffFrom]: event.from, [ATTR.handoffTo]: event.to, [ATTR.runId]: event.runId, [ATTR.turn]: event.turn };
    this.open(`handoff ${event.from} → ${event.to}`, this.api.SpanKind.INTERNAL, attributes, run.ctx).end(now());
  }

  private endRun(event: EventOf<'run_completed' | 'run_failed'>): void {
    const run = this.runs.get(event.runId);
    if (!run) return;
    this.runs.delete(event.runId);
    const error = event.type === 'run_failed' ? event.error : undefined;
    // Whatever is still open ended with the run (a cancel mid-request, a wait cut short).
    const open = [run.chat, run.approval?.span, run.barrier, ...run.calls.filter((c) => c.state === 'started').map((c) => c.span)];
    for (const span of open) {
      if (!span) continue;
      if (error) this.endWithError(span, error);
      else span.end(now());
    }
    run.span.setAttributes({
      [ATTR.turns]: event.turns,
      [ATTR.finalAgent]: event.agent,
      [ATTR.runInputTokens]: event.usage.inputTokens,
      [ATTR.runOutputTokens]: event.usage.outputTokens,
      [ATTR.runTotalTokens]: event.usage.totalTokens,
      [ATTR.runRequests]: event.usage.requests,
    });
    if (error) this.endWithError(run.span, error);
    else run.span.end(now());
  }

  /** Every span of the tree is timed on one monotonic clock, so their order is exact even within a millisecond. */
  private open(name: string, kind: SpanKind, attributes: Attributes, parent: Context): Span {
    return this.tracer.startSpan(name, { kind, attributes, startTime: now() }, parent);
  }

  private endWithError(span: Span, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    span.setAttribute(ATTR.errorType, errorType(error));
    if (error instanceof Error) span.recordException(error, now());
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
    span.end(now());
  }
}

/** Epoch milliseconds from the monotonic clock (sub-millisecond precision). */
function now(): number {
  return performance.timeOrigin + performance.now();
}

function newCall(call: ToolCallRequest, turn: number, index: number | undefined): CallRecord {
  return { call, turn, index, state: 'pending', span: undefined, ctx: undefined, early: [], lastError: undefined };
}
