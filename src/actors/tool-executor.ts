import type { ActorLogic, AnyActorRef, EventObject, Snapshot } from 'xstate';
import { inNextMicrotask } from '../runtime/microtask.js';
import type { CallJob, CallOutcome } from './call-pipeline.js';
import { createToolCallActor } from './tool-call.js';

/** One call's single outcome, addressed by the call's unique key. */
export interface SettledCallResult {
  readonly key: string;
  readonly outcome: CallOutcome;
}

/** Sent to the run actor with every outcome that arrived since the last one (completion order). */
export interface ToolsSettledEvent {
  readonly type: 'tools.settled';
  readonly results: readonly SettledCallResult[];
}

export type ExecutorSnapshot = Snapshot<undefined> & {
  readonly context: Record<string, never>;
  readonly children: Map<string, AnyActorRef>;
  /** Outcomes not yet handed to the run. */
  queue: SettledCallResult[];
};

export type ExecutorEvent =
  /** Every call one preflight pass cleared, in request order: one message per pass, not per call. */
  | { type: 'dispatch'; jobs: readonly CallJob[] }
  | { type: 'xstate.stop' }
  /** Hands the queued outcomes to the run (sent to itself once per microtask with completions). */
  | { type: 'flush' }
  | { type: `xstate.done.actor.${string}`; output: CallOutcome; actorId: string };

/**
 * Hosts the tool-call actors of one run, each spawned with its call's unique key as id.
 * Completions are handled by this plain transition function and handed to the run actor
 * as `tools.settled` messages, batched per microtask: the run records each result (it owns
 * the results and the count of calls in flight) without one statechart macrostep per call.
 */
export const toolExecutorLogic: ActorLogic<ExecutorSnapshot, ExecutorEvent, undefined, any, EventObject> = {
  config: 'troupe.toolExecutor',
  transition(snapshot, event, scope) {
    if (event.type === 'dispatch') {
      for (const job of event.jobs) {
        const child = createToolCallActor(job, scope.self as AnyActorRef);
        snapshot.children.set(job.ctx.key, child);
        child.start();
      }
      return snapshot;
    }
    if (event.type === 'xstate.stop') {
      for (const child of snapshot.children.values()) scope.stopChild(child);
      snapshot.children.clear();
      return { ...snapshot, status: 'stopped', output: undefined, error: undefined };
    }
    if (event.type.startsWith('xstate.done.actor.')) {
      const done = event as { actorId: string; output: CallOutcome };
      if (!snapshot.children.delete(done.actorId)) return snapshot;
      snapshot.queue.push({ key: done.actorId, outcome: done.output });
      // The last running call: hand everything over now. Otherwise wait for the rest of this
      // microtask's completions, so a wide batch costs the run one message, not one per call.
      if (snapshot.children.size === 0) handOver(scope.self as AnyActorRef, snapshot);
      else if (snapshot.queue.length === 1) {
        const self = scope.self as AnyActorRef;
        inNextMicrotask(() => {
          if (self.getSnapshot().status === 'active') self.send({ type: 'flush' });
        });
      }
      return snapshot;
    }
    if (event.type === 'flush') handOver(scope.self as AnyActorRef, snapshot);
    return snapshot;
  },
  getInitialSnapshot() {
    return { status: 'active', output: undefined, error: undefined, context: {}, children: new Map(), queue: [] };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: undefined, error: undefined, context: {} } as Snapshot<unknown>;
  },
};

/** Sends the queued outcomes to the run (in completion order) and empties the queue. */
function handOver(self: AnyActorRef, snapshot: ExecutorSnapshot): void {
  if (snapshot.queue.length === 0) return;
  const results = snapshot.queue;
  snapshot.queue = [];
  // A cancelled run may already have ended; it no longer listens.
  const run = self._parent;
  if (run?.getSnapshot().status === 'active') run.send({ type: 'tools.settled', results } satisfies ToolsSettledEvent);
}
