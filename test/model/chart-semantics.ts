import { enqueueActions } from 'xstate';
import {
  PROFILES,
  REPLIES,
  REPLY_CONTENT,
  REPLY_TEXT,
  REPLY_TOKENS,
  STORED_OPEN_TURN,
  STORED_OUTPUT,
  SUB_RUNS,
  callId,
  type CallKind,
  type Profile,
  type ProfileName,
  type ReplyKind,
  type ResultClass,
  type SubRunMessage,
} from './chart-spec.js';

/**
 * The meaning of every guard and action NAME of the run chart, over an abstract run.
 * Written from docs/architecture.md ("States and transitions", "Budgets", "Terminate", "Approvals") as a
 * specification: nothing here calls src/rules or src/runtime, so a mutant of a rule makes
 * the real run disagree with this model. Effects are recorded as labels of the run events
 * the root stream must carry, in order.
 */

export interface Slot {
  readonly kind: CallKind;
  readonly id: string;
  /** cleared: passed preflight (and approval), waiting for a free slot (maxConcurrentToolCalls). */
  state: 'pending' | 'cleared' | 'dispatched' | 'settled';
  terminate: boolean;
  /** Counted against maxToolCalls (a resumed call was counted by the run that requested it). */
  counted: boolean;
}

export interface ModelContext {
  profile: ProfileName | undefined;
  agent: 'main' | 'other';
  turn: number;
  reply: ReplyKind | 'stored' | undefined;
  slots: Slot[];
  cursor: number;
  claimedHandoff: boolean;
  tokens: number;
  toolCalls: number;
  /** Mailbox messages waiting for the next model request. */
  inbox: number;
  /** Ids of the caller's queued steer messages and follow-ups. */
  steer: string[];
  followUps: string[];
  /** afterModelResponse stopped the run at this reply. */
  stopped: boolean;
  /** The main agent's plugins are set up in this run. */
  pluginsSetUp: boolean;
  /** shouldStopAfterTurn's answer about this turn (undefined: not asked). */
  softStop: boolean | undefined;
  /** The outputType repair turn was used. */
  repairUsed: boolean;
  /** How often the run-end checks ran. */
  ends: number;
  /** The input guardrail has not decided yet. */
  guardPending: boolean;
  pendingHandoff: 'good' | 'bad' | undefined;
  /** Error name the run stops with at its next safe point. */
  stop: string | undefined;
  cancel: boolean;
  failure: string | undefined;
  /** The current turn's end is stored (durable profiles save each turn before deciding what comes next). */
  turnSaved: boolean;
  /**
   * The current call's approval wait is open: 'opening' during the step that entered the wait
   * (only its `wait.opened` sees it open), true from the next step until it is decided.
   */
  waitOpen: boolean | 'opening';
  /** The caller asked the run to park at its next wait (handle.suspend()). */
  suspendRequested: boolean;
  resumed: boolean;
  /** The stored run could not be restored (or was refused): the run starts only to report it. */
  restoreFailed: boolean;
  replayCompleted: boolean;
  resumeInTurn: boolean;
  output: string | undefined;
  /** Labels of the root run's events, in order (chart-world.ts `label`). */
  log: string[];
  /** Terminal events of sub-runs, `<agent>:<label>`, in order. */
  subLog: string[];
}

export const initialContext = (): ModelContext => ({
  profile: undefined,
  agent: 'main',
  turn: 0,
  reply: undefined,
  slots: [],
  cursor: 0,
  claimedHandoff: false,
  tokens: 0,
  toolCalls: 0,
  inbox: 0,
  steer: [],
  followUps: [],
  stopped: false,
  softStop: undefined,
  pluginsSetUp: false,
  repairUsed: false,
  ends: 0,
  guardPending: false,
  pendingHandoff: undefined,
  stop: undefined,
  cancel: false,
  failure: undefined,
  turnSaved: false,
  waitOpen: false,
  suspendRequested: false,
  resumed: false,
  restoreFailed: false,
  replayCompleted: false,
  resumeInTurn: false,
  output: undefined,
  log: [],
  subLog: [],
});

export type Raised = { type: string; [k: string]: unknown };
export type Effect = (c: ModelContext, event: Raised) => Raised[] | void;
type Args = { context: ModelContext; event: Raised };

export const profile = (c: ModelContext): Profile => PROFILES[c.profile!];
const maxTurns = (c: ModelContext): number => profile(c).maxTurns ?? 10;
const tokensOver = (c: ModelContext): boolean => profile(c).maxTotalTokens !== undefined && c.tokens > profile(c).maxTotalTokens!;
const callsOver = (c: ModelContext): boolean => profile(c).maxToolCalls !== undefined && c.toolCalls > profile(c).maxToolCalls!;
const gated = (k: CallKind): boolean => k === 'gated' || k === 'gatedAlone';
export const isHandoff = (k: CallKind): boolean => k === 'handoff' || k === 'badHandoff';
/** Barrier rule: parallel:false tools and every handoff run alone. */
const runsAlone = (k: CallKind): boolean => k === 'alone' || k === 'gatedAlone' || isHandoff(k);
const current = (c: ModelContext): Slot => c.slots[c.cursor]!;
/** Capacity rule: another call may start while fewer than maxConcurrentToolCalls run. */
const capacity = (c: ModelContext): boolean => profile(c).maxConcurrentToolCalls === undefined || c.slots.filter((s) => s.state === 'dispatched').length < profile(c).maxConcurrentToolCalls!;
/** Terminate rule with the queues: the reply ends the run only when no message waits for the model. */
const endsRun = (c: ModelContext, waiting: number): boolean => c.reply !== undefined && waiting === 0 && (c.stopped || c.softStop === true || c.slots.every((s) => s.terminate));
const finishes = (c: ModelContext): boolean => endsRun(c, c.inbox + c.steer.length + c.followUps.length);
/** The final output: a stopped reply's text, a text reply's, or the results of a terminating (or soft-stopped) batch. */
const outputOf = (c: ModelContext): string =>
  c.replayCompleted ? STORED_OUTPUT : c.stopped || c.slots.length === 0 ? (REPLY_CONTENT[c.reply as ReplyKind] ?? REPLY_TEXT) : c.slots.map((s) => `result:${s.id}`).join('\n');
/** The typed profile's rule: only the json reply is valid. */
const outputBad = (c: ModelContext): boolean => profile(c).typed === true && finishes(c) && c.reply !== 'json';
const hasEndChecks = (c: ModelContext): boolean => profile(c).hooks === true || profile(c).guarded === true;

/** An effect as an XState action: applied to a copy of the context, then the raised events in order. */
export const effect = (fn: Effect) =>
  enqueueActions(({ context, event, enqueue }: { context: ModelContext; event: Raised; enqueue: any }) => {
    const next = structuredClone(context);
    const raised = fn(next, event) ?? [];
    enqueue.assign(() => next);
    for (const e of raised) enqueue.raise(e);
  });

function settle(c: ModelContext, slot: Slot, cls: ResultClass, terminate = false): void {
  slot.state = 'settled';
  slot.terminate = terminate;
  c.log.push(`tool_call_completed:${slot.id}:${cls}`);
}

export const subRunEvent = (m: SubRunMessage): Raised => (m.type === 'child.spend' ? { type: 'child.spend', toolCalls: m.toolCalls } : { type: m.type });

function dispatch(c: ModelContext, slot: Slot): Raised[] {
  slot.state = 'dispatched';
  c.log.push(`tool_call_started:${slot.id}`);
  // A sub-run started by this call talks to the run after the step that dispatched it.
  return (SUB_RUNS[slot.kind]?.onDispatch ?? []).map(subRunEvent);
}

const claim = (c: ModelContext, slot: Slot): void => void (isHandoff(slot.kind) && (c.claimedHandoff = true));

/**
 * Serial preflight in request order: skip calls with a result, count, budget, tool lookup,
 * handoff dedup, JSON, approval, barrier; parallel calls are dispatched and preflight goes
 * on. Returns the verdict event, then whatever the dispatched sub-runs send afterwards.
 */
function admitCalls(c: ModelContext): Raised[] {
  const later: Raised[] = [];
  const verdict = (v: string): Raised[] => [{ type: `preflight.${v}` }, ...later];
  while (c.cursor < c.slots.length) {
    if (c.stop) return verdict('stop');
    const slot = current(c);
    if (slot.state === 'settled') {
      c.cursor++;
      continue;
    }
    if (slot.state === 'cleared') {
      if (!capacity(c)) return verdict('full');
      c.cursor++;
      later.push(...dispatch(c, slot));
      continue;
    }
    if (!slot.counted) c.toolCalls++;
    slot.counted = true;
    if (callsOver(c)) {
      c.stop = 'BudgetExceeded';
      c.cursor++;
      settle(c, slot, 'overBudget');
      return verdict('stop');
    }
    if (slot.kind === 'unknown' || slot.kind === 'badJson') {
      c.cursor++;
      settle(c, slot, slot.kind === 'unknown' ? 'unknownTool' : 'badJson');
      continue;
    }
    if (isHandoff(slot.kind) && c.claimedHandoff) {
      c.cursor++;
      settle(c, slot, 'handoffDup');
      continue;
    }
    if (gated(slot.kind)) {
      c.log.push(`approval_required:${slot.id}`);
      c.waitOpen = 'opening';
      // The wait opens once its predicate answered: the run is told after it entered approvalWait.
      return [...verdict('approval'), { type: 'wait.opened' }];
    }
    if (runsAlone(slot.kind)) {
      claim(c, slot);
      return verdict('alone');
    }
    if (!capacity(c)) {
      slot.state = 'cleared';
      return verdict('full');
    }
    c.cursor++;
    later.push(...dispatch(c, slot));
  }
  return verdict('done');
}

function closeOpen(c: ModelContext, cls: ResultClass, includeRunning: boolean): void {
  for (const slot of c.slots) if (slot.state === 'pending' || slot.state === 'cleared' || (includeRunning && slot.state === 'dispatched')) settle(c, slot, cls);
  c.cursor = c.slots.length;
}

/** What loading a stored run restores (applied by `applyRestore` from the restore actor's output). */
function restore(c: ModelContext): void {
  const stored = profile(c).stored ?? 'none';
  if (stored === 'completed') Object.assign(c, { resumed: true, replayCompleted: true, turn: 1 });
  if (stored === 'openTurn') {
    const { turn, kinds, settled } = STORED_OPEN_TURN;
    c.slots = kinds.map((kind, i) => ({ kind, id: callId(turn, i), state: settled.includes(i) ? 'settled' : 'pending', terminate: false, counted: true }));
    Object.assign(c, { resumed: true, resumeInTurn: true, turn, reply: 'stored', toolCalls: kinds.length, tokens: REPLY_TOKENS });
  }
}

export const abstractGuards: Record<string, (args: Args) => boolean> = {
  hasConfigError: ({ context }) => profile(context).configError === true || context.restoreFailed,
  needsLoading: ({ context }) => profile(context).checkpoint === true || profile(context).session === true,
  cancelRequested: ({ context }) => context.cancel,
  replayCompleted: ({ context }) => context.replayCompleted,
  resumeInTurn: ({ context }) => context.resumeInTurn,
  // resolveToolCall hooks (the resolver profiles' main agent): a reply with calls, and a resumed open turn, go through resolving.
  resumeInTurnUnresolved: ({ context }) => context.resumeInTurn && profile(context).resolver === true,
  replyNeedsResolving: ({ context }) => profile(context).resolver === true && context.agent === 'main',
  // Turn start: the turn limit, then the token budget.
  turnLimitReached: ({ context }) => context.turn + 1 > maxTurns(context) || tokensOver(context),
  // The reply's own tokens count: over budget once it is recorded.
  replyOverBudget: ({ context }) => profile(context).maxTotalTokens !== undefined && context.tokens + REPLY_TOKENS > profile(context).maxTotalTokens!,
  noToolCalls: ({ event }) => REPLIES[(event.output as { reply: ReplyKind }).reply].length === 0,
  approvalDenied: ({ event }) => !(event.output as { approved: boolean }).approved,
  currentCallRunsAlone: ({ context }) => runsAlone(current(context).kind),
  editsInvalid: ({ event }) => (event.output as { badEdits?: boolean }).badEdits === true,
  nothingInFlight: ({ context }) => !context.slots.some((s) => s.state === 'dispatched'),
  hasCapacity: ({ context }) => capacity(context),
  atCapacity: ({ context }) => !capacity(context),
  resultsCancelRun: ({ event }) => (event.results as Array<{ cancel: boolean }>).some((r) => r.cancel),
  // Every call in flight gets its result in this event, and none cancels the run.
  lastResultsIn: ({ context, event }) => {
    const results = event.results as Array<{ index: number; cancel: boolean }>;
    return !results.some((r) => r.cancel) && context.slots.every((s, i) => s.state !== 'dispatched' || results.some((r) => r.index === i));
  },
  stopRequested: ({ context }) => context.stop !== undefined,
  // Plugins: the main agent's are set up once per run, when it is active and before its first model request.
  pluginsUnset: ({ context }) => profile(context).plugins === true && context.agent === 'main' && !context.pluginsSetUp,
  // Soft stop: the main agent's hook is asked once per turn whose reply had calls (a reply afterModelResponse stopped has no results to judge).
  stopAfterTurnUnasked: ({ context }) =>
    profile(context).stopAfterTurn === true && context.agent === 'main' && context.softStop === undefined && !context.stopped && context.reply !== undefined && context.slots.length > 0,
  spendOverBudget: ({ context }) => tokensOver(context) || callsOver(context),
  turnUnsaved: ({ context }) => profile(context).checkpoint === true && !context.turnSaved,
  durable: ({ context }) => profile(context).checkpoint === true,
  // Terminate rule: no calls, a soft stop, or every result of the batch terminates; a waiting message gives another turn.
  runFinished: ({ context }) => finishes(context),
  replyRetried: ({ context, event }) => profile(context).hooks === true && (event.output as { reply: ReplyKind }).reply === 'retryMe',
  // afterModelResponse stops at the reply 'stop-me' (the hooked profile).
  replyStops: ({ context, event }) => profile(context).hooks === true && (event.output as { reply: ReplyKind }).reply === 'stopMe',
  outputNeedsRepair: ({ context }) => outputBad(context) && !context.repairUsed,
  outputInvalid: ({ context }) => outputBad(context) && context.repairUsed,
  endChecksPending: ({ context }) => finishes(context) && (hasEndChecks(context) || context.guardPending),
  endHookContinues: ({ context, event }) => (event.output as string[]).length > 0 || context.inbox + context.steer.length + context.followUps.length > 0,
  handoffPending: ({ context }) => context.pendingHandoff !== undefined,
  noSession: ({ context }) => profile(context).session !== true,
  // Suspend rule: a durable run that parks at waits (suspendOnWait or handle.suspend()), nothing in flight, the current call's approval wait open.
  parkNow: ({ context, event }) =>
    profile(context).checkpoint === true &&
    (profile(context).suspendOnWait === true || context.suspendRequested) &&
    (context.waitOpen === true || (context.waitOpen === 'opening' && event.type === 'wait.opened')) &&
    !context.slots.some((s) => s.state === 'dispatched'),
};

const effects: Record<string, Effect> = {
  startRun: (c) => {
    c.log.push('run_started');
    if (c.resumeInTurn) c.log.push('turn_started');
  },
  recordCancel: (c) => void (c.cancel = true),
  recordCancelFromResults: (c) => void (c.cancel = true),
  failWithConfigError: (c) => void (c.failure ??= c.restoreFailed ? 'TroupeError' : 'UserError'),
  // A failed restore is reported like a bad option: run_started, then run_failed (nothing is written).
  failWithRestoreError: (c) => void (c.restoreFailed = true),
  failWithTurnLimit: (c) => void (c.failure ??= c.turn + 1 > maxTurns(c) ? 'MaxTurnsExceeded' : 'BudgetExceeded'),
  startTurn: (c) => {
    // Follow-ups are due only when the turn before would have ended the run without them.
    const followUpsDue = c.followUps.length > 0 && endsRun(c, c.inbox + c.steer.length);
    const injected = c.inbox + c.steer.length + (followUpsDue ? c.followUps.length : 0);
    Object.assign(c, { turn: c.turn + 1, slots: [], cursor: 0, reply: undefined, claimedHandoff: false, inbox: 0, steer: [], followUps: followUpsDue ? [] : c.followUps, stopped: false, softStop: undefined, turnSaved: false });
    c.log.push('turn_started', ...Array.from({ length: injected }, () => 'user_message_injected'));
    if (c.turn === 1 && !c.resumed && profile(c).inputGuarded) c.guardPending = true;
  },
  markInputChecked: (c) => void (c.guardPending = false),
  failWithGuardrail: (c) => {
    c.failure ??= 'GuardrailTripped';
    closeOpen(c, 'notRun', true);
  },
  queueSteer: (c, e) => void (e.queue === 'steer' ? c.steer : c.followUps).push(e.id as string),
  withdrawSteer: (c, e) => {
    c.steer = c.steer.filter((id) => id !== e.id);
    c.followUps = c.followUps.filter((id) => id !== e.id);
  },
  holdApproved: (c) => void (current(c).state = 'cleared'),
  // Approved without edits in the model's stimuli except approveBadEdits: nothing to apply.
  applyEdits: () => undefined,
  rejectInvalidEdits: (c) => settle(c, c.slots[c.cursor++]!, 'badEdits'),
  discardReply: (c) => {
    c.tokens += REPLY_TOKENS;
    c.log.push('text_delta', 'output_discarded');
  },
  closeStoppedCalls: (c) => closeOpen(c, 'notRun', false),
  queueRepair: (c) => {
    c.repairUsed = true;
    c.inbox++;
  },
  failWithOutputError: (c) => void (c.failure ??= 'OutputValidationError'),
  queueEndMessages: (c, e) => void (c.inbox += (e.output as string[]).length),
  failWithEndError: (c) => void (c.failure ??= 'GuardrailTripped'),
  applyPluginSetup: (c) => void (c.pluginsSetUp = true),
  failWithPluginError: (c) => void (c.failure ??= 'PluginError'),
  // Closing plugins reports no event (a close is called once, after the terminal event).
  closePlugins: () => undefined,
  recordStopAfterTurn: (c, e) => void (c.softStop = e.output === true),
  applyResolutions: () => undefined,
  failWithAfterTurnError: (c) => void (c.failure ??= 'HookError'),
  recordReply: (c, e) => {
    const reply = (e.output as { reply: ReplyKind }).reply;
    c.tokens += REPLY_TOKENS;
    c.reply = reply;
    c.slots = REPLIES[reply].map((kind, i) => ({ kind, id: callId(c.turn, i), state: 'pending', terminate: false, counted: false }));
    c.stopped = profile(c).hooks === true && reply === 'stopMe';
    if (REPLY_CONTENT[reply]) c.log.push('text_delta');
    c.log.push('message_completed');
  },
  // The model turn starts; its answer is env.reply / env.modelFail.
  requestModel: () => undefined,
  // The turn's writes are queued; the driver's store holds them, env.storeOk / env.storeFail answer.
  saveCheckpoint: () => undefined,
  markTurnSaved: (c) => void (c.turnSaved = true),
  // What loading a stored run restores (the restore actor's output).
  applyRestore: (c) => restore(c),
  // The approval wait ended (the decision is logged).
  recordDecision: (c) => void (c.waitOpen = false),
  // Parking: the suspended head is written; the driver's store holds it until env.storeOk.
  parkRun: () => undefined,
  // The executor goes with the run.
  stopToolExecutor: () => undefined,
  failWithModelError: (c) => void (c.failure ??= 'ModelError'),
  stopOverBudget: (c) => void (c.stop ??= 'BudgetExceeded'),
  stopOverSpend: (c) => void (c.stop ??= 'BudgetExceeded'),
  admitCalls: (c) => admitCalls(c),
  rejectDenied: (c) => settle(c, c.slots[c.cursor++]!, 'denied'),
  claimApproved: (c) => claim(c, current(c)),
  dispatchApproved: (c) => {
    claim(c, current(c));
    return dispatch(c, c.slots[c.cursor++]!);
  },
  dispatchAlone: (c) => dispatch(c, c.slots[c.cursor++]!),
  recordResults: (c, e) => {
    for (const r of e.results as Array<{ index: number; cls: ResultClass; terminate: boolean; budget: boolean }>) {
      const slot = c.slots[r.index]!;
      if (slot.state === 'settled') continue;
      settle(c, slot, r.cls, r.terminate);
      if (r.budget) c.stop ??= 'BudgetExceeded';
    }
  },
  closeForStop: (c) => closeOpen(c, 'notRun', false),
  closeUnfinishedCalls: (c) => closeOpen(c, 'notExecuted', true),
  endTurn: (c) => void c.log.push('turn_ended'),
  applyHandoff: (c) => {
    const kind = c.pendingHandoff;
    c.pendingHandoff = undefined;
    // A throwing inputFilter cancels the switch and stops the run with its error.
    if (kind === 'bad') return void (c.stop ??= 'Error');
    c.agent = 'other';
    c.log.push('handoff_occurred');
  },
  recordHandoff: (c, e) => void (c.pendingHandoff = e.bad ? 'bad' : 'good'),
  queueMessage: (c) => void c.inbox++,
  foldChildSpend: (c, e) => void (c.toolCalls += e.toolCalls as number),
  foldAncestorSpend: () => undefined,
  trackSubRun: () => undefined,
  untrackSubRun: () => undefined,
  cancel: (c) => {
    // The run's signal aborts: live sub-runs are cancelled before the run reports its end.
    for (const slot of c.slots) if (slot.state === 'dispatched') c.subLog.push(...(SUB_RUNS[slot.kind]?.onCancel ?? []));
    closeOpen(c, 'cancelled', true);
    c.failure = 'RunCancelled';
  },
  failWithSessionError: (c) => void (c.failure ??= 'TroupeError'),
  failWithStoreError: (c) => {
    c.failure ??= 'TroupeError';
    closeOpen(c, 'notRun', true);
  },
  requestSuspend: (c) => void (c.suspendRequested = true),
  emitSuspended: (c) => void c.log.push('run_suspended'),
  emitCompleted: (c) => {
    c.output = outputOf(c);
    c.log.push('run_completed');
  },
  emitFailed: (c) => {
    c.failure = c.failure ?? c.stop ?? 'RunCancelled';
    c.log.push(`run_failed:${c.failure}`);
  },
};

export const abstractActions: Record<string, ReturnType<typeof effect>> = Object.fromEntries(Object.entries(effects).map(([name, fn]) => [name, effect(fn)]));

