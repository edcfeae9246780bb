import { createActor, type ActorLogic, type AnyActorRef, type EventObject, type Snapshot } from 'xstate';
import { inNextMicrotask } from '../runtime/microtask.js';
import type { CallJob, CallOutcome } from './call-pipeline.js';
import { createToolCallActor } from './tool-call.js';

/** One call's single outcome, addressed by the call's unique key. */
export interface SettledCallResult {
  readonly key: string;
  readonly outcome: CallOutcome;
}

/** The executor hands the run every call outcome that arrived since its last hand-over, in completion order. */
export interface ToolsSettledEvent {
  readonly type: 'tools.settled';
  readonly results: readonly SettledCallResult[];
}

export type ExecutorSnapshot = Snapshot<undefined> & {
  readonly context: Record<string, never>;
  /** The call actors not settled yet, by call key (stopped with the executor). */
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
 * Hosts the tool-call actors of one run, each a child with its call's unique key as id.
 * `dispatch` creates them and defers their start to after this transition (as XState starts a
 * spawned child), so a call's work begins in its own actor's `start`. Completions are recorded
 * here and handed to the run actor as `tools.settled` messages, batched per microtask: the run
 * records each result (it owns the results and the count of calls in flight) without one
 * statechart macrostep per call.
 */
export const toolExecutorLogic: ActorLogic<ExecutorSnapshot, ExecutorEvent, undefined, any, EventObject> = {
  config: 'troupe.toolExecutor',
  transition(snapshot, event, scope) {
    if (snapshot.status !== 'active') return snapshot;
    if (event.type === 'dispatch') {
      const self = scope.self as AnyActorRef;
      for (const job of event.jobs) {
        const child = createToolCallActor(job, self);
        snapshot.children.set(job.ctx.key, child);
        scope.defer(() => child.start());
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
      // No other call of this executor is running: nothing more can arrive, hand over now.
      if (snapshot.children.size === 0) return handOver(snapshot, scope.self as AnyActorRef, scope.defer);
      // Otherwise the first outcome of this microtask schedules the hand-over: a wide batch costs the run one message, not one per call.
      if (snapshot.queue.length === 1) {
        const self = scope.self as AnyActorRef;
        scope.defer(() =>
          inNextMicrotask(() => {
            if (self.getSnapshot().status === 'active') self.send({ type: 'flush' });
          }),
        );
      }
      return snapshot;
    }
    if (event.type === 'flush') return handOver(snapshot, scope.self as AnyActorRef, scope.defer);
    return snapshot;
  },
  getInitialSnapshot() {
    return { status: 'active', output: undefined, error: undefined, context: {}, children: new Map(), queue: [] };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: undefined, error: undefined, context: {} } as Snapshot<unknown>;
  },
};

/** Sends the queued outcomes to the run (in completion order) after this transition, and empties the queue. */
function handOver(snapshot: ExecutorSnapshot, self: AnyActorRef, defer: (fn: () => void) => void): ExecutorSnapshot {
  if (snapshot.queue.length === 0) return snapshot;
  const results = snapshot.queue;
  snapshot.queue = [];
  // A cancelled run may already have ended; it no longer listens.
  const run = self._parent;
  defer(() => {
    if (run?.getSnapshot().status === 'active') run.send({ type: 'tools.settled', results } satisfies ToolsSettledEvent);
  });
  return snapshot;
}

/** The executor of a run, created with its first call (a run without calls never needs one) and started. */
export function startToolExecutor(run: AnyActorRef): AnyActorRef {
  const executor = createActor(toolExecutorLogic, { id: 'tools', parent: run }) as unknown as AnyActorRef;
  executor.start();
  return executor;
}

/** Hands cleared calls to the run's executor (one message per preflight pass). */
export function startToolCalls(executor: AnyActorRef, jobs: readonly CallJob[]): void {
  executor.send({ type: 'dispatch', jobs });
}
