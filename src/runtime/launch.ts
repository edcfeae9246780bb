import { createActor, type AnyActorRef } from 'xstate';
import type { Agent } from '../agent.js';
import { RunCancelled, TroupeError, abortReason, asError } from '../errors.js';
import type { RunMachine } from '../machines/run.machine.js';
import type { Message, RunEvent, RunInputValue, Usage } from '../types.js';
import type { WaitRouter } from '../waits/wait-router.js';
import { inNextMicrotask } from './microtask.js';
import type { RunOptions } from './run-options.js';
import type { Audience, RunOutcome, RunState } from './run-state.js';

export interface RunResult {
  readonly runId: string;
  /** The final reply's text (or the terminating results, joined by newlines). */
  readonly output: string;
  /** The run's final output: `output` (typed by the agent's outputType when it has one). */
  readonly finalOutput: unknown;
  /** The last model reply's finish reason, as the provider said it (e.g. "stop", "tool-calls", "length"). */
  readonly finishReason: string | undefined;
  /** Input tokens of the last model request: how large the context was when the model last saw it. */
  readonly lastInputTokens: number | undefined;
  readonly usage: Usage;
  readonly turns: number;
  /** Name of the agent that produced the final output. */
  readonly agent: string;
  readonly transcript: readonly Message[];
}

export interface LaunchParams {
  readonly agent: Agent;
  readonly input: RunInputValue;
  readonly options: RunOptions;
  readonly runId: string;
  readonly waits: WaitRouter;
  readonly machine: RunMachine;
  /** Where the run tree's events go (the root stream). */
  readonly sink: (event: RunEvent) => void;
  /** Whether the tree's progress events have an audience (see run-state.ts Audience). */
  readonly audience: Audience;
}

export interface LaunchedRun {
  readonly actor: AnyActorRef;
  /** Settles with the run's outcome (from the run actor's final output); never rejects. */
  readonly outcome: Promise<RunOutcome>;
  cancel(reason: string): void;
}

/**
 * Creates a root run's statechart actor and starts it. START is sent in a microtask, so a
 * cancel right after starting (or an already-aborted signal) is seen before the first
 * model request: the stream is then exactly run_started, run_failed(RunCancelled).
 */
export function launchRun(params: LaunchParams): LaunchedRun {
  const { options } = params;
  let settle!: (outcome: RunOutcome) => void;
  const outcome = new Promise<RunOutcome>((resolve) => (settle = resolve));
  const actor = createActor(params.machine, {
    id: params.runId,
    input: { runId: params.runId, agent: params.agent, input: params.input, options, parentPath: [], sink: params.sink, waits: params.waits, audience: params.audience },
    ...(options.inspect ? { inspect: options.inspect } : {}),
  }) as unknown as AnyActorRef;
  const onAbort = (): void => cancel(abortReason(options.signal!));
  actor.subscribe({
    complete: () => {
      options.signal?.removeEventListener('abort', onAbort);
      const snapshot = actor.getSnapshot() as { output: RunOutcome; context: { run: RunState } };
      // The outcome is given once the run's last writes are stored and its lease is released.
      // …and once every plugin's close has settled (closePlugins).
      const { runLog: log, pluginsClosed } = snapshot.context.run;
      const closed = pluginsClosed && log ? Promise.all([pluginsClosed, log.close()]) : (pluginsClosed ?? log?.close());
      if (closed) void closed.then(() => settle(snapshot.output));
      else settle(snapshot.output);
    },
    // An error inside the statechart itself must still end the stream with run_failed.
    error: (caught: unknown) => {
      options.signal?.removeEventListener('abort', onAbort);
      const error = new TroupeError(`internal run error: ${asError(caught).message}`, { cause: caught });
      params.sink({ type: 'run_failed', runId: params.runId, path: [params.agent.name], agent: params.agent.name, error, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 }, turns: 0 });
      settle({ status: 'failed', runId: params.runId, error });
    },
  });
  function cancel(reason: string): void {
    if (actor.getSnapshot().status === 'active') actor.send({ type: 'CANCEL', error: new RunCancelled(reason) });
  }
  actor.start();
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  inNextMicrotask(() => {
    if (actor.getSnapshot().status === 'active') actor.send({ type: 'START' });
  });
  return { actor, outcome, cancel };
}
