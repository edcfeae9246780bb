import type { RunRow } from './api.js';
import { h, ms, short } from './dom.js';
import type { RunInfo } from './store.js';

/** A run as the list shows it: the server's row, refreshed by the live feed. */
export interface ListedRun {
  readonly runId: string;
  readonly source: 'live' | 'stored';
  readonly agent: string;
  readonly input: string;
  readonly status: string;
  readonly startedAt: number;
  readonly durationMs: number | undefined;
  readonly tokens: number | undefined;
}

/**
 * Merges the server's list (live and stored runs, already filtered by the server) with the
 * feed's runs that match the same filter (fresher status), newest first.
 */
export function mergeRuns(rows: readonly RunRow[], feed: Iterable<RunInfo>, status: string, q: string, tokensOf: (run: string) => number | undefined, now: number): ListedRun[] {
  const byId = new Map<string, ListedRun>();
  for (const row of rows) {
    byId.set(row.runId, { runId: row.runId, source: row.source, agent: row.agent, input: row.input ?? '', status: row.status, startedAt: row.startedAt, durationMs: row.durationMs, tokens: row.usage?.totalTokens });
  }
  const needle = q.toLowerCase();
  for (const run of feed) {
    if (!run.agent) continue;
    const matches = (!status || status.split(',').includes(run.status)) && (!needle || [run.run, run.agent, run.input, run.output, run.error?.name, run.error?.message].some((t) => t?.toLowerCase().includes(needle)));
    if (!matches) continue;
    const known = byId.get(run.run);
    byId.set(run.run, {
      runId: run.run,
      source: 'live',
      agent: run.agent,
      input: run.input,
      status: run.status,
      startedAt: run.startedAt,
      durationMs: (run.endedAt ?? now) - run.startedAt,
      tokens: tokensOf(run.run) ?? known?.tokens,
    });
  }
  return [...byId.values()].sort((a, b) => b.startedAt - a.startedAt);
}

/**
 * The run list: status, agent, start time, duration, tokens, input. Arrow keys move the
 * selection (Home/End to the ends), Enter or Space selects the focused run.
 */
export function renderRunList(container: HTMLElement, all: readonly ListedRun[], selected: string | undefined, onSelect: (runId: string, focus: boolean) => void, limit = Infinity): void {
  // The newest `limit` rows (and the selected one); search and filter reach the others.
  const runs = all.length > limit ? all.filter((run, i) => i < limit || run.runId === selected) : all;
  if (runs.length === 0) {
    container.replaceChildren(h('li', { class: 'muted empty' }, 'No runs.'));
    return;
  }
  const focusedId = (document.activeElement as HTMLElement | null)?.dataset?.run;
  const items = runs.map((run) => {
    const li = h(
      'li',
      { class: `run ${run.status}${run.runId === selected ? ' selected' : ''}`, 'data-run': run.runId, 'data-status': run.status, 'data-source': run.source, role: 'option', 'aria-selected': String(run.runId === selected), tabindex: run.runId === selected ? 0 : -1 },
      h('span', { class: `status ${run.status}` }, run.status),
      h('span', { class: 'run-agent' }, run.agent),
      h('span', { class: 'run-meta' }, `${new Date(run.startedAt).toLocaleTimeString()} · ${run.durationMs !== undefined ? ms(run.durationMs) : '–'} · ${run.tokens !== undefined ? `${run.tokens} tokens` : '– tokens'}${run.source === 'stored' ? ' · stored' : ''}`),
      h('span', { class: 'run-id' }, run.runId),
      h('span', { class: 'run-input', title: run.input }, short(run.input, 80)),
    );
    li.addEventListener('click', () => onSelect(run.runId, false));
    return li;
  });
  if (!selected || !runs.some((r) => r.runId === selected)) items[0]!.tabIndex = 0;
  container.replaceChildren(...items);
  if (all.length > runs.length) {
    const more = h('button', { type: 'button', class: 'runs-more' }, `show all ${all.length} runs`);
    more.addEventListener('click', () => container.dispatchEvent(new CustomEvent('runs-more')));
    container.append(h('li', { class: 'muted more' }, `${all.length - runs.length} older runs not shown · `, more));
  }
  if (focusedId) container.querySelector<HTMLElement>(`li[data-run="${CSS.escape(focusedId)}"]`)?.focus();
}

/** Keyboard navigation on the list element (installed once). */
export function listKeys(container: HTMLElement, onSelect: (runId: string, focus: boolean) => void): void {
  container.addEventListener('keydown', (event) => {
    const items = [...container.querySelectorAll<HTMLElement>('li.run')];
    if (items.length === 0) return;
    const at = items.findIndex((li) => li === document.activeElement);
    let next = at;
    if (event.key === 'ArrowDown') next = Math.min(items.length - 1, at + 1);
    else if (event.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = items.length - 1;
    else if (event.key === 'Enter' || event.key === ' ') {
      if (at >= 0) onSelect(items[at]!.dataset.run!, true);
      event.preventDefault();
      return;
    } else return;
    event.preventDefault();
    const target = items[next]!;
    target.focus();
    onSelect(target.dataset.run!, true);
  });
}
