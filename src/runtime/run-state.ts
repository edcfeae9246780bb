import type { AnyActorLogic, AnyActorRef } from 'xstate';
import { checkAgentGraph, type Agent } from '../agent.js';
import type { CallJob } from '../actors/call-pipeline.js';
import type { ModelTurnInput } from '../actors/model-turn.js';
import { asError } from '../errors.js';
import type { AncestorBudget } from '../rules/budget.js';
import type { Mailbox } from '../tools/context.js';
import { isExposed, toToolSchema, type Tool, type ToolSchema } from '../tools/tool.js';
import { emptyUsage, type CustomMessage, type SuspendedApproval, type AssistantMessage, type Budget, type Message, type RunEvent, type RunInputValue, type ToolCallRequest, type Usage } from '../types.js';
import type { WaitRouter } from '../waits/wait-router.js';
import type { WaitView } from '../waits/wait-types.js';
import type { RunOptions } from './run-options.js';
import type { RunPort } from '../tools/call-context.js';
import type { HandoffInputFilter } from '../handoff/handoff.js';
import type { ApprovalDecisionEntry, ApprovalRequestEntry } from '../store/checkpoint-store.js';
import type { StoredWait } from './resume.js';
import { DEFAULT_LEASE_MS, RunLog, leaseOwner } from './run-log.js';
import { normaliseInput, validateRunOptions } from './run-options.js';
import { RunAbort } from './run-abort.js';
import { withRecallTool } from '../context/recall-tool.js';
import { activePolicy } from '../context/policy.js';
import { RunExtra, givenExtra } from './extra.js';
import { NO_INJECTORS, pluginInjectors, withPluginHooks, type HookSet, type NamedInjector } from './hook-set.js';
import { closersOf, type AgentPlugins } from '../plugins/plugin-setup.js';
import type { PluginCloser } from '../plugins/plugin-close.js';

export const DEFAULT_MAX_TURNS = 10;

export type { HandoffInputFilter } from '../handoff/handoff.js';

/** Where a run's events go: the root run's stream. Sub-runs are given the same sink. */
export type EventSink = (event: RunEvent) => void;

/** What a run actor is started with. Plain data plus addresses: never another run's state. */
export interface RunInput {
  /** Unique in the run tree; sub-runs get `<parent>/<turn>.<index>`. */
  readonly runId: string;
  readonly agent: Agent;
  readonly input: RunInputValue;
  readonly options: RunOptions;
  /** Agent names of the runs above this one (empty for a root run). */
  readonly parentPath: readonly string[];
  readonly sink: EventSink;
  /** The run tree's inbox of open waits (approvals, questions, events, timers): routes resolutions addressed by wait id to the wait. */
  readonly waits: WaitRouter;
  /** For sub-runs: the parent run's address and what every ancestor has left to spend. */
  readonly parent?: { readonly ref: AnyActorRef; readonly ancestors: readonly AncestorBudget[] };
  /** Whether anyone can still see the tree's per-turn events (shared by the whole tree; default: someone can). */
  readonly audience?: Audience;
}

/**
 * Whether a run tree's events have an audience. `quiet` is set once nobody will read the
 * stream and no tracer observes it (Runner.run, stopListening): the per-turn and per-call
 * progress events (turn_started, turn_ended, message_completed, text/reasoning deltas,
 * tool_call_started, tool_call_completed) are then not built at all. Every other event
 * (run start and end, approvals, injected messages, handoffs, failures) is still sent.
 */
export interface Audience {
  quiet: boolean;
}

/** Runs started without an audience object (a sub-run gets its root's): always heard. */
const ALWAYS_HEARD: Audience = Object.freeze({ quiet: false }) as Audience;

/** How a run ended; the run actor's output. */
export type RunOutcome =
  | {
      readonly status: 'completed';
      readonly runId: string;
      readonly output: string;
      /** The run's final output (the output text; typed by the agent's outputType when it has one). */
      readonly finalOutput: unknown;
      readonly usage: Usage;
      readonly turns: number;
      readonly agent: string;
      readonly transcript: readonly Message[];
      /** The last model reply's finish reason, as the provider said it. */
      readonly finishReason: string | undefined;
      /** Input tokens of the last model request (the context size the model last saw). */
      readonly lastInputTokens: number | undefined;
    }
  | { readonly status: 'failed'; readonly runId: string; readonly error: Error }
  /** Cancelled (handle.cancel, an aborted signal, a tool's RunCancelled, a parent cancelling): `error` is the RunCancelled. */
  | { readonly status: 'cancelled'; readonly runId: string; readonly error: Error }
  /** Parked at its waits: `waits` lists every one (`approvals`, the approval waits among them, as a suspended run stores them). */
  | { readonly status: 'suspended'; readonly runId: string; readonly approvals: readonly SuspendedApproval[]; readonly waits: readonly WaitView[] };

export { emptyBatch, type Batch, type CallSlot, type SlotState } from './run-batch.js';
import { emptyBatch, type Batch, type CallSlot } from './run-batch.js';

/**
 * The state of one run, owned by its run actor: only the run chart's actions change it,
 * guards only read it. Kept as one record referenced from the actor's context so XState
 * never copies the transcript (it grows by push; a turn costs the same at turn 200).
 */
/** A message queued by the caller (`handle.steer` / `handle.followUp`). */
export interface QueuedMessage {
  readonly id: string;
  readonly text: string;
  /** A custom-role message steered instead of text (it joins the transcript as it is). */
  readonly message?: CustomMessage;
}

export interface RunState extends Pick<RunInput, 'runId' | 'options' | 'parentPath' | 'sink' | 'waits'> {
  /** The run's input; a resumed run's is its stored one (applyRestore), as `run_started` tells. */
  input: RunInputValue;
  /** The tree's audience: progress events are built only while it is not quiet. */
  readonly audience: Audience;
  /** The run actor itself: tools reach their run only by sending it messages. */
  readonly self: AnyActorRef;
  /** The logic this run runs on; sub-runs use the same (so a test's mutant chart reaches them). */
  readonly logic: AnyActorLogic;
  readonly parentRef: AnyActorRef | undefined;
  /** This run's copy of every ancestor's budget and spend, parent first. */
  readonly ancestors: AncestorBudget[];
  readonly deps: unknown;
  readonly maxTurns: number;
  readonly budget: Budget | undefined;
  readonly startedAt: number;
  /** The run's abort signal, created on first read (RunAbort). */
  readonly abortController: RunAbort;
  readonly transcript: Message[];
  readonly usage: Usage;
  readonly mailbox: Mailbox;
  readonly runLog: RunLog | undefined;
  /** The actor that hosts this run's tool-call actors: made with the run's first call, stopped when the run ends. */
  executor: AnyActorRef | undefined;
  /** Live sub-runs by run id, told about spend elsewhere in the tree (created with the first one). */
  subRuns: Map<string, AnyActorRef> | undefined;
  /** What this run's call contexts may do with it (built with the first call context: `runPort`). */
  port: RunPort | undefined;

  agent: Agent;
  tools: Map<string, Tool>;
  toolSchemas: ToolSchema[];
  system: string;
  agentView: { readonly name: string };
  path: readonly string[];
  /** The active agent's hooks and guardrails, its plugins' after its own (the agent itself when it has no plugins). */
  hookSet: HookSet;
  /** The active agent's plugins' view injectors, in plugin order (see ViewInjector). */
  viewInjectors: readonly NamedInjector[];
  /** Each agent's plugins as set up in this run (once per agent; created with the first). */
  pluginSetups: Map<Agent, AgentPlugins> | undefined;
  /** Every set-up plugin's close, in setup order: called once each, last first, when the run ends. */
  pluginClosers: PluginCloser[];
  /** Settles when every close has settled (set when the run ends with closes to call). */
  pluginsClosed: Promise<void> | undefined;

  turn: number;
  /** The current turn's end is stored (a durable run saves each turn before deciding what comes next). */
  turnSaved: boolean;
  toolCallCount: number;
  batch: Batch;
  /** Calls dispatched and not yet settled: the one count of calls in flight. */
  inFlight: number;
  /** Calls cleared since the last hand-over to the executor. */
  outbox: CallJob[];
  /** Messages waiting for the next model request: tools' mailbox posts, hook injections, the repair prompt. */
  inbox: Array<{ readonly text: string; readonly source: 'mailbox' | 'hook' | 'repair' }>;
  /** The outputType repair turn was used (one per run). */
  repairUsed: boolean;
  /** The input guardrails' check (first turn), rejecting with GuardrailTripped; undefined without input guardrails. */
  inputCheck: Promise<void> | undefined;
  /** The input guardrails passed (`guardrail.passed`). */
  inputChecked: boolean;
  /** Steer messages waiting for the next model request. */
  steerQueue: QueuedMessage[];
  /** Follow-ups waiting for the run to be about to end. */
  followUps: QueuedMessage[];
  /** System text added to every agent's instructions (the instructions option, system input messages). */
  extraSystem: string;
  /** The model turn input of the active agent (no hooks, no checkpoint log), reused turn after turn. */
  modelTurn: { readonly agent: Agent; readonly system: string; readonly input: ModelTurnInput } | undefined;
  /** The last model reply's finish reason and input tokens (for the result). */
  lastReply: { readonly finishReason: string | undefined; readonly inputTokens: number | undefined } | undefined;
  pendingHandoff: { readonly target: Agent; readonly inputFilter: HandoffInputFilter | undefined } | undefined;

  configError: Error | undefined;
  /** Stops the run at its next safe point (budget, a failed handoff). */
  stopError: Error | undefined;
  cancelError: Error | undefined;
  failure: Error | undefined;
  outcome: RunOutcome | undefined;

  /** Found in the checkpoint store: continue it. */
  resumed: boolean;
  /** The stored run had completed: it replays as run_started, run_completed. */
  replayCompleted: boolean;
  /** The stored run stopped inside a turn: continue from its stored reply. */
  resumeInTurn: boolean;
  /** Output of a completed stored run. */
  storedOutput: string;
  /** Messages that came from the session's history (not this run's own). */
  historyLength: number;
  /** The stored open turn's call waits, with their resolutions (resume): such a call opens its wait again instead of running. */
  storedWaits: ReadonlyMap<string, StoredWait>;
  /** `ctx.extra`, made when first read or given (`RunOptions.extra`), or restored from the log. */
  extra: RunExtra | undefined;
  /** Approval requests of the stored open turn, with their recorded decisions (resume). */
  storedApprovals: ReadonlyMap<string, { readonly request: ApprovalRequestEntry; readonly decision: ApprovalDecisionEntry | undefined }>;
  /** The caller asked to park the run at its next approval wait (`handle.suspend()`). */
  suspendRequested: boolean;
  /** The waits the run parked on (set by the suspending state). */
  parked: { readonly approvals: SuspendedApproval[]; readonly waits: WaitView[] } | undefined;
}

const runStates = new WeakSet<object>();

/** Every run that was not restored has none; shared (it is read-only), restoring replaces it. */
const NO_STORED_APPROVALS: RunState['storedApprovals'] = new Map();
const NO_STORED_WAITS: RunState['storedWaits'] = new Map();

/** Whether `value` is a run's state record (inspection summarises it instead of walking it). */
export function isRunState(value: unknown): value is RunState {
  return typeof value === 'object' && value !== null && runStates.has(value);
}

/** Builds a run's state from its input; a bad option becomes `configError` (the chart fails the run with it). */
export function createRunState(input: RunInput, self: AnyActorRef): RunState {
  const { options } = input;
  const checkpoint = options.checkpoint;
  const state: RunState = {
    runId: input.runId,
    input: input.input,
    options,
    parentPath: input.parentPath,
    sink: input.sink,
    audience: input.audience ?? ALWAYS_HEARD,
    waits: input.waits,
    self,
    logic: (self as unknown as { logic: AnyActorLogic }).logic,
    parentRef: input.parent?.ref,
    ancestors: (input.parent?.ancestors ?? []).map((a) => ({ ...a, usage: { ...a.usage } })),
    deps: options.context,
    maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
    budget: options.budget,
    startedAt: Date.now(),
    abortController: new RunAbort(),
    transcript: [],
    usage: emptyUsage(),
    mailbox: { post: (text: string) => postToRun(self, text) },
    runLog: undefined,
    executor: undefined,
    subRuns: undefined,
    port: undefined,
    agent: input.agent,
    tools: new Map(),
    toolSchemas: [],
    system: '',
    agentView: { name: input.agent?.name ?? '' },
    path: [...input.parentPath, input.agent?.name ?? ''],
    hookSet: input.agent,
    viewInjectors: NO_INJECTORS,
    pluginSetups: undefined,
    pluginClosers: [],
    pluginsClosed: undefined,
    turn: 0,
    turnSaved: false,
    toolCallCount: 0,
    batch: emptyBatch(),
    inFlight: 0,
    outbox: [],
    inbox: [],
    repairUsed: false,
    inputCheck: undefined,
    inputChecked: false,
    steerQueue: [],
    followUps: [],
    extraSystem: '',
    modelTurn: undefined,
    lastReply: undefined,
    pendingHandoff: undefined,
    configError: undefined,
    stopError: undefined,
    cancelError: undefined,
    failure: undefined,
    outcome: undefined,
    resumed: false,
    replayCompleted: false,
    resumeInTurn: false,
    storedOutput: '',
    historyLength: 0,
    storedApprovals: NO_STORED_APPROVALS,
    storedWaits: NO_STORED_WAITS,
    extra: undefined,
    suspendRequested: false,
    parked: undefined,
  };
  runStates.add(state);
  if (checkpoint) {
    (state as { runLog: RunLog }).runLog = new RunLog({
      store: checkpoint.store,
      runId: checkpoint.runId ?? input.runId,
      owner: checkpoint.owner ?? leaseOwner(),
      leaseMs: checkpoint.leaseMs ?? DEFAULT_LEASE_MS,
      ...(checkpoint.claimWaitMs !== undefined ? { claimWaitMs: checkpoint.claimWaitMs } : {}),
      onSaved: (entries) => state.sink({ type: 'checkpoint_saved', runId: state.runId, path: state.path, agent: state.agent.name, turn: state.turn, entries }),
      onWaiting: (held) => state.sink({ type: 'lease_waiting', runId: state.runId, path: state.path, agent: state.agent.name, ...held }),
      onFailed: (error) => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'log.failed', error });
      },
    });
  }
  try {
    validateRunOptions(input.input, options);
    if (options.extra !== undefined) state.extra = new RunExtra(givenExtra(options.extra), 'given');
    checkAgentGraph(input.agent);
    state.extraSystem = [options.instructions ?? '', ...normaliseInput(input.input).system].filter((t) => t !== '').join('\n\n');
    useAgent(state, input.agent);
  } catch (error) {
    state.configError = asError(error);
  }
  return state;
}

/** What making an agent active sets: computed first (it may throw), then applied by a chart action. */
export interface AgentSetup {
  readonly agent: Agent;
  readonly tools: Map<string, Tool>;
  readonly toolSchemas: ToolSchema[];
  readonly system: string;
  readonly hookSet: HookSet;
  readonly viewInjectors: readonly NamedInjector[];
  /** The agent's plugins as set up in this run (undefined: it has none, or they are not set up yet). */
  readonly plugins: AgentPlugins | undefined;
}

/**
 * The tools, schemas, system prompt, hooks and view injectors `agent` runs with in this run,
 * with its plugins' contributions (`plugins`, or those set up earlier in this run). Changes nothing.
 * @throws UserError on a tool name clash; whatever the agent's instructions function throws.
 */
export function agentSetup(state: RunState, agent: Agent, plugins: AgentPlugins | undefined = state.pluginSetups?.get(agent)): AgentSetup {
  const active = plugins?.plugins ?? [];
  const table = agent.toolTable(active.map((p) => ({ source: `plugin '${p.name}'`, tools: p.tools })));
  const tools = withRecallTool(table, activePolicy({ options: state.options, agent }) !== undefined);
  const own = [agent.systemPrompt(state.deps), ...active.map((p) => p.instructions)].filter((t) => t !== '').join('\n\n');
  const system = state.extraSystem ? (own ? `${own}\n\n${state.extraSystem}` : state.extraSystem) : own;
  // Hidden tools (exposeToModel: false) are in the table, for resolved calls, but never in the request.
  return { agent, tools, toolSchemas: [...tools.values()].filter(isExposed).map(toToolSchema), system, hookSet: withPluginHooks(agent, active), viewInjectors: pluginInjectors(agent, active), plugins };
}

/** Makes the agent of `setup` the active agent: its tools, schemas, system prompt, hooks; plugins set up for it now are kept (and closed when the run ends). */
export function applyAgentSetup(state: RunState, setup: AgentSetup): void {
  state.tools = setup.tools;
  state.toolSchemas = setup.toolSchemas;
  state.system = setup.system;
  state.agent = setup.agent;
  state.agentView = { name: setup.agent.name };
  state.path = [...state.parentPath, setup.agent.name];
  state.hookSet = setup.hookSet;
  state.viewInjectors = setup.viewInjectors;
  if (setup.plugins && !state.pluginSetups?.has(setup.agent)) {
    (state.pluginSetups ??= new Map()).set(setup.agent, setup.plugins);
    state.pluginClosers.push(...closersOf(setup.plugins));
  }
}

/** Makes `agent` the active agent. @throws as `agentSetup` (nothing changes then). */
export function useAgent(state: RunState, agent: Agent): void {
  applyAgentSetup(state, agentSetup(state, agent));
}

/** A tool's mailbox post is a message to its run; a run that has ended no longer listens. */
function postToRun(self: AnyActorRef, text: string): void {
  if (self.getSnapshot().status === 'active') self.send({ type: 'mailbox.post', text: String(text) });
}
