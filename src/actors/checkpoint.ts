import { fromPromise } from 'xstate';

export interface CheckpointInput {
  flush(): Promise<void>;
}

/** Parking: stores the suspended head; the run waits in `suspending` until this settles. (Turn checkpoints need no actor: saveCheckpoint.) */
export const checkpointActor = fromPromise<void, CheckpointInput>(({ input }) => input.flush());

/** Loads a stored run before its first step (resume); settles once the run core is rebuilt. */
export const restoreActor = fromPromise<void, { load(): Promise<void> }>(({ input }) => input.load());

/** Output guardrails and onRunEnd hooks when a run would complete; resolves with the messages that continue it. */
export const runEndActor = fromPromise<string[], { check(): Promise<string[]> }>(({ input }) => input.check());

/** Appends a completed run's messages to its session before run_completed. */
export const sessionSaveActor = fromPromise<void, { save(): Promise<void> }>(({ input }) => input.save());
