import type { DoneActorEvent, ErrorActorEvent } from 'xstate';
import type { Agent } from '../agent.js';
import type { ToolsSettledEvent } from '../actors/tool-executor.js';
import type { PreflightVerdictEvent } from '../runtime/run-calls.js';
import type { ModelAnswerEvent } from '../runtime/run-turn.js';
import type { WaitOutcome } from '../waits/wait-types.js';
import type { RestoredState } from '../runtime/run-restore.js';
import type { AgentSetup } from '../runtime/run-state.js';
import type { CallResolution } from '../runtime/call-resolution.js';
import type { AncestorSpendEvent, ChildSpendEvent, SubRunLifecycleEvent } from '../runtime/run-spend.js';
import type { HandoffInputFilter } from '../handoff/handoff.js';
import type { CustomMessage } from '../types.js';

/**
 * Every message a run actor accepts, typed: guards and actions narrow it with `assertEvent`.
 * Runs talk to each other only through these; async work (the model turn, the restore, the
 * approval wait, store writes, tools) reports back through them.
 */
export type RunMachineEvent =
  | { readonly type: 'START' }
  /** Cancel the run (handle.cancel, an aborted signal, a parent cancelling its sub-run). */
  | { readonly type: 'CANCEL'; readonly error?: Error }
  /** Park the run at its next wait (durable runs; `handle.suspend()`). */
  | { readonly type: 'SUSPEND' }
  | ModelAnswerEvent
  | ToolsSettledEvent
  | PreflightVerdictEvent
  /** Everything the run appended so far reached the store (a turn's writes, a stopped or parked run's head). A failed write arrives as `log.failed` instead. */
  | { readonly type: 'checkpoint.saved' }
  /** The run's log could not be written (store error, lost lease): the run fails at once. */
  | { readonly type: 'log.failed'; readonly error: Error }
  /** A wait of this run opened (an approval, or a call's wait; its request is logged): the run may park now. */
  | { readonly type: 'wait.opened' }
  | ChildSpendEvent
  | AncestorSpendEvent
  | SubRunLifecycleEvent
  /** A tool posted a message for the model (`ctx.mailbox.post`). */
  | { readonly type: 'mailbox.post'; readonly text: string }
  /** A handoff tool asks for the switch; it happens when the turn ends. */
  | { readonly type: 'handoff.request'; readonly target: Agent; readonly inputFilter?: HandoffInputFilter }
  /** The caller queues a message: for the next model request (steer) or for when the run would end (follow_up). */
  | { readonly type: 'steer.add'; readonly queue: 'steer' | 'follow_up'; readonly id: string; readonly text: string; readonly message?: CustomMessage }
  /** The caller withdraws a queued message it has not seen injected. */
  | { readonly type: 'steer.remove'; readonly id: string }
  /** The input guardrails (running beside the first turn) passed, or one tripped. */
  | { readonly type: 'guardrail.passed' }
  | { readonly type: 'guardrail.tripped'; readonly error: unknown }
  // The invoked actors' answers.
  | DoneActorEvent<RestoredState, 'restore'>
  | ErrorActorEvent<unknown, 'restore'>
  | DoneActorEvent<WaitOutcome, 'approval'>
  | DoneActorEvent<CallResolution[], 'resolve'>
  | DoneActorEvent<string[], 'runEnd'>
  | ErrorActorEvent<unknown, 'runEnd'>
  | DoneActorEvent<AgentSetup, 'pluginSetup'>
  | ErrorActorEvent<unknown, 'pluginSetup'>
  | DoneActorEvent<boolean, 'afterTurn'>
  | ErrorActorEvent<unknown, 'afterTurn'>
  | DoneActorEvent<void, 'session'>
  | ErrorActorEvent<unknown, 'session'>;

export type RunMachineEventType = RunMachineEvent['type'];
export type { ModelAnswerEvent, PreflightVerdictEvent, ToolsSettledEvent };
