export { transitionKey, walkChart, type ChartShape, type ChartTransition } from '../../src/testing/chart-shape.js';

/**
 * The model-based suite reads the chart through src/testing/chart-shape.ts (also the coverage
 * report's source, for users' tests); the invoke-free copy below is the suite's own.
 */

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
