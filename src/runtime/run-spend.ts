import type { AnyActorRef } from 'xstate';
import type { ModelReply } from '../actors/model-turn.js';
import type { BudgetExceeded } from '../errors.js';
import type { AncestorBudget } from '../rules/budget.js';
import { replyViolation } from '../rules/limits.js';
import { addUsage, type Usage } from '../types.js';
import type { RunState } from './run-state.js';
import type { StoredRunStatus } from '../store/checkpoint-store.js';

/** What a run spent, reported up the tree (`child.spend`) and down to live sub-runs (`ancestor.spend`). */
export interface Spend {
  readonly usage: Partial<Usage>;
  readonly toolCalls: number;
}

/** A sub-run reports what it spent to its parent run. */
export interface ChildSpendEvent {
  readonly type: 'child.spend';
  readonly runId: string;
  readonly spend: Spend;
}

/** A run tells its live sub-runs that `origin` (it, or one of its ancestors) spent more. */
export interface AncestorSpendEvent {
  readonly type: 'ancestor.spend';
  readonly origin: string;
  readonly spend: Spend;
}

/** A sub-run announces itself to its parent run (so it is told about spend elsewhere), and its end. */
export type SubRunLifecycleEvent = { readonly type: 'child.started'; readonly runId: string; readonly ref: AnyActorRef } | { readonly type: 'child.ended'; readonly runId: string; readonly status: StoredRunStatus };

function addTo(target: AncestorBudget, spend: Spend): void {
  addUsage(target.usage, spend.usage);
  target.toolCalls += spend.toolCalls;
}

/** This run spent `spend` itself: it counts here, in the view of every ancestor, up the tree and for live sub-runs. */
export function spendOwn(state: RunState, spend: Spend): void {
  addUsage(state.usage, spend.usage);
  state.toolCallCount += spend.toolCalls;
  spendOwnAbove(state, spend);
}

/**
 * This run's model reply spent `usage` in `requests` requests (the reply's own `requests` field,
 * if the model reported one, is replaced by that count): `spendOwn` of that usage, without
 * building the spend when nobody above or below the run hears of it (a root run without sub-runs).
 */
export function spendOnReply(state: RunState, usage: Partial<Usage>, requests: number): void {
  if (state.ancestors.length > 0 || state.parentRef || state.subRuns?.size) {
    spendOwn(state, { usage: { ...usage, requests }, toolCalls: 0 });
    return;
  }
  const into = state.usage;
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  into.inputTokens += input;
  into.outputTokens += output;
  into.totalTokens += usage.totalTokens ?? input + output;
  into.requests += requests;
}

/** Preflight counts one tool call: the cheap form of `spendOwn` for the per-call path. */
export function countToolCall(state: RunState): void {
  state.toolCallCount++;
  if (state.ancestors.length === 0 && !state.subRuns?.size) return;
  spendOwnAbove(state, { usage: {}, toolCalls: 1 });
}

function spendOwnAbove(state: RunState, spend: Spend): void {
  for (const ancestor of state.ancestors) addTo(ancestor, spend);
  reportUp(state, spend);
  tellSubRuns(state, state.runId, spend, undefined);
}

/** A sub-run's spend counts as ours and our ancestors'; the other live sub-runs are told. */
export function foldChildSpend(state: RunState, event: ChildSpendEvent): void {
  addUsage(state.usage, event.spend.usage);
  state.toolCallCount += event.spend.toolCalls;
  for (const ancestor of state.ancestors) addTo(ancestor, event.spend);
  reportUp(state, event.spend);
  tellSubRuns(state, state.runId, event.spend, event.runId);
}

/** An ancestor (or a branch under it) spent: update our view of it and of everyone above it, and pass it down. */
export function foldAncestorSpend(state: RunState, event: AncestorSpendEvent): void {
  const from = state.ancestors.findIndex((a) => a.runId === event.origin);
  if (from < 0) return;
  for (let i = from; i < state.ancestors.length; i++) addTo(state.ancestors[i]!, event.spend);
  tellSubRuns(state, event.origin, event.spend, undefined);
}

function reportUp(state: RunState, spend: Spend): void {
  const parent = state.parentRef;
  if (parent && parent.getSnapshot().status === 'active') parent.send({ type: 'child.spend', runId: state.runId, spend } satisfies ChildSpendEvent);
}

function tellSubRuns(state: RunState, origin: string, spend: Spend, except: string | undefined): void {
  if (!state.subRuns?.size) return;
  for (const [runId, ref] of state.subRuns) {
    if (runId !== except && ref.getSnapshot().status === 'active') ref.send({ type: 'ancestor.spend', origin, spend } satisfies AncestorSpendEvent);
  }
}

/**
 * The budget a model reply would exhaust once it is recorded (pure; the `replyOverBudget`
 * guard): `replyViolation` of the run and its ancestors with the reply's usage added, as
 * `recordReply` adds it. Undefined without a budget here or above.
 */
export function replyViolationAfter(state: RunState, reply: ModelReply, now: number): BudgetExceeded | undefined {
  if (state.budget === undefined && state.ancestors.length === 0) return undefined;
  const spent: Partial<Usage> = { ...reply.usage, requests: 1 + (reply.extraRequests ?? 0) };
  const usage = { ...state.usage };
  addUsage(usage, spent);
  const ancestors = state.ancestors.map((a) => {
    const view = { ...a, usage: { ...a.usage } };
    addUsage(view.usage, spent);
    return view;
  });
  return replyViolation({ ...state, usage, ancestors }, now);
}
