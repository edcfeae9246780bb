/**
 * A coverage report (troupe/testing: `CoverageRecorder.report()`, `exploreAgent(...).coverage`)
 * laid onto the run chart's wire definition, for the inspector page: visits per state, per
 * transition and per drawn edge, and the summary line. Dependency-free: the page imports it.
 *
 * Transitions are matched by the key `chart-shape.ts` gives them (`<source> <event>#<n>
 * [guard] -> <targets>`), rebuilt here from the definition: the wire walk lists a state's
 * transitions per event in the chart's own order, so the n-th transition of an event has the
 * same index in both.
 */
import type { WireStateNode, WireTransition } from './wire.js';

/** The part of a coverage report the chart view reads (a `CoverageReport` is one). */
export interface ChartCoverageInput {
  readonly runs: number;
  readonly chart: {
    readonly states: ReadonlyArray<{ readonly id: string; readonly count: number }>;
    readonly transitions: ReadonlyArray<{ readonly id: string; readonly count: number }>;
  };
}

/** One transition of the chart with its visits. */
export interface TransitionVisits {
  readonly key: string;
  readonly count: number;
}

/** A drawn edge (`<declaring state>-><target>`, as the page keys edges) and the transitions behind it. */
export interface EdgeVisits {
  /** Times any of its transitions was taken. */
  readonly count: number;
  readonly transitions: readonly TransitionVisits[];
}

export interface CoverageOnChart {
  /** Every state id of the chart → times entered (0: never). */
  readonly states: ReadonlyMap<string, number>;
  /** Every transition key of the chart → times taken. */
  readonly transitions: ReadonlyMap<string, number>;
  /** Edge key `<state>-><target>` → visits; transitions without a target are not edges (see `targetless`). */
  readonly edges: ReadonlyMap<string, EdgeVisits>;
  /** Per state: its transitions without a target (handled in place, drawn as no edge). */
  readonly targetless: ReadonlyMap<string, readonly TransitionVisits[]>;
  readonly summary: {
    readonly runs: number;
    readonly states: number;
    readonly statesVisited: number;
    readonly transitions: number;
    readonly transitionsTaken: number;
  };
  /** Ids of the report this chart does not have (a report from another troupe version). */
  readonly unmatched: { readonly states: readonly string[]; readonly transitions: readonly string[] };
}

/** The coverage keys of `node`'s transitions, in the order of `node.transitions`. */
export function wireTransitionKeys(node: WireStateNode): string[] {
  const seen = new Map<string, number>();
  return node.transitions.map((t: WireTransition) => {
    const event = t.event === '' ? 'always' : t.event;
    const index = seen.get(event) ?? 0;
    seen.set(event, index + 1);
    return `${node.id} ${event}#${index}${t.guard ? ` [${t.guard}]` : ''} -> ${t.targets.length ? t.targets.join(',') : '(self)'}`;
  });
}

/** Lays `report` onto the chart `root`: what the page marks and counts. Never throws on ids it does not know; it lists them. */
export function coverageOnChart(root: WireStateNode, report: ChartCoverageInput): CoverageOnChart {
  const stateCounts = new Map(report.chart.states.map((s) => [s.id, s.count]));
  const transitionCounts = new Map(report.chart.transitions.map((t) => [t.id, t.count]));
  const states = new Map<string, number>();
  const transitions = new Map<string, number>();
  const edges = new Map<string, { count: number; transitions: TransitionVisits[] }>();
  const targetless = new Map<string, TransitionVisits[]>();
  const visit = (node: WireStateNode): void => {
    states.set(node.id, stateCounts.get(node.id) ?? 0);
    const keys = wireTransitionKeys(node);
    node.transitions.forEach((t, i) => {
      const visits = { key: keys[i]!, count: transitionCounts.get(keys[i]!) ?? 0 };
      transitions.set(visits.key, visits.count);
      if (t.targets.length === 0) {
        targetless.set(node.id, [...(targetless.get(node.id) ?? []), visits]);
        return;
      }
      for (const target of t.targets) {
        const edgeKey = `${node.id}->${target}`;
        const edge = edges.get(edgeKey) ?? { count: 0, transitions: [] };
        edge.count += visits.count;
        edge.transitions.push(visits);
        edges.set(edgeKey, edge);
      }
    });
    for (const child of node.states) visit(child);
  };
  visit(root);
  const positive = (counts: ReadonlyMap<string, number>): number => [...counts.values()].filter((n) => n > 0).length;
  return {
    states,
    transitions,
    edges,
    targetless,
    summary: { runs: report.runs, states: states.size, statesVisited: positive(states), transitions: transitions.size, transitionsTaken: positive(transitions) },
    unmatched: { states: [...stateCounts.keys()].filter((id) => !states.has(id)), transitions: [...transitionCounts.keys()].filter((id) => !transitions.has(id)) },
  };
}

/** The summary line the page shows above the chart. */
export function coverageSummary(view: CoverageOnChart): string {
  const { runs, states, statesVisited, transitions, transitionsTaken } = view.summary;
  const line = `coverage of ${runs} run${runs === 1 ? '' : 's'}: ${statesVisited} of ${states} states visited, ${transitionsTaken} of ${transitions} transitions taken`;
  const { states: s, transitions: t } = view.unmatched;
  if (s.length + t.length === 0) return line;
  return `${line} (the report names ${s.length} state${s.length === 1 ? '' : 's'} and ${t.length} transition${t.length === 1 ? '' : 's'} this chart does not have: it was made with another version of troupe)`;
}
