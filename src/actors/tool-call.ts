import { createActor, type ActorLogic, type AnyActorRef, type EventObject, type Snapshot } from 'xstate';
import { executeCall, type CallJob, type CallOutcome } from './call-pipeline.js';

export type ToolCallSnapshot = Snapshot<CallOutcome> & {
  /** Small, serialisable view for inspectors; the job itself stays out of persisted snapshots. */
  readonly context: { readonly callId: string; readonly tool: string };
  readonly job: CallJob | undefined;
};

type ToolCallEvent = { type: 'settled'; outcome: CallOutcome } | { type: 'xstate.stop' };

/**
 * One tool call = one actor. Hand-written logic instead of `fromPromise` so the per-call
 * path stays small: start runs the pipeline, the outcome arrives as one `settled` event,
 * and the done snapshot is relayed to the parent executor by XState itself.
 */
export const toolCallLogic: ActorLogic<ToolCallSnapshot, ToolCallEvent, CallJob | undefined, any, EventObject> = {
  config: 'troupe.toolCall',
  transition(snapshot, event) {
    if (snapshot.status !== 'active') return snapshot;
    if (event.type === 'settled') {
      return { status: 'done', output: event.outcome, error: undefined, context: snapshot.context, job: undefined };
    }
    if (event.type === 'xstate.stop') {
      return { status: 'stopped', output: undefined, error: undefined, context: snapshot.context, job: undefined };
    }
    return snapshot;
  },
  start(snapshot, { self }) {
    const job = snapshot.job!;
    const ref = self as AnyActorRef;
    job.ctx.actor = ref;
    // Tool code starts after the current statechart step: it never runs inside a run's action.
    void Promise.resolve(job).then(executeCall).then((outcome) => {
      // A call stopped by a cancelled run may still settle later; its result is no longer wanted.
      if (ref.getSnapshot().status === 'active') ref.send({ type: 'settled', outcome });
    });
  },
  getInitialSnapshot(_scope, input) {
    const job = input ?? jobBeingSpawned!;
    return { status: 'active', output: undefined, error: undefined, context: { callId: job.ctx.callId, tool: job.tool.name }, job };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: snapshot.output, error: undefined, context: snapshot.context } as Snapshot<unknown>;
  },
};

/**
 * The job handed to the actor being constructed. XState builds actor options with
 * `{ ...defaults, ...options }`, and on Node 20 every key in the second spread costs about
 * 0.8 µs (a V8 slow path, measured in bench/). Passing the job beside the options instead
 * of as `input` saves that on every call; the hand-over is synchronous, so it cannot leak
 * into another actor.
 */
let jobBeingSpawned: CallJob | undefined;

/** Creates (not starts) the actor for one call, as a child of `parent`, with id = call id. */
export function createToolCallActor(job: CallJob, parent: AnyActorRef): AnyActorRef {
  jobBeingSpawned = job;
  try {
    return createActor(toolCallLogic, { id: job.ctx.callId, parent }) as unknown as AnyActorRef;
  } finally {
    jobBeingSpawned = undefined;
  }
}
