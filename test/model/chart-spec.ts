/**
 * The scenario space of the run-chart model, shared by the abstract model (what SHOULD
 * happen, chart-model.ts) and the driver (what the real runtime does, chart-world.ts):
 * profiles (run options picked at launch), the model replies a turn can get, and the kinds
 * of tool call a reply can hold. Kept small: every knob is here because some transition of
 * the chart, or some rule a mutant breaks, needs it.
 */

/** One kind of requested call; the driver builds a tool for each. */
export type CallKind =
  /** A parallel tool that returns `result:<callId>`. */
  | 'ok'
  /** needsApproval is a predicate answering 'yes' (truthy, not true): it must still ask. */
  | 'gated'
  /** Needs approval and is `parallel: false`: after approval it waits at the barrier. */
  | 'gatedAlone'
  /** `parallel: false`: a barrier. */
  | 'alone'
  /** Handoff to agent `other`: a barrier; only the first handoff of a turn takes effect. */
  | 'handoff'
  /** Handoff whose inputFilter throws: the switch fails and the run stops. */
  | 'badHandoff'
  /** Returns `toolResult({ terminate: true })`. */
  | 'terminate'
  /** Posts a mailbox message, then terminates: the waiting message gives the model another turn. */
  | 'postTerminate'
  /** A tool name the agent does not have. */
  | 'unknown'
  /** Arguments that are not JSON. */
  | 'badJson'
  /** Throws RunCancelled: the whole run is cancelled. */
  | 'cancelTool'
  /** Throws BudgetExceeded: the run stops after the batch. */
  | 'budgetTool'
  /** agent-as-tool `mid`, which asks agent-as-tool `leaf`; the root's budget runs out inside the leaf. */
  | 'nested'
  /** agent-as-tool `waiter`, whose own tool waits: the sub-run is alive while the root goes on. */
  | 'waiter';

export const TOOL_NAME: Record<CallKind, string> = {
  ok: 'ok',
  gated: 'gated',
  gatedAlone: 'gated_alone',
  alone: 'alone',
  handoff: 'transfer_to_other',
  badHandoff: 'bad_transfer',
  terminate: 'finish',
  postTerminate: 'post_finish',
  unknown: 'nope',
  badJson: 'ok',
  cancelTool: 'cancel_run',
  budgetTool: 'over_budget',
  nested: 'ask_mid',
  waiter: 'ask_waiter',
};

/** The replies a model turn can get: a text answer or one batch of calls. */
export const REPLIES = {
  text: [],
  single: ['ok'],
  pair: ['ok', 'ok'],
  triple: ['ok', 'ok', 'ok'],
  gated: ['gated'],
  gatedAlone: ['ok', 'gatedAlone'],
  alone: ['alone', 'ok'],
  handoffs: ['handoff', 'handoff'],
  badHandoff: ['badHandoff'],
  terminate: ['terminate'],
  terminatePost: ['terminate', 'postTerminate'],
  invalid: ['unknown', 'badJson'],
  cancelTool: ['cancelTool', 'ok'],
  budgetTool: ['budgetTool'],
  nested: ['nested'],
  overlap: ['waiter', 'gated', 'ok'],
  // With maxConcurrentToolCalls 1: the approval may come while the first call still runs.
  overlapGated: ['ok', 'gated'],
  // Text 'retry-me': the hooked profile's afterModelResponse asks for a retry.
  retryMe: [],
  // Text 'stop-me' with a call: the hooked profile's afterModelResponse stops the run.
  stopMe: ['ok'],
  // Text '{"ok":true}': valid for the typed profile's outputType (plain 'done' is not JSON).
  json: [],
} as const satisfies Record<string, readonly CallKind[]>;

export type ReplyKind = keyof typeof REPLIES;

/** Usage of every root model reply (the driver's model reports it; the tokens profile's budget is counted in it). */
export const REPLY_TOKENS = 2;
/** Text of a reply without calls; also the run's output. */
export const REPLY_TEXT = 'done';
/** The text each reply kind carries (empty: none). */
export const REPLY_CONTENT: Partial<Record<ReplyKind, string>> = { text: REPLY_TEXT, retryMe: 'retry-me', stopMe: 'stop-me', json: '{"ok":true}' };

export type StoredRun = 'none' | 'completed' | 'openTurn';

export interface Profile {
  readonly configError?: boolean;
  /** Cancelled right after launch, before START reaches the chart. */
  readonly cancelFirst?: boolean;
  /** A checkpoint store (the driver holds its writes until the model says they land or fail). */
  readonly checkpoint?: boolean;
  readonly stored?: StoredRun;
  readonly session?: boolean;
  readonly maxTurns?: number;
  readonly maxToolCalls?: number;
  readonly maxTotalTokens?: number;
  readonly maxConcurrentToolCalls?: number;
  /**
   * Before START the caller queues steer 's1', follow-up 'f1' and steer 's2', then withdraws
   * 's2' (ids steer_1, followup_2, steer_3): covers steer.add / steer.remove and injection.
   */
  readonly steered?: boolean;
  /** afterModelResponse (retry on 'retry-me', stop on 'stop-me') and onRunEnd (continues once with 'more'; waits at gate 'end'). */
  readonly hooks?: boolean;
  /** outputType z.object({ ok: z.literal(true) }): 'done' is invalid (repair turn), 'json' valid. */
  readonly typed?: boolean;
  /** An output guardrail that trips (waits at gate 'end'). */
  readonly guarded?: boolean;
  /** An input guardrail beside the first turn (gate 'guard': the step passes or trips it). */
  readonly inputGuarded?: boolean;
  /** Reply kinds the model may give, by turn; a turn not listed gets none (the run must end before). */
  readonly replies?: Readonly<Record<number, readonly ReplyKind[]>>;
  /** `checkpoint.suspendOnWait`: the run parks once it only waits (for an approval). */
  readonly suspendOnWait?: boolean;
  /** The caller calls `handle.suspend()` right after the launch: the run parks at its next wait. */
  readonly suspendEarly?: boolean;
  /**
   * The main agent has a shouldStopAfterTurn hook; each ask waits at gate `afterTurn:<turn>`
   * until a step answers it: true (soft stop), false (go on) or a throw (HookError).
   */
  readonly stopAfterTurn?: boolean;
  /**
   * The main agent has a plugin whose setup waits at gate `plugins` until a step lets it
   * return (its tools join the agent) or throw (PluginError).
   */
  readonly plugins?: boolean;
  /**
   * The main agent has a resolveToolCall hook that leaves every call as it is; the asks of a
   * turn wait at gate `resolve:<turn>` until a step answers them (the chart's resolving step).
   */
  readonly resolver?: boolean;
  /** Not offered to the traversal: only a named test launches it (see run-chart.model.test.ts). */
  readonly explicit?: boolean;
}

const ALL_BATCHES: readonly ReplyKind[] = ['text', 'pair', 'gated', 'gatedAlone', 'alone', 'handoffs', 'badHandoff', 'terminate', 'terminatePost', 'invalid', 'cancelTool', 'budgetTool'];

export const PROFILES = {
  basic: { maxTurns: 2, replies: { 1: ALL_BATCHES, 2: ['text'] } },
  configError: { configError: true },
  cancelFirst: { cancelFirst: true, replies: {} },
  oneTurn: { maxTurns: 1, replies: { 1: ['single'] } },
  // Each reply costs 2 tokens: the second reply is over, with its call not yet run.
  tokens: { maxTotalTokens: 3, replies: { 1: ['single'], 2: ['single'] } },
  // A triple: the first call runs, the second is over budget, the third never runs.
  durable: { checkpoint: true, maxToolCalls: 1, replies: { 1: ['single', 'triple'], 2: ['text'] } },
  // A checkpointed turn that hands off: turnEnd (after the checkpoint) goes to handoff.
  durableHandoff: { checkpoint: true, replies: { 1: ['handoffs'], 2: ['text'] } },
  session: { session: true, replies: { 1: ['text'] } },
  resumeCompleted: { checkpoint: true, stored: 'completed' },
  // The stored turn requested two calls and has the first result.
  resumeOpenTurn: { checkpoint: true, stored: 'openTurn', replies: { 2: ['text'] } },
  // The same within maxToolCalls: 2 (the stored turn's two calls are all the run asked for).
  resumeBudget: { checkpoint: true, stored: 'openTurn', maxToolCalls: 2, replies: { 2: ['text'] }, explicit: true },
  nested: { maxToolCalls: 3, replies: { 1: ['nested'], 2: ['text'] } },
  overlap: { replies: { 1: ['overlap'], 2: ['text'] } },
  // One call in flight at a time: the next cleared call waits (throttled) for a free slot.
  throttled: { maxConcurrentToolCalls: 1, replies: { 1: ['pair', 'overlapGated'], 2: ['text'] } },
  // Turn 1 sees the steer; its text reply would end the run, so turn 2 takes the follow-up.
  steered: { steered: true, replies: { 1: ['text'], 2: ['text'] } },
  hooked: { hooks: true, replies: { 1: ['retryMe', 'stopMe', 'text'], 2: ['text'], 3: ['text'] } },
  typed: { typed: true, replies: { 1: ['text', 'json'], 2: ['text', 'json'] } },
  // The repair turn would be turn 2: it re-enters the turn and stops at its limit (turn.checkLimits).
  typedOneTurn: { typed: true, maxTurns: 1, replies: { 1: ['text'] } },
  guarded: { guarded: true, replies: { 1: ['text'] } },
  inputGuarded: { inputGuarded: true, replies: { 1: ['single', 'text'], 2: ['text'] } },
  // Parks at the approval wait once nothing else runs (the overlap's waiter and ok calls finish first).
  parked: { checkpoint: true, suspendOnWait: true, replies: { 1: ['gated', 'overlap'] } },
  // Soft stop: asked after turn 1's calls (not after a text turn); terminatePost's mailbox message outlives a soft stop.
  softStop: { stopAfterTurn: true, replies: { 1: ['single', 'terminatePost'], 2: ['text'] } },
  // Plugins: the main agent's plugin is set up once, before its first model request (turn.pluginSetup).
  plugged: { plugins: true, replies: { 1: ['single', 'text'], 2: ['text'] } },
  // resolveToolCall: a reply's calls are resolved before preflight; a resumed open turn's unfinished call is resolved again.
  resolving: { resolver: true, replies: { 1: ['pair'], 2: ['text'] } },
  resumeResolving: { checkpoint: true, stored: 'openTurn', resolver: true, replies: { 2: ['text'] } },
  // handle.suspend() before the first step: the same parking, asked for by the caller.
  suspendedByCaller: { checkpoint: true, suspendEarly: true, replies: { 1: ['gated'] } },
} as const satisfies Record<string, Profile>;

export type ProfileName = keyof typeof PROFILES;
export const profileOf = (name: ProfileName): Profile => PROFILES[name];

/** The stored open turn of `resumeOpenTurn`: turn 1 asked for two `ok` calls, the first has its result. */
export const STORED_OPEN_TURN = { turn: 1, kinds: ['ok', 'ok'] as const, settled: [0] };
/** Output of the stored completed run of `resumeCompleted`. */
export const STORED_OUTPUT = 'earlier';

/** The model's id for call `index` of `turn`'s reply. */
export const callId = (turn: number, index: number): string => `t${turn}c${index}`;

/**
 * What a tool_call_completed says, as the driver classifies its output (chart-world.ts
 * `classify`) and the model predicts it.
 */
export type ResultClass =
  | 'ok'
  | 'denied'
  | 'unknownTool'
  | 'badJson'
  | 'handoffDup'
  | 'transferred'
  | 'overBudget'
  | 'notRun'
  | 'notExecuted'
  | 'cancelled'
  | 'toolError'
  | 'agentFailed'
  | 'agentOk'
  | 'badEdits';

/**
 * What the sub-runs of an agent-as-tool call do, as the spec says (written by hand from
 * docs/architecture.md "Budgets" / "Sub-runs and handoffs", not by running them): the messages they send the
 * root (`child.*`, in order, with the tool calls each spend counts) when the call is
 * dispatched and when it settles, the sub-runs' terminal events in order, and the call's
 * result.
 */
export interface SubRunScript {
  readonly onDispatch: readonly SubRunMessage[];
  readonly onSettle: readonly SubRunMessage[];
  readonly terminals: readonly string[];
  /** Terminal events when the root is cancelled while the call is dispatched (a live sub-run is cancelled with it). */
  readonly onCancel: readonly string[];
  readonly result: ResultClass;
}
export type SubRunMessage = { readonly type: 'child.started' } | { readonly type: 'child.ended' } | { readonly type: 'child.spend'; readonly toolCalls: number };

const spend = (toolCalls: number): SubRunMessage => ({ type: 'child.spend', toolCalls });

export const SUB_RUNS: Partial<Record<CallKind, SubRunScript>> = {
  // Root budget maxToolCalls 3, the root's own call is #1. mid: reply, counts ask_leaf (#2);
  // leaf (its spend reaches the root through mid): reply, counts work (#3), counts work (#4 >
  // 3: the leaf's grandparent is out of budget, so the leaf stops and fails). mid's next turn
  // start sees the root over budget: mid fails too; the root's call gets mid's failure.
  nested: {
    onDispatch: [],
    onSettle: [{ type: 'child.started' }, spend(0), spend(1), spend(0), spend(1), spend(1), { type: 'child.ended' }],
    terminals: ['leaf:run_failed:BudgetExceeded', 'mid:run_failed:BudgetExceeded'],
    // Held before its body starts: no sub-run exists yet.
    onCancel: [],
    result: 'agentFailed',
  },
  // waiter: reply, counts hold (then waits for the driver); on settle: hold returns, reply, done.
  waiter: {
    onDispatch: [{ type: 'child.started' }, spend(0), spend(1)],
    onSettle: [spend(0), { type: 'child.ended' }],
    terminals: ['waiter:run_completed'],
    onCancel: ['waiter:run_failed:RunCancelled'],
    result: 'agentOk',
  },
};
