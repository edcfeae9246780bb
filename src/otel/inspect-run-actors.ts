import type { InspectionEvent } from 'xstate';
import type { RunEvent } from '../types.js';
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
 * the model each request goes to (the `model.request` the run sends its model caller), each
 * reply's own usage and finish reason (the `model.replied` answer), how an approval wait ended and who decided (the `approval`
 * actor's output), and when the run waits at the barrier (its state
 * `turn.executing.barrier.waitingForInFlight`). Run actors of this tree are recognised by
 * their input carrying `sink`, the tree's own event sink, so other actors in the system are
 * ignored. Reads only; never sends, never throws (a failure of tracing is swallowed).
 */
export function inspectRunActors(tracer: RunTracer, sink: (event: RunEvent) => void): (event: InspectionEvent) => void {
  /** Run actor → its run id. */
  const runActors = new WeakMap<object, string>();
  return (inspection) => {
    try {
      if (inspection.type === '@xstate.microstep') {
        const runId = runActors.get(inspection.actorRef);
        if (runId !== undefined) tracer.barrierState(runId, waitsAtBarrier(inspection.snapshot));
        return;
      }
      if (inspection.type !== '@xstate.event') return;
      const event = inspection.event as AnyEvent;
      if (event.type === 'xstate.init') {
        const input = event.input as RunInputView | { readonly model?: { readonly name?: unknown } } | undefined;
        if (input && 'sink' in input && input.sink === sink) {
          runActors.set(inspection.actorRef, input.runId);
          tracer.runActorCreated(input.runId, nameOf(input.agent?.model));
          return;
        }
        return;
      }
      if (event.type === 'model.request') {
        const parentRun = inspection.sourceRef ? runActors.get(inspection.sourceRef) : undefined;
        const model = (event as { model?: unknown }).model;
        if (parentRun !== undefined) tracer.modelStarted(parentRun, typeof model === 'string' ? model : undefined);
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
          return tracer.approvalDecided(runId, event.output as ApprovalOutcomeView | undefined);
        default:
          return;
      }
    } catch {
      // Tracing must never change how a run goes.
    }
  };
}

/** Whether a run actor's snapshot is in `turn.executing.barrier.waitingForInFlight`. */
function waitsAtBarrier(snapshot: unknown): boolean {
  const value = (snapshot as { value?: unknown }).value as { turn?: { executing?: { barrier?: unknown } } } | string | undefined;
  return typeof value === 'object' && typeof value.turn === 'object' && typeof value.turn.executing === 'object' && value.turn.executing.barrier === 'waitingForInFlight';
}

function nameOf(model: { readonly name?: unknown } | undefined): string | undefined {
  return typeof model?.name === 'string' ? model.name : undefined;
}
