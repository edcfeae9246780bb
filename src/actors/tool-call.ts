import { createActor, type ActorLogic, type AnyActorLogic, type AnyActorRef, type EventObject, type Snapshot } from 'xstate';
import { RunCancelled, abortReason } from '../errors.js';
import type { RunOutcome } from '../runtime/run-state.js';
import { waitMachine, type WaitInput } from '../waits/wait.machine.js';
import type { WaitOutcome, WaitRequest } from '../waits/wait-types.js';
import { executeCall, waitedOutcome, type CallJob, type CallOutcome } from './call-pipeline.js';

export type ToolCallSnapshot = Snapshot<CallOutcome> & {
  /** Small, serialisable view for inspectors; the job itself stays out of persisted snapshots. */
  readonly context: { readonly callId: string; readonly tool: string };
  readonly job: CallJob | undefined;
  /** Sub-runs started by this call (agent as tool), by run id, with who waits for their done event (created with the first). */
  subRuns: Map<string, { readonly ref: AnyActorRef; readonly settle: (outcome: RunOutcome) => void }> | undefined;
  /** The wait the tool returned, while it waits: a child wait machine whose outcome makes the call's result (or, for an ask from the tool's body, goes to `settle`). */
  wait: { readonly ref: AnyActorRef; readonly input: WaitInput; readonly settle?: (outcome: WaitOutcome) => void } | undefined;
};

/** Starts a sub-run as a child of this call's actor; its done event settles `settle`. */
export interface SpawnSubRunEvent {
  readonly type: 'subrun.spawn';
  readonly runId: string;
  readonly logic: AnyActorLogic;
  readonly input: unknown;
  readonly settle: (outcome: RunOutcome) => void;
}

type ToolCallEvent =
  | { type: 'settled'; outcome: CallOutcome }
  /** The tool returned a wait (or the call resumes one): its wait machine starts. With `ask`, the tool's body asked and awaits the outcome itself (askFromTool). */
  | { type: 'wait'; request: WaitRequest; ask?: { readonly id: string; readonly settle: (outcome: WaitOutcome) => void } }
  | SpawnSubRunEvent
  /** A sub-run ended (its outcome), or the call's wait did (its WaitOutcome). */
  | { type: `xstate.done.actor.${string}`; output: RunOutcome | WaitOutcome; actorId: string }
  | { type: 'xstate.stop' };

/**
 * One tool call = one actor. Hand-written logic instead of `fromPromise` so the per-call
 * path stays small: start runs the pipeline, the outcome arrives as one `settled` event,
 * and the done snapshot is relayed to the parent executor by XState itself. An agent tool's
 * sub-run is a child run actor of this actor: its done event (the run's outcome) is what
 * the call's result is made from; stopping this actor cancels it by message.
 */
export const toolCallLogic: ActorLogic<ToolCallSnapshot, ToolCallEvent, CallJob | undefined, any, EventObject> = {
  config: 'troupe.toolCall',
  transition(snapshot, event, scope) {
    if (snapshot.status !== 'active') return snapshot;
    switch (event.type) {
      case 'settled':
        return { ...snapshot, status: 'done', output: event.outcome, job: undefined };
      case 'subrun.spawn': {
        const self = scope.self as AnyActorRef;
        const child = createActor(event.logic, { id: event.runId, parent: self, input: event.input }) as unknown as AnyActorRef;
        child.subscribe({ error: () => undefined });
        (snapshot.subRuns ??= new Map()).set(event.runId, { ref: child, settle: event.settle });
        // Started after this transition, as XState starts a spawned child.
        scope.defer(() => {
          child.start();
          child.send({ type: 'START' });
        });
        return snapshot;
      }
      case 'wait': {
        const input = snapshot.job!.openWait(event.request, event.ask?.id);
        const ref = createActor(waitMachine, { id: input.view.waitId, parent: scope.self as AnyActorRef, input }) as unknown as AnyActorRef;
        // Started after this transition, as XState starts a spawned child.
        scope.defer(() => ref.start());
        return { ...snapshot, wait: { ref, input, ...(event.ask ? { settle: event.ask.settle } : {}) } };
      }
      case 'xstate.stop':
        if (snapshot.subRuns) for (const { ref } of snapshot.subRuns.values()) ref.send({ type: 'CANCEL', error: new RunCancelled('the calling run stopped') });
        snapshot.subRuns?.clear();
        // A wait still open is withdrawn (its run was cancelled or parked): it ends with no outcome.
        if (snapshot.wait) scope.stopChild(snapshot.wait.ref);
        return { ...snapshot, status: 'stopped', output: undefined, job: undefined, wait: undefined };
      default: {
        if (!event.type.startsWith('xstate.done.actor.')) return snapshot;
        if (snapshot.wait && event.actorId === snapshot.wait.ref.id) {
          const { input, settle } = snapshot.wait;
          const job = snapshot.job!;
          const self = scope.self as AnyActorRef;
          const ended = event.output as WaitOutcome;
          // An ask from the tool's body: its outcome goes back to the body, which keeps running.
          if (settle) {
            scope.defer(() => settle(ended));
            return { ...snapshot, wait: undefined };
          }
          // The wait's outcome is the call's result (afterToolCall hooks see it as they see a returned value).
          scope.defer(() => void deliver(job, self, Promise.resolve(waitedOutcome(job, input.view, ended))));
          return { ...snapshot, wait: undefined };
        }
        const done = event as { actorId: string; output: RunOutcome };
        const entry = snapshot.subRuns?.get(done.actorId);
        if (!entry) return snapshot;
        snapshot.subRuns!.delete(done.actorId);
        entry.settle(done.output);
        return snapshot;
      }
    }
  },
  start(snapshot, { self }) {
    const job = snapshot.job!;
    const ref = self as AnyActorRef;
    job.ctx.actor = ref;
    // A call resumed while it waited opens its stored wait again; its tool does not run again.
    if (job.resumedWait) {
      const request = job.resumedWait;
      void Promise.resolve().then(() => {
        if (ref.getSnapshot().status === 'active') ref.send({ type: 'wait', request });
      });
      return;
    }
    // Tool code starts after the current statechart step: it never runs inside a run's action,
    // and not at all when the call was stopped in between (its run cancelled or parked right after dispatching it).
    void deliver(job, ref, Promise.resolve(job).then((j) => (ref.getSnapshot().status === 'active' ? executeCall(j) : NOT_STARTED)));
  },
  getInitialSnapshot(_scope, input) {
    const job = input ?? jobBeingSpawned!;
    return { status: 'active', output: undefined, error: undefined, context: { callId: job.ctx.callId, tool: job.tool.name }, job, subRuns: undefined, wait: undefined };
  },
  getPersistedSnapshot(snapshot) {
    return { status: snapshot.status, output: snapshot.output, error: undefined, context: snapshot.context } as Snapshot<unknown>;
  },
};

/** The outcome of a call stopped before its tool started; never delivered (its actor is stopped). */
const NOT_STARTED: CallOutcome = { result: undefined, output: '', isError: true, details: undefined, terminate: false };

/**
 * Hands a call's outcome to its actor: a returned wait opens (`wait`), anything else goes
 * through the afterToolCall hooks (only when the agent has them) and settles the call. A call
 * stopped by a cancelled or parked run may still settle later; its result is no longer wanted.
 */
function deliver(job: CallJob, ref: AnyActorRef, running: Promise<CallOutcome>): Promise<void> {
  return running.then((outcome) => {
    if (outcome.wait) {
      if (ref.getSnapshot().status === 'active') ref.send({ type: 'wait', request: outcome.wait });
      return;
    }
    void (job.reshape ? job.reshape(outcome) : Promise.resolve(outcome)).then((final) => {
      if (ref.getSnapshot().status === 'active') ref.send({ type: 'settled', outcome: final });
    });
  });
}

/**
 * The job handed to the actor being constructed. XState builds actor options with
 * `{ ...defaults, ...options }`, and on Node 20 every key in the second spread costs about
 * 0.8 µs (a V8 slow path, measured in bench/). Passing the job beside the options instead
 * of as `input` saves that on every call; the hand-over is synchronous, so it cannot leak
 * into another actor.
 */
let jobBeingSpawned: CallJob | undefined;

/** Creates (not starts) the actor for one call, as a child of `parent`, with id = the call's unique key. */
export function createToolCallActor(job: CallJob, parent: AnyActorRef): AnyActorRef {
  jobBeingSpawned = job;
  try {
    return createActor(toolCallLogic, { id: job.ctx.key, parent }) as unknown as AnyActorRef;
  } finally {
    jobBeingSpawned = undefined;
  }
}

/**
 * Runs a sub-run as a child actor of the calling tool-call actor and resolves with its
 * outcome (from the child's done event). Aborting `signal` cancels the sub-run by message.
 */
export function runSubRun(callActor: AnyActorRef, logic: AnyActorLogic, runId: string, input: unknown, signal: AbortSignal): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolve) => {
    const cancel = (): void => {
      const entry = (callActor.getSnapshot() as ToolCallSnapshot).subRuns?.get(runId);
      entry?.ref.send({ type: 'CANCEL', error: new RunCancelled(abortReason(signal)) });
    };
    const settle = (outcome: RunOutcome): void => {
      signal.removeEventListener('abort', cancel);
      resolve(outcome);
    };
    // The call was stopped (its run cancelled) before the sub-run could start: it never starts.
    if (callActor.getSnapshot().status !== 'active') return resolve({ status: 'failed', runId, error: new RunCancelled(abortReason(signal)) });
    callActor.send({ type: 'subrun.spawn', runId, logic, input, settle } satisfies SpawnSubRunEvent);
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
  });
}
