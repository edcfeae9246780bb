import { fromPromise } from 'xstate';

export interface CheckpointInput {
  flush(): Promise<void>;
}

/** Writes the pending run-log entries; the run waits in its checkpoint state until this settles. */
export const checkpointActor = fromPromise<void, CheckpointInput>(({ input }) => input.flush());
