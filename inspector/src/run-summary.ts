import { budgetLeft, type BudgetLimits, type TokenCounts, type UsageSummary } from '../../src/inspect/usage.js';
import type { WireError, WireRunEvent } from '../../src/inspect/wire.js';
import { h, ms } from './dom.js';

/** What the run header shows, from the feed (live) or the stored log. */
export interface RunFacts {
  readonly runId: string;
  readonly agent: string;
  readonly status: string;
  readonly source: 'live' | 'stored';
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly output: string | undefined;
  readonly error: WireError | undefined;
  /** Where the error happened, when known: run, agent path, turn, the state or call it came from. */
  readonly where: string | undefined;
}

/**
 * Where a run failed, from its events: the failing run (root or sub-run), its agent path and
 * turn, and what it was doing (the last tool call that failed or the state it was in).
 */
export function failurePlace(events: readonly WireRunEvent[]): string | undefined {
  const failed = [...events].reverse().find((e) => e.type === 'run_failed' && e.path.length === 1) ?? [...events].reverse().find((e) => e.type === 'run_failed');
  if (!failed) return undefined;
  const deepest = events.find((e) => e.type === 'run_failed');
  const origin = deepest ?? failed;
  const index = events.indexOf(origin);
  const before = events.slice(0, index).reverse().find((e) => e.runId === origin.runId && e.type !== 'turn_ended');
  const lastFailure = events.slice(0, index).reverse().find((e) => e.type === 'tool_call_failed' || (e.type === 'tool_call_completed' && e.isError === true));
  const turn = typeof origin.turns === 'number' ? `turn ${origin.turns}` : undefined;
  const doing = lastFailure
    ? `after ${(lastFailure.call as { name?: string })?.name ?? 'a tool'} ${(lastFailure.call as { id?: string })?.id ?? ''} failed`.trim()
    : before
      ? `after ${before.type}`
      : undefined;
  return [`${origin.path.join(' › ')} (run ${origin.runId})`, turn, doing].filter(Boolean).join(', ');
}

export function renderRunHead(container: HTMLElement, facts: RunFacts, now: number, actions: { cancel: () => void; resume: () => void }): void {
  const duration = (facts.endedAt ?? (facts.status === 'running' ? now : facts.startedAt)) - facts.startedAt;
  const cancel = h('button', { type: 'button', id: 'cancel-run', class: 'danger', ...(facts.status === 'running' && facts.source === 'live' ? {} : { disabled: true }) }, 'Cancel');
  cancel.addEventListener('click', actions.cancel);
  const resumable = facts.status !== 'completed' && !(facts.source === 'live' && facts.status === 'running');
  const resume = h('button', { type: 'button', id: 'resume-run', ...(resumable ? {} : { disabled: true }) }, 'Resume');
  resume.addEventListener('click', actions.resume);
  const banner = facts.error
    ? h(
        'div',
        { id: 'error-banner', class: `error-banner ${facts.status}`, role: 'alert' },
        h('strong', { class: 'error-class' }, facts.error.name),
        facts.error.code ? h('span', { class: 'error-code' }, ` ${facts.error.code}`) : undefined,
        h('div', { class: 'error-message' }, facts.error.message),
        facts.where ? h('div', { class: 'error-where' }, `where: ${facts.where}`) : undefined,
      )
    : undefined;
  container.replaceChildren(
    h(
      'div',
      { class: 'run-title' },
      h('span', { class: `status ${facts.status}`, id: 'run-state' }, facts.status),
      h('strong', {}, facts.agent),
      h('code', { class: 'run-id' }, facts.runId),
      h('span', { class: 'muted' }, `${facts.source === 'stored' ? 'stored · ' : ''}started ${new Date(facts.startedAt).toLocaleTimeString()} · ${ms(Math.max(0, duration))}`),
      h('span', { class: 'run-buttons' }, cancel, resume),
    ),
    ...(banner ? [banner] : []),
    ...(facts.output !== undefined ? [h('div', { class: 'final-output', id: 'final-output' }, h('span', { class: 't-key' }, 'output'), h('div', { class: 't-text' }, facts.output))] : []),
  );
}

const fmt = (c: TokenCounts): string => `${c.inputTokens} in · ${c.outputTokens} out · ${c.totalTokens} total`;

/** Tokens per turn, per run and per agent, the totals, and the budget left. */
export function renderUsage(container: HTMLElement, usage: UsageSummary, budget: BudgetLimits | undefined, elapsedMs: number, reported: TokenCounts | undefined): void {
  const rows = usage.turns.map((t) =>
    h('tr', { 'data-run-id': t.runId, 'data-turn': t.turn }, h('td', {}, t.runId.includes('/') ? `↳ ${t.runId.slice(t.runId.indexOf('/'))}` : 'run'), h('td', {}, t.agent), h('td', {}, String(t.turn)), h('td', { class: 'num' }, String(t.inputTokens)), h('td', { class: 'num' }, String(t.outputTokens)), h('td', { class: 'num' }, String(t.totalTokens))),
  );
  const agents = [...usage.byAgent].map(([agent, c]) => h('li', { 'data-agent': agent }, h('strong', {}, agent), ` ${fmt(c)} (${c.requests} request${c.requests === 1 ? '' : 's'})`));
  const runs = [...usage.byRun].map(([runId, c]) => h('li', { 'data-run-id': runId }, h('code', {}, runId), ` ${fmt(c)}`));
  const lines = budgetLeft(budget, usage.total, usage.toolCalls, elapsedMs);
  container.replaceChildren(
    h('div', { class: 'usage-total', id: 'usage-total' }, h('strong', {}, `${usage.total.totalTokens} tokens`), ` (${usage.total.inputTokens} in, ${usage.total.outputTokens} out) in ${plural(usage.total.requests, 'model request')}, ${plural(usage.toolCalls, 'tool call')}`, reported ? h('span', { class: 'muted' }, ` · run reported ${fmt(reported)}`) : undefined),
    lines.length > 0
      ? h('ul', { class: 'budget', id: 'budget' }, ...lines.map((l) => h('li', { 'data-field': l.field, class: l.left === 0 ? 'spent' : '' }, `${l.field}: ${l.used} of ${l.limit} used, ${l.left} left`)))
      : h('div', { class: 'muted' }, 'No budget set for this run.'),
    h('details', { class: 'usage-detail' }, h('summary', {}, 'per turn, run and agent'),
      h('table', { class: 'usage-table' }, h('thead', {}, h('tr', {}, ...['run', 'agent', 'turn', 'input', 'output', 'total'].map((c) => h('th', {}, c)))), h('tbody', {}, ...rows)),
      h('ul', { class: 'usage-agents' }, ...agents),
      h('ul', { class: 'usage-runs' }, ...runs),
    ),
  );
}

/** '1 tool call', '2 tool calls'. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
