import { fromPromise } from 'xstate';
import type { CallResolution } from '../runtime/call-resolution.js';
import type { RestoredState } from '../runtime/run-restore.js';
import type { AgentSetup } from '../runtime/run-state.js';

/** Loads the session's history and the stored run before a run's first step; resolves with what it loaded (the run applies it). */
export const restoreActor = fromPromise<RestoredState, { load(signal: AbortSignal): Promise<RestoredState> }>(({ input, signal }) => input.load(signal));

/** Sets up the active agent's plugins when it becomes active; resolves with the agent's setup (the run applies it). */
export const pluginSetupActor = fromPromise<AgentSetup, { activate(signal: AbortSignal): Promise<AgentSetup> }>(({ input, signal }) => input.activate(signal));

/** Output guardrails and onRunEnd hooks when a run would complete; resolves with the messages that continue it. */
export const runEndActor = fromPromise<string[], { check(): Promise<string[]> }>(({ input }) => input.check());

/** shouldStopAfterTurn hooks after a turn's results; resolves true when one says stop. */
export const stopAfterTurnActor = fromPromise<boolean, { check(): Promise<boolean> }>(({ input }) => input.check());

/** Appends a completed run's messages to its session before run_completed. */
export const sessionSaveActor = fromPromise<void, { save(): Promise<void> }>(({ input }) => input.save());

/** resolveToolCall hooks on the calls of a reply (the resolving step); resolves with what they resolved. Never rejects. */
export const resolveCallsActor = fromPromise<CallResolution[], { resolve(): Promise<CallResolution[]> }>(({ input }) => input.resolve());
