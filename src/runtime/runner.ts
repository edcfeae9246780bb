import { nanoid } from 'nanoid';
import type { AnyActorRef } from 'xstate';
import type { Agent } from '../agent.js';
import type { RunMachine } from '../machines/run.machine.js';
import type { CustomMessage, RunEvent, RunInputValue } from '../types.js';
import { checkCustomMessage } from '../context/custom-messages.js';
import { RunSuspended, UserError } from '../errors.js';
import { WaitRouter } from '../waits/wait-router.js';
import { approvalControls, humanControls, waitControls, type ApprovalControls, type HumanControls, type WaitControls } from './run-controls.js';
import { EventChannel } from './event-channel.js';
import { launchRun, type LaunchParams, type LaunchedRun, type RunResult } from './launch.js';
import { getRunMachine } from './run-machine.js';
import type { CheckpointOptions, RunOptions } from './run-options.js';
import type { Audience } from './run-state.js';
import { decideStored } from './decide.js';
import { pendingStored } from './pending-stored.js';
import { abortStored } from './abort-stored.js';
import { answerStored, resolveStored, signalStored } from './stored-waits.js';
import { traceRun } from '../otel/trace-run.js';
import { RunSubscribers, type RunEventHandler } from './subscribers.js';
import type { RunEventType, SubscriberFailedEvent } from '../types.js';

export type { RunResult } from './launch.js';
export type { ApprovalControls, HumanControls, WaitControls } from './run-controls.js';

/**
 * A started run: iterate it for events (any number of loops, each sees every event), await
 * `result()`, `cancel()` it, or decide approvals through `approvals`.
 */
export class RunHandle implements AsyncIterable<RunEvent> {
  readonly runId: string;
  /** The tree's approval controls (built on first read; the same object every time). */
  get approvals(): ApprovalControls {
    return (this.approvalControls ??= approvalControls(this.waitRouter));
  }
  /**
   * Questions tools ask a person through the run (askHuman without a channel), anywhere in
   * the tree: `pending()` lists them; `answer(requestId, answer)` answers one (false when
   * nothing waits under that id; UserError when the answer does not fit its options).
   * Built on first read; the same object every time.
   */
  get humans(): HumanControls {
    return (this.humanControls ??= humanControls(this.waitRouter));
  }
  /**
   * Every wait of the tree (approvals, questions, events, timers): `pending()` lists them,
   * `resolve(waitId, resolution)` resolves one as its kind takes it (an approval
   * `{ approved, reason?, args? }`, a question its answer, an event its payload). Built on first
   * read; the same object every time.
   */
  get waits(): WaitControls {
    return (this.waitControls ??= waitControls(this.waitRouter));
  }
  private approvalControls: ApprovalControls | undefined;
  private humanControls: HumanControls | undefined;
  private waitControls: WaitControls | undefined;
  /** The run's root actor (for inspection). */
  readonly actor: AnyActorRef;
  /** Steer and follow-up messages not yet injected (seen as user_message_injected), by id. */
  private unread: Set<string> | undefined;
  private steerCount = 0;
  private readonly channel: EventChannel;
  private readonly run: LaunchedRun;
  private readonly waitRouter: WaitRouter;
  private readonly durable: boolean;
  private readonly subscribers: RunSubscribers;
  private readonly audience: Audience;

  /** `machine` is a seam for tests (e.g. mutant charts); runs use the shared run machine. */
  constructor(agent: Agent, input: RunInputValue, options: RunOptions, machine: RunMachine = getRunMachine()) {
    const router = (this.waitRouter = new WaitRouter());
    this.durable = options.checkpoint !== undefined;
    this.runId = options.runId ?? options.checkpoint?.runId ?? `run_${nanoid(12)}`;
    const rootId = this.runId;
    // Once nobody reads the stream and no tracer watches it, the tree's progress events are not built (run-state.ts Audience).
    const audience: Audience = (this.audience = { quiet: false });
    // Malformed subscribers fail the run at run_started (validateRunOptions); none are called then.
    const subscribers = (this.subscribers = safeSubscribers(options));
    this.channel = new EventChannel(
      (event) => {
        if (event.type === 'approval_required') router.passed(event.approvalId);
      },
      () => {
        if (!options.tracer && subscribers.size === 0) audience.quiet = true;
        router.consumerLeft();
      },
    );
    const report = (failure: SubscriberFailedEvent): void => {
      subscribers.dispatch(failure, () => undefined);
      this.channel.push(failure);
    };
    const params: LaunchParams = {
      agent,
      input,
      options,
      runId: this.runId,
      waits: router,
      machine,
      audience,
      sink: (event) => {
        if (event.type === 'user_message_injected' && event.id !== undefined && event.runId === rootId) this.unread?.delete(event.id);
        if (subscribers.size > 0) for (const failure of subscribers.dispatch(event, report)) report(failure);
        this.channel.push(event, event.runId === rootId && (event.type === 'run_completed' || event.type === 'run_failed' || event.type === 'run_suspended'));
      },
    };
    // Tracing observes the tree's events and run actors (src/otel); without a tracer none of it runs and @opentelemetry/api is never loaded.
    this.run = launchRun(options.tracer ? { ...params, ...traceRun(options.tracer, params.sink, options) } : params);
    this.actor = this.run.actor;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.channel[Symbol.asyncIterator]();
  }

  /**
   * Resolves with the result or rejects with the typed error. Events are still kept for a
   * later loop; when no loop has started, approvals go to the agent's approvalHandler at
   * once ("ask" then waits for `approvals`), since no consumer is there to decide them.
   */
  async result(): Promise<RunResult> {
    if (!this.channel.started) this.passApprovalsToHandler();
    const outcome = await this.run.outcome;
    if (outcome.status === 'failed' || outcome.status === 'cancelled') throw outcome.error;
    if (outcome.status === 'suspended') throw new RunSuspended(outcome.runId, outcome.approvals, outcome.waits);
    const { status: _status, ...result } = outcome;
    return result;
  }

  /**
   * Queues a user message the model sees at its next request (also before the first one;
   * after a text-only reply the run then continues). Logged and announced as
   * user_message_injected { source: 'steer', id } when it joins the transcript.
   * `options.id` names the message (it must not be waiting already); a worker passes the id of
   * the cluster message it applies, so a run resumed elsewhere can tell it is already logged.
   * @returns the message's id, for `unsteer`. @throws UserError when the run has ended or the id is taken.
   */
  steer(text: string | CustomMessage<string>, options?: { readonly id?: string }): string {
    return this.queue('steer', text, options?.id);
  }

  /**
   * Queues a user message that starts another turn when the run would otherwise end
   * (a final reply, or a terminating batch). `options.id` as for `steer`. @returns its id.
   * @throws UserError when the run has ended or the id is taken.
   */
  followUp(text: string | CustomMessage<string>, options?: { readonly id?: string }): string {
    return this.queue('follow_up', text, options?.id);
  }

  /** Withdraws a steer or follow-up message while it is unread. Returns false once it was read (or is unknown). */
  unsteer(id: string): boolean {
    if (!this.unread?.delete(id)) return false;
    // An ended run reads nothing more: the message is withdrawn without telling it.
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'steer.remove', id });
    return true;
  }

  private queue(queue: 'steer' | 'follow_up', text: string | CustomMessage<string>, givenId?: string): string {
    const what = queue === 'steer' ? 'steer' : 'followUp';
    // A custom-role message (customMessage(role, content, data)) joins the transcript as it is; convertToModel decides what the model sees of it.
    const message = typeof text === 'object' && text !== null ? (checkCustomMessage(text, what) as CustomMessage) : undefined;
    if (typeof text !== 'string' && !message) throw new UserError(`${what} takes a string or a custom message, got ${typeof text}.`);
    if (givenId !== undefined && (typeof givenId !== 'string' || givenId.length === 0 || this.unread?.has(givenId) === true)) {
      throw new UserError(`A steer or follow-up id must be a non-empty string not already waiting, got ${JSON.stringify(givenId)}.`);
    }
    const snapshot = this.actor.getSnapshot();
    // Saving its session, a run has completed its last turn: a message now would be lost, so it is refused.
    if (snapshot.status !== 'active' || snapshot.matches('savingSession')) throw new UserError(`Run '${this.runId}' has ended; it takes no more messages.`);
    const id = givenId ?? `${queue === 'steer' ? 'steer' : 'followup'}_${++this.steerCount}`;
    (this.unread ??= new Set()).add(id);
    this.actor.send(message ? { type: 'steer.add', queue, id, text: message.content, message } : { type: 'steer.add', queue, id, text: text as string });
    return id;
  }

  /**
   * Delivers the external event `name` to every call of the tree waiting for it
   * (`waitForEvent(name)`): each call's result is `payload` (a JSON value).
   * @returns how many calls it reached (0: none waits for it now; nothing is kept for later).
   * @throws UserError when `payload` cannot be written as JSON.
   */
  signal(name: string, payload?: unknown): number {
    if (typeof name !== 'string' || name.length === 0) throw new UserError(`signal needs an event name, got ${JSON.stringify(name)}.`);
    return this.waitRouter.signal(name, payload === undefined ? null : payload);
  }

  /**
   * Parks a durable run at its next wait, once nothing else of it is running
   * (`run_suspended`, stored status "suspended", lease released); `result()` then rejects with
   * RunSuspended. Only for runs with a checkpoint store. @throws UserError otherwise.
   */
  suspend(): void {
    if (!this.durable) throw new UserError(`Run '${this.runId}' has no checkpoint store; only durable runs can be suspended.`);
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'SUSPEND' });
  }

  /**
   * Subscribes `handler` to every event of type `type` of the run tree (or every event, for
   * '*'), after the subscribers registered before (RunOptions.on first). It sees the events
   * from now on, before the stream does, whether anyone reads the stream or not. A handler that
   * throws or rejects is skipped and reported as a `subscriber_failed` event; the run goes on
   * unchanged. @returns a function that unsubscribes it. @throws UserError when `handler` is not a function.
   */
  on<K extends RunEventType>(type: K, handler: RunEventHandler<Extract<RunEvent, { readonly type: K }>>): () => void;
  on(type: '*', handler: RunEventHandler): () => void;
  on(type: string, handler: unknown): () => void {
    const off = this.subscribers.add(type, handler);
    // Someone listens again: the tree's progress events are built (run-state.ts Audience).
    this.audience.quiet = false;
    return off;
  }

  /** Ends the run with run_failed(RunCancelled); in-flight tools and sub-runs see their signal abort. */
  cancel(reason = 'cancelled'): void {
    this.run.cancel(reason);
  }

  /** No consumer will read events: nothing is kept, undecided approvals fall to the handler, then deny. */
  stopListening(): void {
    this.channel.drain();
  }

  private passApprovalsToHandler(): void {
    this.waitRouter.passImmediately = true;
    for (const wait of this.waitRouter.pending('approval')) this.waitRouter.passed(wait.waitId);
  }
}

/** The run's subscribers; malformed ones are none (the run fails at run_started with their UserError). */
function safeSubscribers(options: RunOptions): RunSubscribers {
  try {
    return new RunSubscribers(options.on);
  } catch {
    return new RunSubscribers(undefined);
  }
}

export const Runner = {
  /** Runs to completion. Without an approvalHandler, gated calls are denied. */
  run<Deps>(agent: Agent<Deps>, input: RunInputValue, options: RunOptions<Deps> = {}): Promise<RunResult> {
    const handle = new RunHandle(agent, input, options);
    handle.stopListening();
    return handle.result();
  },

  /** Starts a run and returns its handle; iterate it for events. */
  stream<Deps>(agent: Agent<Deps>, input: RunInputValue, options: RunOptions<Deps> = {}): RunHandle {
    return new RunHandle(agent, input, options);
  },

  /**
   * Continues a stored run (suspended, interrupted, or left running by a crash) and returns its
   * handle. `agent` is the run's first agent (the stored one is found through its handoffs).
   * The stream starts with run_started; a run that is not stored fails with a UserError.
   */
  resume<Deps>(agent: Agent<Deps>, checkpoint: Omit<CheckpointOptions, 'ifRunExists'> & { readonly runId: string }, options: Omit<RunOptions<Deps>, 'checkpoint'> = {}): RunHandle {
    return new RunHandle(agent, '', { ...options, checkpoint: { ...checkpoint, ifRunExists: 'resume_only' } });
  },

  /** What a stored run waits for (its open approvals and other waits), from any process (see `pendingStored`). */
  pending: pendingStored,
  /** Records a decision for a stored run's pending approval, from any process (see `decideStored`). */
  decide: decideStored,
  /** Delivers an external event to a stored run's calls waiting for it, from any process (see `signalStored`). */
  signal: signalStored,
  /** Answers a stored run's open question (askHuman), from any process (see `answerStored`). */
  answer: answerStored,
  /** Resolves any open wait of a stored run by its id, from any process (see `resolveStored`). */
  resolve: resolveStored,
  /** Aborts a stored (parked or stopped) run for good with a reason, from any process (see `abortStored`). */
  abort: abortStored,
};

export { getRunMachine } from './run-machine.js';
