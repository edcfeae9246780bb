import { statesFromEvents } from '../../src/inspect/event-state.js';
import type { ReplayState } from '../../src/inspect/replay.js';
import type { TranscriptTree } from '../../src/inspect/transcript.js';
import type { WireRunEvent } from '../../src/inspect/wire.js';
import type { ChartView } from './chart-panel.js';
import { h } from './dom.js';
import type { Store } from './store.js';

/** Fills the run picker (root run and sub-runs) and returns the run whose chart is shown. */
export function pickMachine(select: HTMLSelectElement, runIds: readonly string[], wanted: string | undefined, root: string): string {
  const options = runIds.join(',');
  if (select.dataset.options !== options) {
    select.dataset.options = options;
    select.replaceChildren(...runIds.map((id) => h('option', { value: id }, id)));
  }
  const target = wanted && runIds.includes(wanted) ? wanted : root;
  select.value = target;
  return target;
}

/**
 * What the chart shows for run `target` of root run `run`, best source first: the replay
 * step being looked at, live XState inspection, the run's events, the end of its stored log.
 */
export function chartSource(store: Store, run: string, target: string, events: readonly WireRunEvent[], replay: ReplayState | undefined, replaying: boolean): ChartView | undefined {
  const definition = store.runDefinition();
  const leafOf = (active: readonly string[]): string => (active.at(-1) ?? '').replace(/^run\./, '');
  if (replaying && replay && definition) return { definition, active: replay.active, transitions: [], finished: false, source: 'replay', label: `replay step ${replay.step}: ${leafOf(replay.active)}`, runId: target };
  const actor = store.runActors(run).find((a) => a.runId === target);
  if (actor?.definitionId && store.definitions.has(actor.definitionId)) {
    return { definition: store.definitions.get(actor.definitionId)!, active: actor.active, transitions: actor.lastTransitions, finished: actor.status !== 'active', source: 'inspected', label: `${target}: ${leafOf(actor.active)} (${actor.status})`, runId: target };
  }
  if (!definition) return undefined;
  const derived = statesFromEvents(events).get(target);
  if (derived) return { definition, active: derived, transitions: [], finished: /\.(completed|failed|cancelled)$/.test(derived.at(-1)!), source: 'events', label: `${target}: ${leafOf(derived)} (from events)`, runId: target };
  if (replay) return { definition, active: replay.active, transitions: [], finished: true, source: 'replay', label: `${target}: ${leafOf(replay.active)} (from the stored log)`, runId: target };
  return undefined;
}

/**
 * The agents to highlight: the one at the replay step when replaying; else the current agent
 * of every run of the tree still running, or, when none is, the agent the root ended with.
 */
export function activeAgentsOf(tree: TranscriptTree | undefined, replayAgent: string | undefined): Set<string> {
  const active = new Set<string>();
  if (replayAgent) return active.add(replayAgent);
  if (!tree) return active;
  for (const r of tree.runs.values()) if (r.status === 'running') active.add(currentAgent(r.items, r.agent));
  if (active.size === 0 && tree.root) active.add(currentAgent(tree.root.items, tree.root.agent));
  return active;
}

/** The agent a run is on now: the last handoff's target or the last reply's agent. */
function currentAgent(items: ReadonlyArray<{ kind: string; agent?: string; to?: string }>, fallback: string): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === 'handoff' && item.to) return item.to;
    if (item.kind === 'assistant' && item.agent) return item.agent;
  }
  return fallback;
}
