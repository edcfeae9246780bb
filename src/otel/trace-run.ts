import type { Tracer } from '@opentelemetry/api';
import { inspectionCallback, type RunOptions } from '../runtime/run-options.js';
import type { RunEvent } from '../types.js';
import { inspectRunActors } from './inspect-run-actors.js';
import { RunTracer } from './run-tracer.js';

/** A run's event sink and options with tracing attached. */
export interface TracedRun {
  /** Records each event as spans, then passes it on to the original sink (unchanged, same order). */
  readonly sink: (event: RunEvent) => void;
  /** `options` with `inspect` set to the tracer's actor observer (calling the caller's own `inspect` too). */
  readonly options: RunOptions;
}

/**
 * Attaches OpenTelemetry tracing to one run tree, as an observer only: the returned sink
 * sees every event of the tree (sub-runs share it) before the original sink, and the
 * inspection observer reads the run actors' steps. Nothing inside the run chart changes,
 * and a failing tracer never fails the run (its errors are swallowed). Called only when
 * `options.tracer` is set, so untraced runs never load `@opentelemetry/api`. The root run's
 * span is a child of the context active when this is called. Spans and attributes:
 * README "Tracing (OpenTelemetry)".
 */
export function traceRun(tracer: Tracer, sink: (event: RunEvent) => void, options: RunOptions): TracedRun {
  const runTracer = new RunTracer(tracer);
  const traced = (event: RunEvent): void => {
    try {
      runTracer.observe(event);
    } catch {
      // Tracing must never change how a run goes.
    }
    sink(event);
  };
  const watch = inspectRunActors(runTracer, traced);
  const own = inspectionCallback(options.inspect);
  const inspect = own
    ? (event: Parameters<typeof watch>[0]) => {
        watch(event);
        own(event);
      }
    : watch;
  return { sink: traced, options: { ...options, inspect } };
}
