import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/**
 * Reads the run chart as data (XSTATE-NOTES: walk `machine.root`, not `toJSON()`, which
 * drops `always` transitions). Everything the model-based suite covers comes from here, so a
 * state or transition added to src/machines/run.machine.ts is a new coverage goal without
 * any edit to the tests.
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

type Config = Record<string, unknown> & { states?: Record<string, Config>; on?: Record<string, unknown>; invoke?: unknown };

/**
 * The chart's config with every invoke replaced by its completions as ordinary events
 * (`onDone` → `on['xstate.done.actor.<id>']`, `onError` → `on['xstate.error.actor.<id>']`),
 * the same keys XState itself gives them, so transition keys are identical. Invokes without
 * completions (the tool executor, which talks to the run by messages) are dropped. The
 * result has no actors: xstate/graph can traverse it once guards and actions are provided.
 */
export function invokeFreeConfig(config: Config): Config {
  const { invoke, states, on, context: _context, output: _output, ...rest } = config;
  const out: Config = { ...rest };
  const events: Record<string, unknown> = { ...((on as Record<string, unknown>) ?? {}) };
  for (const inv of (Array.isArray(invoke) ? invoke : invoke ? [invoke] : []) as Array<{ id?: string; onDone?: unknown; onError?: unknown }>) {
    if (!inv.onDone && !inv.onError) continue;
    if (!inv.id) throw new Error('give every invoke of the run chart an id: its completions are named after it');
    for (const [kind, transition] of [['done', inv.onDone], ['error', inv.onError]] as const) {
      const type = `xstate.${kind}.actor.${inv.id}`;
      if (transition === undefined) continue;
      if (type in events) throw new Error(`${type} is both an event and an invoke completion`);
      events[type] = transition;
    }
  }
  if (Object.keys(events).length) out.on = events;
  if (states) out.states = Object.fromEntries(Object.entries(states).map(([k, v]) => [k, invokeFreeConfig(v)]));
  return out;
}
