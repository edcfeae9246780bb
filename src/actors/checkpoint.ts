import { fromPromise } from 'xstate';

export interface CheckpointInput {
  flush(): Promise<void>;
}

/** Writes the pending run-log entries; the run waits in its checkpoint state until this settles. */
export const checkpointActor = fromPromise<void, CheckpointInput>(({ input }) => input.flush());

/** Loads a stored run before its first step (resume); settles once the run core is rebuilt. */
export const restoreActor = fromPromise<void, { load(): Promise<void> }>(({ input }) => input.load());

/** Appends a completed run's messages to its session before run_completed. */
export const sessionSaveActor = fromPromise<void, { save(): Promise<void> }>(({ input }) => input.save());
