import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { Agent } from '../agent.js';
import type { ApprovalInput } from '../actors/approval.js';
import type { CallJob, CallOutcome } from '../actors/call-pipeline.js';
import type { CheckpointInput } from '../actors/checkpoint.js';
import type { ModelReply, ModelTurnInput } from '../actors/model-turn.js';
import type { ExecutorHost } from '../actors/tool-executor.js';
import { BudgetExceeded, MaxTurnsExceeded, RunCancelled, UserError, asError } from '../errors.js';
import type { CheckpointEntry, CheckpointHead, CheckpointStore, RunStatus } from '../store/checkpoint-store.js';
import { RunLog } from './run-log.js';
import type { Session } from '../store/session.js';
import { findAgent } from './agent-graph.js';
import { restoreRun, type RestoredRun } from './resume.js';
import { CallContext, type CallContextHost } from '../tools/call-context.js';
import type { Mailbox } from '../tools/context.js';
import { toToolSchema, type Tool, type ToolSchema } from '../tools/tool.js';
import { addUsage, emptyUsage, type AssistantMessage, type Budget, type Message, type RunEvent, type ToolCallRequest, type Usage } from '../types.js';
import type { ApprovalDesk } from './approvals.js';
import { durationOverBudget, tokensOverBudget, toolCallsOverBudget, usageOverBudget } from './budget.js';
import { checkCall } from './preflight.js';
import { validateRunOptions } from './run-options.js';
import { launchRun, type LaunchedRun } from './launch.js';
import { getRunMachine } from './run-machine.js';

export interface RunOptions<Deps = any> {
  /** Default 10. */
  maxTurns?: number;
  budget?: Budget;
  signal?: AbortSignal;
  /** User dependencies, reachable in tools as `ctx.deps`. */
  context?: Deps;
  runId?: string;
  /** Auto-deny an approval nobody decided within this time. */
  approvalTimeoutMs?: number;
  /**
   * Durable runs: append the run log to `store` under `runId`. When the store already holds
   * that run: "resume" (default) continues it, "restart" deletes it first, "fail" is a UserError.
   */
  checkpoint?: { store: CheckpointStore; runId?: string; ifRunExists?: 'resume' | 'restart' | 'fail' };
  /**
   * Conversation memory: the run starts from the session's history, and when it completes
   * its messages are appended to the session (once per run id).
   */
  session?: { store: Session; id: string };
  /**
   * XState inspection observer for this run's actor system (the run, its executor, tool-call
   * and sub-run actors). Opt-in: without it, inspection costs nothing.
   */
  inspect?: InspectionObserver;
}

/** Receives XState's raw inspection events (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`, …). */
export type InspectionObserver = (event: InspectionEvent) => void;

export const DEFAULT_MAX_TURNS = 10;

/** What a sub-run spent, reported to its parent run as a message. */
export interface Spend {
  readonly usage: Partial<Usage>;
  readonly toolCalls: number;
}

/** Rewrites the transcript the next agent sees after a handoff. */
export type HandoffInputFilter = (transcript: readonly Message[]) => Message[];

type SlotState = 'pending' | 'dispatched' | 'settled';

/** One requested call of the current turn, from preflight to its single result. */
interface CallSlot {
  readonly call: ToolCallRequest;
  state: SlotState;
  tool: Tool | undefined;
  raw: Record<string, unknown> | undefined;
  args: unknown;
  terminate: boolean;
  output: string;
}

/** Where preflight stopped: every call checked, or a call that needs a statechart state of its own. */
export type PreflightHalt = 'done' | 'approval' | 'alone' | 'stop' | 'cancel';

export interface RunCoreHooks {
  emit(event: RunEvent, terminal?: boolean): void;
}

/**
 * The mutable state of one run and the rules the statechart's guards and actions apply.
 * Kept outside XState context on purpose: the transcript grows by push, never by copy,
 * so a turn costs the same at turn 200 as at turn 2.
 */
export class RunCore<Deps = any> implements ExecutorHost, CallContextHost<Deps> {
  readonly transcript: Message[] = [];
  readonly usage: Usage = emptyUsage();
  readonly budget: Budget | undefined;
  readonly deps: Deps;
  readonly maxTurns: number;
  readonly startedAt = Date.now();
  readonly abortController = new AbortController();
  readonly mailbox: Mailbox;

  agent: Agent<Deps>;
  turn = 0;
  toolCallCount = 0;
  configError: Error | undefined;
  /** Error that stops the run at its next safe point (budget). */
  stopError: Error | undefined;
  cancelError: RunCancelled | undefined;
  failure: Error | undefined;
  output = '';
  halt: PreflightHalt = 'done';

  private tools = new Map<string, Tool<Deps>>();
  private toolSchemas: ToolSchema[] = [];
  private system = '';
  private slots: CallSlot[] = [];
  private readonly slotById = new Map<string, CallSlot>();
  private cursor = 0;
  private sequentialBatch = false;
  private claimedHandoff: string | undefined;
  private pendingHandoff: { target: Agent<Deps>; inputFilter: HandoffInputFilter | undefined } | undefined;
  private finalReply = false;
  private inbox: string[] = [];
  /** Appends this run's log to the checkpoint store, when one is configured. */
  private readonly runLog: RunLog | undefined;
  private executor: AnyActorRef | undefined;
  private runRef: AnyActorRef | undefined;
  private terminalSent = false;
  private running = 0;
  private outbox: CallJob[] = [];

  /** Agent names from the root run down to this run's current agent. */
  path: readonly string[];

  constructor(
    readonly runId: string,
    private readonly parentPath: readonly string[],
    agent: Agent<Deps>,
    readonly input: string,
    readonly options: RunOptions<Deps>,
    private readonly desk: ApprovalDesk,
    private readonly hooks: RunCoreHooks,
    /** The run that spawned this one as a tool; spend is reported to it and its budget bounds ours. */
    readonly parent?: RunCore,
  ) {
    this.agent = agent;
    this.path = [...parentPath, agent.name];
    this.deps = options.context as Deps;
    this.budget = options.budget;
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.mailbox = { post: (text: string) => void this.inbox.push(text) };
    const checkpoint = options.checkpoint;
    this.runLog = checkpoint
      ? new RunLog(checkpoint.store, checkpoint.runId ?? runId, (entries) =>
          this.hooks.emit({ type: 'checkpoint_saved', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, entries }),
        )
      : undefined;
    try {
      validateRunOptions(input, options);
      this.useAgent(agent);
    } catch (error) {
      this.configError = asError(error);
    }
  }

  get agentName(): string {
    return this.agent.name;
  }

  /** The `{ name }` view tools see as `ctx.agent`; rebuilt only when the agent changes. */
  agentView: { readonly name: string } = { name: '' };

  get runSignal(): AbortSignal {
    return this.abortController.signal;
  }

  get hasCheckpointStore(): boolean {
    return this.options.checkpoint !== undefined;
  }

  attachRun(ref: AnyActorRef): void {
    this.runRef = ref;
  }

  attachExecutor(ref: AnyActorRef): void {
    this.executor = ref;
  }

  private useAgent(agent: Agent<Deps>): void {
    this.tools = agent.toolTable();
    this.toolSchemas = [...this.tools.values()].map(toToolSchema);
    this.system = agent.systemPrompt(this.deps);
    this.agent = agent;
    this.agentView = { name: agent.name };
    this.path = [...this.parentPath, agent.name];
  }

  // ── run start and turns ──────────────────────────────────────────────

  startRun(): void {
    this.hooks.emit({ type: 'run_started', runId: this.runId, path: this.path, agent: this.agent.name, input: this.input });
    if (this.resumed) {
      if (this.resumeInTurn) this.hooks.emit({ type: 'turn_started', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn });
      return;
    }
    const message: Message = { role: 'user', content: this.input };
    this.transcript.push(message);
    this.log({ kind: 'input', message });
  }

  // ── resume ───────────────────────────────────────────────────────────

  /** How the run was found in its checkpoint store. */
  resumed = false;
  /** The stored run had completed: it replays as run_started, run_completed. */
  replayCompleted = false;
  /** The stored run stopped inside a turn: continue from its stored reply. */
  resumeInTurn = false;
  /** Messages that came from the session's history (not this run's own). */
  private historyLength = 0;

  get needsLoading(): boolean {
    return this.options.checkpoint !== undefined || this.options.session !== undefined;
  }

  get hasSession(): boolean {
    return this.options.session !== undefined;
  }

  /** On completion: this run's messages join the session (idempotent per run id). */
  sessionInput(): { save(): Promise<void> } {
    return {
      save: async () => {
        const session = this.options.session!;
        await session.store.append(session.id, this.runId, this.transcript.slice(this.historyLength));
      },
    };
  }

  restoreInput(): { load(): Promise<void> } {
    return { load: () => this.loadFromStore() };
  }

  /** Before the first step: the session's history, then the stored run (resume). */
  private async loadFromStore(): Promise<void> {
    const session = this.options.session;
    if (session) {
      const history = await session.store.history(session.id);
      this.transcript.push(...history);
      this.historyLength = history.length;
    }
    const checkpoint = this.options.checkpoint;
    if (!checkpoint) return;
    const id = checkpoint.runId ?? this.runId;
    const saved = await checkpoint.store.load(id);
    if (!saved) return;
    const mode = checkpoint.ifRunExists ?? 'resume';
    if (mode === 'fail') throw new UserError(`Run '${id}' already exists in the checkpoint store (ifRunExists: "fail").`);
    if (mode === 'restart') {
      if (!checkpoint.store.delete) throw new UserError('ifRunExists: "restart" needs a checkpoint store that can delete runs.');
      await checkpoint.store.delete(id);
      return;
    }
    this.applyRestore(restoreRun(saved.entries, saved.head));
  }

  private applyRestore(restored: RestoredRun): void {
    const { head } = restored;
    const agent = findAgent(this.agent, head.agent);
    if (!agent) throw new UserError(`Cannot resume run '${this.runId}': agent '${head.agent}' is not reachable from '${this.agent.name}' through handoffs.`);
    this.useAgent(agent);
    this.resumed = true;
    this.transcript.push(...restored.transcript);
    Object.assign(this.usage, head.usage);
    this.turn = restored.turn;
    this.toolCallCount = restored.toolCalls;
    if (head.status === 'completed') {
      this.replayCompleted = true;
      this.output = head.output ?? '';
      this.turn = head.turn;
      return;
    }
    const open = restored.openTurn;
    if (!open) return;
    this.resumeInTurn = true;
    this.prepareBatch(open.reply);
    for (const slot of this.slots) if (open.results.has(slot.call.id)) slot.state = 'settled';
  }

  // ── turns ────────────────────────────────────────────────────────────


  /** Limits checked before a turn starts; undefined when the turn may start. */
  turnStartViolation(): Error | undefined {
    if (this.turn + 1 > this.maxTurns) return new MaxTurnsExceeded(this.maxTurns);
    return usageOverBudget(this.budget, this.usage, Date.now() - this.startedAt) ?? this.ancestorOverBudget();
  }

  startTurn(): void {
    this.turn++;
    this.slots = [];
    this.slotById.clear();
    this.cursor = 0;
    this.halt = 'done';
    this.claimedHandoff = undefined;
    this.finalReply = false;
    for (const text of this.inbox.splice(0)) {
      const message: Message = { role: 'user', content: text };
      this.transcript.push(message);
      this.log({ kind: 'input', message });
    }
    this.hooks.emit({ type: 'turn_started', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn });
  }

  modelInput(): ModelTurnInput {
    return {
      model: this.agent.model,
      request: () => ({ agent: this.agent.name, system: this.system, messages: this.transcript, tools: this.toolSchemas, settings: this.agent.settings }),
      onTextDelta: (delta) => this.hooks.emit({ type: 'text_delta', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, delta }),
      onReasoningDelta: (delta) => this.hooks.emit({ type: 'reasoning_delta', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, delta }),
    };
  }

  recordReply(reply: ModelReply): void {
    const spent = { ...reply.usage, requests: 1 };
    addUsage(this.usage, spent);
    if (this.parent) this.reportSpend({ usage: spent, toolCalls: 0 });
    const message: AssistantMessage = {
      role: 'assistant',
      content: reply.text,
      ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
      toolCalls: reply.calls,
      agent: this.agent.name,
    };
    this.transcript.push(message);
    this.hooks.emit({ type: 'message_completed', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, message, usage: { ...this.usage } });
    this.log({ kind: 'reply', turn: this.turn, message });
    this.prepareBatch(message);
  }

  /** One slot per requested call; a reply without calls is the final answer. */
  private prepareBatch(reply: AssistantMessage): void {
    this.slots = reply.toolCalls.map((call) => ({ call, state: 'pending', tool: undefined, raw: undefined, args: undefined, terminate: false, output: '' }));
    this.slotById.clear();
    for (const slot of this.slots) this.slotById.set(slot.call.id, slot);
    this.cursor = 0;
    this.sequentialBatch = this.agent.toolExecution === 'sequential' || reply.toolCalls.some((c) => this.tools.get(c.name)?.executionMode === 'sequential');
    if (reply.toolCalls.length === 0) {
      this.finalReply = true;
      this.output = reply.content;
    }
  }

  /** Budgets after a reply; a violation stops the run once nothing is in flight. */
  checkReplyBudget(): boolean {
    this.stopError ??= usageOverBudget(this.budget, this.usage, Date.now() - this.startedAt) ?? this.ancestorOverBudget();
    return this.stopError !== undefined;
  }

  get hasToolCalls(): boolean {
    return this.slots.length > 0;
  }

  // ── preflight ────────────────────────────────────────────────────────

  /**
   * Serial preflight in request order. Parallel calls are dispatched as they pass; the
   * loop halts at a call that needs an approval wait or must run alone, and at a stop.
   */
  preflight(): void {
    this.preflightPass();
    this.flushDispatches();
  }

  private preflightPass(): void {
    while (this.cursor < this.slots.length) {
      if (this.cancelError) return void (this.halt = 'cancel');
      if (this.stopError) return void (this.halt = 'stop');
      const slot = this.slots[this.cursor]!;
      if (slot.state === 'settled') {
        // Resumed turn: this call's result was stored before the crash.
        this.cursor++;
        continue;
      }
      ++this.toolCallCount;
      if (this.parent) this.reportSpend({ usage: {}, toolCalls: 1 });
      const overBudget =
        toolCallsOverBudget(this.budget, this.toolCallCount) ??
        (this.budget?.maxDurationMs !== undefined ? durationOverBudget(this.budget, Date.now() - this.startedAt) : undefined) ??
        (this.parent ? this.ancestorOverBudget() : undefined);
      if (overBudget) {
        this.stopError = overBudget;
        this.cursor++;
        this.reject(slot, `Tool error: ${overBudget.message}`);
        return void (this.halt = 'stop');
      }
      const verdict = checkCall(slot.call, this.tools, this.claimedHandoff);
      if (!verdict.ok) {
        this.cursor++;
        this.reject(slot, verdict.output);
        continue;
      }
      slot.tool = verdict.tool;
      slot.raw = verdict.raw;
      slot.args = verdict.args;
      if (verdict.tool.needsApproval !== false) return void (this.halt = 'approval');
      if (this.accept(slot)) return;
    }
    this.halt = 'done';
  }

  /** A call cleared every check: dispatch it now, or halt for the barrier. Returns true on halt. */
  private accept(slot: CallSlot): boolean {
    if (slot.tool!.handoff) this.claimedHandoff = slot.tool!.handoff.targetName;
    if (this.mustRunAlone(slot.tool!)) {
      this.halt = 'alone';
      return true;
    }
    this.cursor++;
    this.dispatch(slot);
    return false;
  }

  private mustRunAlone(tool: Tool): boolean {
    return !tool.parallel || tool.handoff !== undefined || this.sequentialBatch;
  }

  approvalInput(): ApprovalInput {
    const slot = this.slots[this.cursor]!;
    return { decide: (signal) => this.decideApproval(slot, signal) };
  }

  private async decideApproval(slot: CallSlot, signal: AbortSignal): Promise<boolean> {
    const tool = slot.tool!;
    const ctx = this.contextFor(slot);
    let needed: boolean;
    try {
      needed = typeof tool.needsApproval === 'function' ? (await tool.needsApproval(slot.args, ctx)) === true : tool.needsApproval;
    } catch {
      return false; // a throwing predicate fails closed
    }
    if (!needed) return true;
    const decision = this.desk.open({ call: slot.call, args: slot.args, agent: this.agent.name, path: this.path }, ctx, this.agent.approvalHandler, this.options.approvalTimeoutMs, signal);
    const id = slot.call.id;
    this.hooks.emit({
      type: 'approval_required',
      runId: this.runId, path: this.path, agent: this.agent.name,
      turn: this.turn,
      call: slot.call,
      args: slot.args,
      approve: () => void this.desk.decide(id, true),
      reject: () => void this.desk.decide(id, false),
    });
    return decision;
  }

  applyApproval(approved: boolean): void {
    const slot = this.slots[this.cursor]!;
    this.halt = 'done';
    if (approved) {
      this.accept(slot);
      this.flushDispatches();
    } else {
      this.cursor++;
      this.reject(slot, `Tool error: approval denied for tool '${slot.call.name}'.`);
    }
  }


  /** The barrier call, once nothing else is in flight. */
  dispatchAlone(): void {
    const slot = this.slots[this.cursor++]!;
    this.halt = 'done';
    this.dispatch(slot);
    this.flushDispatches();
  }

  /** Calls dispatched and not yet settled. */
  get inFlight(): number {
    return this.running;
  }

  private dispatch(slot: CallSlot): void {
    slot.state = 'dispatched';
    this.running++;
    const tool = slot.tool!;
    const agent = this.agent;
    const call = slot.call;
    const turn = this.turn;
    const job: CallJob = {
      tool,
      raw: slot.raw!,
      validated: slot.args,
      ctx: this.contextFor(slot),
      retries: tool.retries ?? agent.defaultToolRetries,
      timeoutMs: tool.timeoutMs ?? agent.defaultToolTimeoutMs,
      maxOutputChars: tool.maxOutputChars === undefined ? agent.maxToolOutputChars : tool.maxOutputChars,
      agentRenderer: agent.toolResultRenderer,
      onAttemptFailed: (error, attempt, willRetry) =>
        this.hooks.emit({ type: 'tool_call_failed', runId: this.runId, path: this.path, agent: this.agent.name, turn, call, error, attempt, willRetry }),
    };
    this.hooks.emit({ type: 'tool_call_started', runId: this.runId, path: this.path, agent: this.agent.name, turn, call });
    this.outbox.push(job);
  }

  /** Hands the calls cleared since the last flush to the executor in one message. */
  private flushDispatches(): void {
    if (this.outbox.length === 0) return;
    const jobs = this.outbox;
    this.outbox = [];
    this.executor!.send({ type: 'dispatch', jobs });
  }

  private contextFor(slot: CallSlot): CallContext<Deps> {
    return new CallContext(this, slot.call.id, this.turn);
  }

  progress(callId: string, progress: unknown): void {
    const slot = this.slotById.get(callId);
    if (!slot || slot.state !== 'dispatched') return;
    this.hooks.emit({ type: 'tool_call_progress', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, call: slot.call, progress });
  }

  // ── results ──────────────────────────────────────────────────────────

  /** The single result of a call. Anything after the first is ignored, so each call gets exactly one. */
  settleCall(callId: string, outcome: CallOutcome): void {
    const slot = this.slotById.get(callId);
    if (!slot || slot.state === 'settled') return;
    if (slot.state === 'dispatched') this.running--;
    slot.state = 'settled';
    slot.terminate = outcome.terminate;
    slot.output = outcome.output;
    const message: Message = { role: 'tool', callId, name: slot.call.name, content: outcome.output, isError: outcome.isError };
    this.transcript.push(message);
    this.hooks.emit({
      type: 'tool_call_completed',
      runId: this.runId, path: this.path, agent: this.agent.name,
      turn: this.turn,
      call: slot.call,
      result: outcome.result,
      output: outcome.output,
      isError: outcome.isError,
      details: outcome.details,
      terminate: outcome.terminate,
    });
    this.log({ kind: 'result', turn: this.turn, message });
    const signal = outcome.runSignal;
    if (signal instanceof RunCancelled) this.requestCancel(signal);
    else if (signal) this.stopError ??= signal;
  }

  private reject(slot: CallSlot, output: string): void {
    this.settleCall(slot.call.id, { result: undefined, output, isError: true, details: undefined, terminate: false });
  }

  /** Synthetic results for calls that will never run; `includeRunning` also closes in-flight calls. */
  closeOpenCalls(output: string, includeRunning: boolean): void {
    for (const slot of this.slots) {
      if (slot.state === 'pending' || (includeRunning && slot.state === 'dispatched')) this.reject(slot, output);
    }
    this.cursor = this.slots.length;
  }

  closeForStop(): void {
    this.closeOpenCalls(`Tool error: not executed: ${this.stopError?.message ?? 'run stopped'}`, false);
  }

  // ── cancellation ─────────────────────────────────────────────────────

  /** Asks the run actor to cancel; used by handle.cancel, the AbortSignal option and tools throwing RunCancelled. */
  requestCancel(error: RunCancelled): void {
    this.runRef?.send({ type: 'CANCEL', error });
  }

  cancel(error: RunCancelled): void {
    this.cancelError ??= error;
    this.abortController.abort(this.cancelError);
    this.closeOpenCalls(`Tool error: run cancelled: ${this.cancelError.reason}`, true);
    this.failure = this.cancelError;
  }

  // ── turn end ─────────────────────────────────────────────────────────

  endTurn(): void {
    this.hooks.emit({ type: 'turn_ended', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, usage: { ...this.usage } });
  }

  /** The run is done after this turn: a final text reply, or a batch whose every result terminates. */
  get finished(): boolean {
    if (this.finalReply) return true;
    if (this.slots.length === 0 || !this.slots.every((s) => s.terminate)) return false;
    this.output = this.slots.map((s) => s.output).join('\n');
    return true;
  }

  /** Called by a handoff tool: the target becomes the active agent after this turn. */
  requestHandoff(target: Agent<Deps>, inputFilter?: HandoffInputFilter): void {
    this.pendingHandoff = { target, inputFilter };
  }

  get handoffPending(): boolean {
    return this.pendingHandoff !== undefined;
  }

  /** Switches agent: the transcript carries over (through the filter, if any); tools and system prompt change. */
  applyHandoff(): void {
    const { target, inputFilter } = this.pendingHandoff!;
    this.pendingHandoff = undefined;
    const from = this.agent.name;
    try {
      if (inputFilter) {
        const kept = inputFilter(this.transcript.slice());
        this.transcript.length = 0;
        for (const message of kept) this.transcript.push(message);
      }
      this.useAgent(target);
    } catch (error) {
      this.stopError = asError(error);
      return;
    }
    this.hooks.emit({ type: 'handoff_occurred', runId: this.runId, path: this.path, agent: this.agent.name, turn: this.turn, from, to: target.name });
  }

  // ── sub-runs and budget propagation ─────────────────────────────────

  /** Spend reported by a sub-run (as a message to this run's actor): it counts as ours, and our parent's. */
  foldChildSpend(spend: Spend): void {
    addUsage(this.usage, spend.usage);
    this.toolCallCount += spend.toolCalls;
    this.reportSpend(spend);
  }

  private reportSpend(spend: Spend): void {
    this.parent?.runRef?.send({ type: 'child.spend', spend });
  }

  /** The first budget of this run's ancestors that is exhausted: a sub-run's limit is never above its parent's remainder. */
  private ancestorOverBudget(): BudgetExceeded | undefined {
    for (let run = this.parent; run; run = run.parent) {
      const over = usageOverBudget(run.budget, run.usage, Date.now() - run.startedAt) ?? toolCallsOverBudget(run.budget, run.toolCallCount);
      if (over) return over;
    }
    return undefined;
  }

  /** Checked after each batch: a sub-run's folded spend (tokens, tool calls) may have exhausted this run's budget. */
  checkSpend(): boolean {
    this.stopError ??= tokensOverBudget(this.budget, this.usage) ?? toolCallsOverBudget(this.budget, this.toolCallCount);
    return this.stopError !== undefined;
  }

  /** Starts `agent` as a child run of this one, spawned by the tool-call actor of `ctx`. */
  startSubRun(agent: Agent, input: string, options: { maxTurns?: number; budget?: Budget }, ctx: CallContext<Deps>): LaunchedRun {
    return launchRun({
      agent,
      input,
      options: { ...options, context: this.deps, signal: ctx.signal, approvalTimeoutMs: this.options.approvalTimeoutMs },
      runId: `${this.runId}/${ctx.callId}`,
      parentPath: this.path,
      desk: this.desk,
      machine: getRunMachine(),
      forward: (event) => this.hooks.emit(event),
      parent: { core: this, spawnedBy: ctx.actor },
    });
  }

  // ── checkpoints ──────────────────────────────────────────────────────

  private log(entry: CheckpointEntry): void {
    this.runLog?.append([entry], this.head('running'));
  }

  private head(status: RunStatus, error?: Error): CheckpointHead {
    return {
      agent: this.agent.name,
      turn: this.turn,
      usage: { ...this.usage },
      status,
      ...(this.output ? { output: this.output } : {}),
      ...(error ? { error: { name: error.name, message: error.message } } : {}),
    };
  }

  /** The checkpoint state: at a turn end (appending turn_end) or when a stopped run has drained; waits for every write. */
  checkpointInput(): CheckpointInput {
    return {
      flush: () => {
        if (!this.stopError) this.runLog?.append([{ kind: 'turn_end', turn: this.turn }], this.head(this.finished ? 'completed' : 'running'));
        return this.runLog?.settle() ?? Promise.resolve();
      },
    };
  }

  // ── terminal ─────────────────────────────────────────────────────────

  fail(error: Error): void {
    this.failure ??= error;
  }

  emitCompleted(): void {
    if (this.terminalSent) return;
    this.terminalSent = true;
    this.hooks.emit({ type: 'run_completed', runId: this.runId, path: this.path, agent: this.agent.name, output: this.output, usage: { ...this.usage }, turns: this.turn }, true);
  }

  emitFailed(): void {
    if (this.terminalSent) return;
    this.terminalSent = true;
    const error = this.failure ?? this.stopError ?? new RunCancelled('run ended without a result');
    this.failure = error;
    this.abortController.abort(error);
    // Best effort: a cancelled run can be resumed ("interrupted"), any other failure is "failed".
    this.runLog?.append([], this.head(error instanceof RunCancelled ? 'interrupted' : 'failed', error));
    this.hooks.emit({ type: 'run_failed', runId: this.runId, path: this.path, agent: this.agent.name, error, usage: { ...this.usage }, turns: this.turn }, true);
  }
}
