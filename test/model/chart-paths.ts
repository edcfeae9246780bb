import { createTestModel, type AdjacencyValue } from 'xstate/graph';
import { describeEvent, envEvents, initialSnapshot, modelMachine, serializeModel, stepModel, type EnvEvent, type ModelSnapshot } from './chart-model.js';

/**
 * Paths through the abstract run model (chart-model.ts), chosen with xstate/graph:
 * shortest paths to every abstract state, then for every edge that reaches something not
 * yet covered, one executable path = shortest path to its source + the edge + a fixed
 * completion to a final state. "Something" is a coverage goal:
 *   - every chart transition the edge takes (keys from chart-walk.ts);
 *   - every (chart state, env event) pair: a cancel in each waiting state, each reply kind,
 *     each profile, a tool returning during an approval wait… so each stimulus is tried in
 *     each place the runtime can meet it (the `core` set, which mutant tests run);
 *   - with `edges`, every edge of the abstract graph itself (the `full` set).
 */

/** What the model predicts for one env step of a path. */
export interface PredictedStep {
  readonly event: EnvEvent;
  /** Chart transitions of the ROOT run, in microstep order. */
  readonly transitions: readonly string[];
  /** Labels of the root run's events this step must produce, in order. */
  readonly labels: readonly string[];
  /** Terminal events of sub-runs this step must produce. */
  readonly subLabels: readonly string[];
  readonly state: ModelSnapshot;
}

export interface ChartPath {
  readonly name: string;
  readonly steps: readonly PredictedStep[];
  /** The goals this path covers (chart transition keys and abstract edges). */
  readonly goals: ReadonlySet<string>;
}

/** Goal kinds besides chart transitions: a stimulus in a chart state, a stimulus in an abstract state. */
const pairGoal = (s: ModelSnapshot, e: EnvEvent): string => `pair ${JSON.stringify(s.value)} on ${describeEvent(e)}`;
const edgeGoal = (s: ModelSnapshot, e: EnvEvent): string => `edge ${serializeModel(s)} on ${describeEvent(e)}`;
export const isChartGoal = (goal: string): boolean => !goal.startsWith('pair ') && !goal.startsWith('edge ');

/** Replays env events on the model and records what each step must do. */
export function predict(events: readonly EnvEvent[]): ChartPath {
  let state = initialSnapshot();
  const steps: PredictedStep[] = [];
  const goals = new Set<string>();
  for (const event of events) {
    const possible = event.type === 'env.launch' ? state.matches('idle') : envEvents(state).some((e) => JSON.stringify(e) === JSON.stringify(event));
    if (!possible) {
      throw new Error(`${describeEvent(event)} is not possible in ${serializeModel(state)}`);
    }
    goals.add(pairGoal(state, event)).add(edgeGoal(state, event));
    const { next, transitions } = stepModel(state, event);
    transitions.forEach((t) => goals.add(t));
    steps.push({
      event,
      transitions,
      labels: next.context.log.slice(state.context.log.length),
      subLabels: next.context.subLog.slice(state.context.subLog.length),
      state: next,
    });
    state = next;
  }
  return { name: events.map(describeEvent).join(' → '), steps, goals };
}

// Completion: let everything succeed (tool bodies return in request order, approvals are
// given, writes land, a shouldStopAfterTurn hook lets the run go on), the model answers with
// text; cancel only if nothing else is possible.
const PREFERENCE: ReadonlyArray<EnvEvent['type']> = ['env.settle', 'env.approve', 'env.storeOk', 'env.loadOk', 'env.sessionOk', 'env.goOnAfterTurn', 'env.reply', 'env.modelFail', 'env.cancel'];

function complete(from: ModelSnapshot): EnvEvent[] {
  const out: EnvEvent[] = [];
  let state = from;
  while (state.status === 'active') {
    if (out.length > 40) throw new Error(`no completion from ${serializeModel(from)}`);
    const options = envEvents(state);
    const replies = options.filter((e) => e.type === 'env.reply');
    const pick = replies.find((e) => e.type === 'env.reply' && e.reply === 'text') ?? PREFERENCE.map((t) => options.find((e) => e.type === t)).find(Boolean);
    if (!pick) throw new Error(`stuck in ${serializeModel(state)}`);
    out.push(pick);
    state = stepModel(state, pick).next;
  }
  return out;
}

export interface Generated {
  /** Abstract states and edges xstate/graph found. */
  readonly states: number;
  readonly edges: number;
  /** Every goal some edge of the graph reaches. */
  readonly reachable: ReadonlySet<string>;
  readonly paths: readonly ChartPath[];
}

export function generatePaths(options: { edges: boolean }): Generated {
  const testModel = createTestModel(modelMachine, {
    events: (s) => envEvents(s as ModelSnapshot),
    // createTestModel also offers every event the chart names (bare, without payload): only
    // the env events the test can cause in that state are real stimuli.
    filterEvents: (s, e) => envEvents(s as ModelSnapshot).some((x) => JSON.stringify(x) === JSON.stringify(e)),
    serializeState: (s) => serializeModel(s as ModelSnapshot),
  });
  const adjacency = testModel.getAdjacencyMap();
  const shortest = new Map<string, EnvEvent[]>();
  for (const path of testModel.getShortestPaths({ allowDuplicatePaths: true })) {
    shortest.set(serializeModel(path.state as ModelSnapshot), path.steps.slice(1).map((s) => s.event as EnvEvent));
  }
  const edges = (Object.entries(adjacency) as Array<[string, AdjacencyValue<ModelSnapshot, EnvEvent>]>).flatMap(([key, v]) => {
    const prefix = shortest.get(key);
    if (!prefix) throw new Error(`no shortest path to ${key}`);
    return Object.values(v.transitions).map(({ event: e }) => {
      const source = v.state;
      const goals = new Set([pairGoal(source, e), ...(options.edges ? [edgeGoal(source, e)] : []), ...stepModel(source, e).transitions]);
      return { prefix, event: e, goals };
    });
  });
  // Shortest sources first, so every goal is reached by a short path.
  edges.sort((a, b) => a.prefix.length - b.prefix.length);
  const reachable = new Set(edges.flatMap((e) => [...e.goals]));
  const covered = new Set<string>();
  const paths: ChartPath[] = [];
  for (const edge of edges) {
    if ([...edge.goals].every((g) => covered.has(g))) continue;
    const head = [...edge.prefix, edge.event];
    const path = predict([...head, ...complete(predict(head).steps.at(-1)!.state)]);
    path.goals.forEach((g) => covered.add(g));
    paths.push(path);
  }
  return { states: Object.keys(adjacency).length, edges: edges.length, reachable, paths };
}
