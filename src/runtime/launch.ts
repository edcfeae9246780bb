import { createActor, type AnyActorRef } from 'xstate';
import type { Agent } from '../agent.js';
import { RunCancelled, TroupeError, asError } from '../errors.js';
import type { RunMachine } from '../machines/run.machine.js';
import type { Message, RunEvent, Usage } from '../types.js';
import type { ApprovalDesk } from './approvals.js';
import { RunCore, type RunOptions } from './run-core.js';

export interface RunResult {
  readonly runId: string;
  readonly output: string;
  readonly usage: Usage;
  readonly turns: number;
  /** Name of the agent that produced the final output. */
  readonly agent: string;
  readonly transcript: readonly Message[];
}

export interface LaunchParams {
  readonly agent: Agent;
  readonly input: string;
  readonly options: RunOptions;
  readonly runId: string;
  /** Agent names of the runs above this one (empty for a root run). */
  readonly parentPath: readonly string[];
  readonly desk: ApprovalDesk;
  readonly machine: RunMachine;
  /** Where this run's events go: the root's stream, or the parent run for a sub-run. */
  forward(event: RunEvent, terminal: boolean): void;
  /** For sub-runs: the parent run and the tool-call actor that spawned this run. */
  readonly parent?: { readonly core: RunCore; readonly spawnedBy: AnyActorRef | undefined };
}

export interface LaunchedRun {
  readonly core: RunCore;
  readonly actor: AnyActorRef;
  /** Settles with the run; never rejects unobserved. */
  readonly done: Promise<RunResult>;
  cancel(reason: string): void;
}

/**
 * Creates a run's core and statechart actor and starts it. Shared by root runs
 * (RunHandle) and sub-runs (agents as tools), which differ only in where events go and in
 * the parent their actor and budget hang from.
 */
export function launchRun(params: LaunchParams): LaunchedRun {
  const { options } = params;
  let resolve!: (result: RunResult) => void;
  let reject!: (error: Error) => void;
  const done = new Promise<RunResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // The result may never be awaited; a rejection still reaches whoever awaits it.
  done.catch(() => undefined);
  let finished = false;

  const onAbort = (): void => cancel(abortReason(options.signal!));
  const core: RunCore = new RunCore(params.runId, params.parentPath, params.agent, params.input, options, params.desk, {
    emit: (event, terminal) => {
      params.forward(event, terminal === true);
      if (!terminal) return;
      finished = true;
      options.signal?.removeEventListener('abort', onAbort);
      if (event.type === 'run_completed') {
        resolve({ runId: params.runId, output: event.output, usage: event.usage, turns: event.turns, agent: event.agent, transcript: core.transcript });
      } else if (event.type === 'run_failed') {
        reject(event.error);
      }
    },
  }, params.parent?.core);
  const actor = createActor(params.machine, {
    id: params.runId,
    input: { run: core },
    ...(params.parent?.spawnedBy ? { parent: params.parent.spawnedBy } : {}),
    ...(options.inspect && !params.parent ? { inspect: options.inspect } : {}),
  }) as unknown as AnyActorRef;
  // An error inside the statechart itself must still end the stream with run_failed.
  actor.subscribe({
    error: (error: unknown) => {
      core.fail(new TroupeError(`internal run error: ${asError(error).message}`, { cause: error }));
      core.emitFailed();
    },
  });
  core.attachRun(actor);
  function cancel(reason: string): void {
    if (!finished) core.requestCancel(new RunCancelled(reason));
  }
  if (options.signal) {
    if (options.signal.aborted) queueMicrotask(onAbort);
    else options.signal.addEventListener('abort', onAbort, { once: true });
  }
  actor.start();
  actor.send({ type: 'START' });
  return { core, actor, done, cancel };
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof RunCancelled) return reason.reason;
  if (reason instanceof Error) return reason.message || 'aborted';
  return typeof reason === 'string' ? reason : 'aborted';
}
