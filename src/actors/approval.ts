import { fromPromise } from 'xstate';

export interface ApprovalInput {
  /** Evaluates needsApproval, asks for a decision when needed; resolves true to run the call. */
  decide(signal: AbortSignal): Promise<boolean>;
}

/** The approval wait as an actor: leaving the state (cancel) aborts it, which denies. */
export const approvalActor = fromPromise<boolean, ApprovalInput>(({ input, signal }) => input.decide(signal));
