import type { CompactedRequest } from '../actors/model-turn.js';
import type { ModelRequest } from '../models/model.js';
import { ContextView } from '../context/context-view.js';
import type { StepReport } from '../context/compact-step.js';
import { estimateOverhead } from '../context/estimate.js';
import { activePolicy, resolvePolicy, type ContextPolicy, type ResolvedPolicy } from '../context/policy.js';
import { writeSummary } from '../context/summarize.js';
import type { ContextCompactedEvent, Message } from '../types.js';
import type { RunState } from './run-state.js';


const resolved = new WeakMap<ContextPolicy, ResolvedPolicy>();
/** Each run's view, made at its first request (a new one when a handoff brings another policy). */
const views = new WeakMap<RunState, ContextView>();

function resolvedOf(policy: ContextPolicy): ResolvedPolicy {
  let out = resolved.get(policy);
  if (!out) {
    out = resolvePolicy(policy);
    resolved.set(policy, out);
  }
  return out;
}

function viewFor(state: RunState, policy: ResolvedPolicy): ContextView {
  const known = views.get(state);
  if (known && known.policy === policy) return known;
  const view = new ContextView(policy, (previous, segment, signal) =>
    writeSummary(policy.summarize?.model ?? state.agent.model, { runId: state.runId, agent: state.agent.name, instructions: policy.summarize?.instructions ?? '' }, previous, segment, signal),
  );
  views.set(state, view);
  return view;
}

/**
 * The model turn's `compact` step for a run with a contextPolicy (undefined without one):
 * builds the view of the request's messages and announces a compaction as
 * `context_compacted`. Reads the run's state; changes nothing of it.
 */
export function contextCompactor(state: RunState): ((request: Omit<ModelRequest, 'signal'>, reason: 'threshold' | 'overflow', signal: AbortSignal) => Promise<CompactedRequest>) | undefined {
  const policy = activePolicy(state);
  if (!policy) return undefined;
  return async (request, reason, signal) => {
    const built = await viewFor(state, resolvedOf(policy)).build(request.messages, estimateOverhead(request.system, request.tools), reason, signal);
    if (built.report) state.sink(compactedEvent(state, reason, built.report, request.messages));
    return { request: { ...request, messages: built.messages }, usage: built.usage, requests: built.requests, shrunk: built.shrunk };
  };
}

function compactedEvent(state: RunState, reason: 'threshold' | 'overflow', report: StepReport, messages: readonly Message[]): ContextCompactedEvent {
  const callIds = (indices: readonly number[]): string[] => indices.flatMap((i) => {
    const m = messages[i]!;
    return m.role === 'tool' ? [m.callId] : [];
  });
  return {
    type: 'context_compacted',
    runId: state.runId,
    path: state.path,
    agent: state.agent.name,
    turn: state.turn,
    reason,
    stages: report.stages,
    offloaded: callIds(report.offloaded),
    cleared: callIds(report.cleared),
    summarized: callIds(report.summarized),
    summarizedMessages: report.summarized.length,
    tokensBefore: report.tokensBefore,
    tokensAfter: report.tokensAfter,
  };
}
