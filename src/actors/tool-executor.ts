import type { ActorLogic, AnyActorRef, EventObject, Snapshot } from 'xstate';
import type { CallJob, CallOutcome } from './call-pipeline.js';
import { createToolCallActor } from './tool-call.js';

/** What the executor needs from its run. */
export interface ExecutorHost {
  attachExecutor(ref: AnyActorRef): void;
  /** Called once per call with its single outcome. */
  settleCall(callId: string, outcome: CallOutcome): void;
}

export type ExecutorSnapshot = Snapshot<undefined> & {
  readonly context: { inFlight: number };
  readonly host: ExecutorHost;
  readonly children: Map<string, AnyActorRef>;
};

export type ExecutorEvent =
  /** Every call one preflight pass cleared, in request order: one message per pass, not per call. */
  | { type: 'dispatch'; jobs: readonly CallJob[] }
  | { type: 'xstate.stop' }
  | { type: `xstate.done.actor.${string}`; output: CallOutcome; actorId: string };

/** Sent to the run actor whenever the last in-flight call settles. */
export const TOOLS_IDLE = 'tools.idle' as const;

/**
 * Hosts the tool-call actors of one run. Each call is spawned here with `id = call id`;
 * completions are handled by this plain transition function rather than a statechart
 * macrostep, which keeps the per-call cost low. The run statechart hears one
 * `tools.idle` message when the executor drains.
 */
export const toolExecutorLogic: ActorLogic<ExecutorSnapshot, ExecutorEvent, ExecutorHost, any, EventObject> = {
  config: 'troupe.toolExecutor',
  transition(snapshot, event, scope) {
    if (event.type === 'dispatch') {
      for (const job of event.jobs) {
        const child = createToolCallActor(job, scope.self as AnyActorRef);
        snapshot.children.set(job.ctx.callId, child);
        snapshot.context.inFlight++;
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
      snapshot.host.settleCall(done.actorId, done.output);
      if (--snapshot.context.inFlight === 0) {
        // A cancelled run may already have ended; it no longer listens.
        const run = (scope.self as AnyActorRef)._parent;
        if (run?.getSnapshot().status === 'active') run.send({ type: TOOLS_IDLE });
      }
    }
    return snapshot;
  },
  start(snapshot, { self }) {
    snapshot.host.attachExecutor(self as AnyActorRef);
  },
  getInitialSnapshot(_scope, host) {
    return { status: 'active', output: undefined, error: undefined, context: { inFlight: 0 }, host, children: new Map() };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: undefined, error: undefined, context: { ...snapshot.context } } as Snapshot<unknown>;
  },
};
