import { assertEvent, assign, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from 'xstate';
import { asError } from '../errors.js';
import type { WaitKind } from './kinds/wait-kind.js';
import type { WaitRouter } from './wait-router.js';
import type { WaitOutcome, WaitView } from './wait-types.js';

/** What an approval's check decided before anyone is asked: open the wait, or its outcome already. */
export type WaitCheck = { readonly open: true } | { readonly open: false; readonly resolution: unknown; readonly by: string };

/** An approval handler's verdict once the wait is left to it: 'ask' keeps waiting for a person (while one can decide). */
export type ConsultVerdict = 'allow' | 'ask' | 'deny';

/**
 * What one wait machine is started with. The effects are the run's and must not throw; the
 * optional parts are an approval's (its check, its handler and whether the run parks).
 */
export interface WaitInput {
  readonly view: WaitView;
  readonly kind: WaitKind;
  readonly router: WaitRouter;
  /** A resolution stored in the run's log for exactly this request (a resumed run, another process): the wait resolves with it at once. */
  readonly recorded?: { readonly resolution: unknown; readonly by: string };
  /** Runs before the wait opens (beforeToolCall hooks, the needsApproval predicate). Rejects with what they threw. */
  check?(): Promise<WaitCheck>;
  /** The handler the wait is left to once the stream consumer passed it or left. Rejects with what it threw. */
  consult?(): Promise<ConsultVerdict>;
  /** Whether the run parks at this wait (then "ask" keeps it open although nobody reads the stream). */
  parks?(): boolean;
  /** The wait opened (it is in the inbox): the opened event, the logged request, the run told. */
  opened(view: WaitView): void;
  /** The wait ended with `outcome` (not when it was withdrawn: a cancelled or parked run stops it). */
  ended(view: WaitView, outcome: WaitOutcome): void;
  /** A check or the handler threw: reported as the call's failed attempt. */
  reportFailure?(error: Error): void;
}

export interface WaitContext {
  readonly input: WaitInput;
  readonly outcome: WaitOutcome | undefined;
  readonly handlerAsked: boolean;
  /** The handler said "ask": the decision is left to a person (the consumer, or another process for a parking run). */
  readonly leftToConsumer: boolean;
}

export type WaitEvent =
  /** A resolution from outside, already checked by the kind (WaitRouter.resolve). */
  | { readonly type: 'wait.resolve'; readonly resolution: unknown; readonly by: string }
  /** The stream consumer pulled past the wait's event without resolving it (`gone`: nobody will read the stream any more). */
  | { readonly type: 'wait.unattended'; readonly gone: boolean }
  | DoneActorEvent<WaitCheck, 'check'>
  | ErrorActorEvent<unknown, 'check'>
  | DoneActorEvent<ConsultVerdict, 'consult'>
  | ErrorActorEvent<unknown, 'consult'>;

/** setTimeout's longest delay: a wait due later sleeps in steps of this (a durable wait may last for weeks). */
const LONGEST_DELAY_MS = 2_147_483_647;

/**
 * One wait, from its opening to its single outcome (WaitOutcome), as a child machine of the
 * actor that waits (the run for an approval, the call's actor for a call's wait):
 *
 * start → [checking] → opening → waiting (clock ∥ decider) → done
 *
 * A stored resolution resolves it at once; otherwise it is listed in the tree's inbox while it
 * waits, resolved from outside (`wait.resolve`), by its handler (approvals), or at its
 * deadline. Stopping it (the run was cancelled or parked) withdraws it with no outcome.
 */
export const waitMachine = setup({
  types: {} as { context: WaitContext; events: WaitEvent; input: WaitInput; output: WaitOutcome },
  actors: {
    check: fromPromise<WaitCheck, WaitInput>(({ input }) => input.check!()),
    consult: fromPromise<ConsultVerdict, WaitInput>(({ input }) => input.consult!()),
  },
  guards: {
    hasCheck: ({ context }) => context.input.check !== undefined,
    checkResolved: ({ event }) => {
      assertEvent(event, 'xstate.done.actor.check');
      return !event.output.open;
    },
    recorded: ({ context }) => context.input.recorded !== undefined,
    hasDeadline: ({ context }) => context.input.view.deadline !== undefined,
    due: ({ context }) => Date.now() >= context.input.view.deadline!,
    // Approvals: the handler is asked at once when nobody reads the stream (or result() passes every wait on).
    consultNow: ({ context }) => context.input.consult !== undefined && !context.handlerAsked && (context.input.router.consumerGone || context.input.router.passImmediately),
    mayConsult: ({ context }) => context.input.consult !== undefined && !context.handlerAsked,
    // The handler left it to a person, and nobody is left to decide: it is denied.
    abandoned: ({ context, event }) => {
      assertEvent(event, 'wait.unattended');
      return event.gone && context.leftToConsumer && context.input.parks?.() !== true;
    },
    handlerAllows: ({ event }) => {
      assertEvent(event, 'xstate.done.actor.consult');
      return event.output === 'allow';
    },
    handlerLeavesIt: ({ context, event }) => {
      assertEvent(event, 'xstate.done.actor.consult');
      return event.output === 'ask' && (!context.input.router.consumerGone || context.input.parks?.() === true);
    },
  },
  actions: {
    takeCheck: assign({
      outcome: ({ event }) => {
        assertEvent(event, 'xstate.done.actor.check');
        const checked = event.output as Extract<WaitCheck, { open: false }>;
        return { ended: 'checked', resolution: checked.resolution, by: checked.by } as WaitOutcome;
      },
    }),
    failCheck: assign({
      outcome: ({ context, event }) => {
        assertEvent(event, 'xstate.error.actor.check');
        const error = asError(event.error);
        context.input.reportFailure?.(error);
        return { ended: 'checked', resolution: { approved: false, failure: error }, by: 'error' } as WaitOutcome;
      },
    }),
    takeRecorded: assign({ outcome: ({ context }) => ({ ended: 'resolved', ...context.input.recorded! }) as WaitOutcome }),
    open: ({ context, self }) => {
      context.input.router.register(context.input.view, context.input.kind, self);
      context.input.opened(context.input.view);
    },
    takeResolution: assign({
      outcome: ({ event }) => {
        assertEvent(event, 'wait.resolve');
        return { ended: 'resolved', resolution: event.resolution, by: event.by } as WaitOutcome;
      },
    }),
    atDeadline: assign({ outcome: ({ context }) => (context.input.kind.atDeadline === 'resolve' ? { ended: 'resolved', resolution: { at: context.input.view.deadline }, by: 'clock' } : { ended: 'timedOut' }) as WaitOutcome }),
    markAsked: assign({ handlerAsked: true }),
    markLeftToConsumer: assign({ leftToConsumer: true }),
    denyByHandler: assign({ outcome: (): WaitOutcome => ({ ended: 'resolved', resolution: { approved: false }, by: 'handler' }) }),
    takeHandler: assign({
      outcome: ({ event }) => {
        assertEvent(event, 'xstate.done.actor.consult');
        return { ended: 'resolved', resolution: { approved: event.output === 'allow' }, by: 'handler' } as WaitOutcome;
      },
    }),
    failHandler: assign({
      outcome: ({ context, event }) => {
        assertEvent(event, 'xstate.error.actor.consult');
        context.input.reportFailure?.(asError(event.error));
        return { ended: 'resolved', resolution: { approved: false }, by: 'error' } as WaitOutcome;
      },
    }),
    end: ({ context }) => context.input.ended(context.input.view, context.outcome!),
  },
  delays: {
    // The time left to the deadline, in steps setTimeout can take.
    untilDeadline: ({ context }) => Math.min(LONGEST_DELAY_MS, Math.max(0, context.input.view.deadline! - Date.now())),
  },
}).createMachine({
  id: 'wait',
  context: ({ input }) => ({ input, outcome: undefined, handlerAsked: false, leftToConsumer: false }),
  output: ({ context }) => context.outcome!,
  initial: 'start',
  states: {
    start: { always: [{ guard: 'hasCheck', target: 'checking' }, { target: 'opening' }] },
    // Approvals: beforeToolCall hooks and the needsApproval predicate may decide it before anyone is asked.
    checking: {
      invoke: {
        id: 'check',
        src: 'check',
        input: ({ context }) => context.input,
        onDone: [{ guard: 'checkResolved', target: 'done', actions: 'takeCheck' }, { target: 'opening' }],
        onError: { target: 'done', actions: 'failCheck' },
      },
    },
    opening: { always: [{ guard: 'recorded', target: 'done', actions: 'takeRecorded' }, { target: 'waiting' }] },
    waiting: {
      type: 'parallel',
      entry: 'open',
      on: { 'wait.resolve': { target: 'done', actions: 'takeResolution' } },
      states: {
        clock: {
          initial: 'starting',
          states: {
            starting: { always: [{ guard: 'hasDeadline', target: 'ticking' }, { target: 'idle' }] },
            ticking: { after: { untilDeadline: [{ guard: 'due', target: '#wait.done', actions: 'atDeadline' }, { target: 'ticking', reenter: true }] } },
            idle: {},
          },
        },
        decider: {
          initial: 'listening',
          states: {
            listening: {
              always: { guard: 'consultNow', target: 'consulting' },
              on: {
                'wait.unattended': [
                  { guard: 'mayConsult', target: 'consulting' },
                  { guard: 'abandoned', target: '#wait.done', actions: 'denyByHandler' },
                ],
              },
            },
            consulting: {
              entry: 'markAsked',
              invoke: {
                id: 'consult',
                src: 'consult',
                input: ({ context }) => context.input,
                onDone: [
                  { guard: 'handlerAllows', target: '#wait.done', actions: 'takeHandler' },
                  { guard: 'handlerLeavesIt', target: 'listening', actions: 'markLeftToConsumer' },
                  { target: '#wait.done', actions: 'takeHandler' },
                ],
                onError: { target: '#wait.done', actions: 'failHandler' },
              },
            },
          },
        },
      },
    },
    done: { type: 'final', entry: 'end' },
  },
});

export type WaitMachine = typeof waitMachine;
