import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/**
 * The run chart as data (XSTATE-NOTES: walk `machine.root`, not `toJSON()`, which drops
 * `always` transitions): every state id and every transition, each with a stable key. The
 * coverage report (coverage.ts) and troupe's own model-based suite (test/model) name the
 * chart's transitions by these keys, so a state or transition added to the chart is a new
 * coverage goal without any edit elsewhere.
 */

/** One transition of the chart, as the coverage target names it. */
export interface ChartTransition {
  /** `<source id> <event or "always">#<index in that event's list> [guard] -> targets`; stable across `.provide()` copies. */
  readonly key: string;
  readonly source: string;
  /** The event type; `always` for eventless transitions. Invoke completions are `xstate.done.actor.<id>` / `xstate.error.actor.<id>`. */
  readonly event: string;
  readonly guard: string | undefined;
  readonly targets: readonly string[];
}

export interface ChartShape {
  /** Every state node id, root first (`run`, `run.idle`, …). */
  readonly states: readonly string[];
  readonly transitions: readonly ChartTransition[];
  /** Every named guard and action the chart refers to (transition actions and entry/exit). */
  readonly guards: ReadonlySet<string>;
  readonly actions: ReadonlySet<string>;
}

const nameOf = (ref: unknown): string | undefined =>
  typeof ref === 'string' ? ref : typeof ref === 'object' && ref !== null && typeof (ref as { type?: unknown }).type === 'string' ? (ref as { type: string }).type : undefined;

/**
 * The key of a transition definition of ANY copy of the chart (the real machine, a
 * `.provide()` mutant, the abstract model built from its config): the key is structural
 * (source id, event, position), so microsteps of every copy compare equal.
 */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source as AnyStateNode;
  const event = t.eventType === '' ? 'always' : t.eventType;
  const list = t.eventType === '' ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = list.indexOf(t);
  if (index < 0) throw new Error(`transition ${source.id} ${event} is not one of its source's transitions`);
  const guard = nameOf(t.guard);
  const targets = (t.target ?? []).map((s: AnyStateNode) => s.id);
  return `${source.id} ${event}#${index}${guard ? ` [${guard}]` : ''} -> ${targets.length ? targets.join(',') : '(self)'}`;
}

/** Walks the state-node tree of `machine`. */
export function walkChart(machine: AnyStateMachine): ChartShape {
  const states: string[] = [];
  const transitions: ChartTransition[] = [];
  const guards = new Set<string>();
  const actions = new Set<string>();
  const addActions = (list: readonly unknown[] | undefined): void => {
    for (const a of list ?? []) {
      const name = nameOf(a);
      if (name === undefined) throw new Error('the run chart must name its actions (an inline action cannot be modelled)');
      actions.add(name);
    }
  };
  const visit = (node: AnyStateNode): void => {
    states.push(node.id);
    addActions(node.entry);
    addActions(node.exit);
    const all: AnyTransitionDefinition[] = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of all) {
      const guard = nameOf(t.guard);
      if (t.guard !== undefined && guard === undefined) throw new Error(`${node.id}: inline guards cannot be modelled; name it in run.guards.ts`);
      if (guard) guards.add(guard);
      addActions(t.actions);
      transitions.push({
        key: transitionKey(t),
        source: node.id,
        event: t.eventType === '' ? 'always' : t.eventType,
        guard,
        targets: (t.target ?? []).map((s: AnyStateNode) => s.id),
      });
    }
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return { states, transitions, guards, actions };
}
