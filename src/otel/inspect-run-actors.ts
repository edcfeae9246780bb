import type { InspectionEvent } from 'xstate';
import type { RunEvent } from '../types.js';
import { RUN_STATE, stateValueOf } from '../machines/run-states.js';
import type { ApprovalOutcomeView, ModelReplyView, RunTracer } from './run-tracer.js';

/** The parts of a run actor's input (RunInput) this observer reads. */
interface RunInputView {
  readonly runId: string;
  readonly sink: unknown;
  readonly agent?: { readonly model?: { readonly name?: unknown } };
}

type AnyEvent = { readonly type: string; readonly input?: unknown; readonly output?: unknown; readonly error?: unknown };

/**
 * An XState inspection observer that tells `tracer` the facts a run's events do not carry:
 * when a run asks its model and which model (the run's step into `turn.model`, whose context
 * names the active agent's model), each reply's own usage and finish reason (the
 * `model.replied` answer), how an approval wait ended and who decided (the `approval`
 * actor's output), and when the run waits at the barrier (its state
 * `turn.executing.barrier.waitingForInFlight`). Run actors of this tree are recognised by
 * their input carrying `sink`, the tree's own event sink, so other actors in the system are
 * ignored. Reads only; never sends, never throws (a failure of tracing is swallowed).
 */
export function inspectRunActors(tracer: RunTracer, sink: (event: RunEvent) => void): (event: InspectionEvent) => void {
  /** Run actor → its run id. */
  const runActors = new WeakMap<object, string>();
  /** Run actors whose last step ended in `turn.model`. */
  const asking = new WeakSet<object>();
  return (inspection) => {
    try {
      if (inspection.type === '@xstate.microstep') {
        const runId = runActors.get(inspection.actorRef);
        if (runId === undefined) return;
        tracer.barrierState(runId, inState(inspection.snapshot, RUN_STATE.waitingForInFlight));
        const inModel = inState(inspection.snapshot, RUN_STATE.model);
        if (inModel && !asking.has(inspection.actorRef)) tracer.modelStarted(runId, modelOf(inspection.snapshot));
        if (inModel) asking.add(inspection.actorRef);
        else asking.delete(inspection.actorRef);
        return;
      }
      if (inspection.type !== '@xstate.event') return;
      const event = inspection.event as AnyEvent;
      if (event.type === 'xstate.init') {
        const input = event.input as RunInputView | undefined;
        if (input && typeof input === 'object' && 'sink' in input && input.sink === sink) {
          runActors.set(inspection.actorRef, input.runId);
          tracer.runActorCreated(input.runId, nameOf(input.agent?.model));
        }
        return;
      }
      const runId = runActors.get(inspection.actorRef);
      if (runId === undefined) return;
      switch (event.type) {
        case 'model.replied':
          return tracer.modelReplied(runId, event.output as ModelReplyView | undefined);
        case 'model.failed':
          return tracer.modelFailed(runId, event.error);
        case 'xstate.done.actor.approval':
          return tracer.approvalDecided(runId, approvalView(event.output));
        default:
          return;
      }
    } catch {
      // Tracing must never change how a run goes.
    }
  };
}

/** An approval wait's outcome (the wait machine's WaitOutcome) as the tracer records it. */
function approvalView(output: unknown): ApprovalOutcomeView | undefined {
  const outcome = output as { ended?: string; by?: string; resolution?: { approved?: unknown; reason?: unknown } } | undefined;
  if (!outcome) return undefined;
  if (outcome.ended === 'timedOut') return { approved: false, by: 'timeout' };
  const reason = outcome.resolution?.reason;
  return { approved: outcome.resolution?.approved === true, ...(outcome.by !== undefined ? { by: outcome.by } : {}), ...(typeof reason === 'string' ? { reason } : {}) };
}

/** Whether a run actor's snapshot is in the chart state `id` (an id of RUN_STATE). */
function inState(snapshot: unknown, id: string): boolean {
  const matches = (snapshot as { matches?: (value: unknown) => boolean }).matches;
  return typeof matches === 'function' && matches.call(snapshot, stateValueOf(id));
}

/** The model of the run's active agent, as its snapshot's context holds it. */
function modelOf(snapshot: unknown): string | undefined {
  return nameOf((snapshot as { context?: { run?: { agent?: { model?: { name?: unknown } } } } }).context?.run?.agent?.model);
}

function nameOf(model: { readonly name?: unknown } | undefined): string | undefined {
  return typeof model?.name === 'string' ? model.name : undefined;
}
