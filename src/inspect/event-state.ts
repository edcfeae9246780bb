/**
 * The run chart's state as far as a run's events tell it, for runs XState inspection was not
 * attached to (started while no inspector was open, or loaded after a restart). Coarser than
 * inspection (one state per event, no microsteps) but always available. Dependency-free.
 */
import { RUN_STATE, stateChain } from '../machines/run-states.js';
import type { WireRunEvent } from './wire.js';

/** Deepest state id a run is in after `event` (undefined: the event does not move it). */
export function stateAfter(event: WireRunEvent, inFlight: number): string | undefined {
  switch (event.type) {
    case 'run_started': return RUN_STATE.starting;
    case 'turn_started': return RUN_STATE.model;
    case 'message_completed': {
      const calls = (event.message as { toolCalls?: unknown[] } | undefined)?.toolCalls ?? [];
      return calls.length > 0 ? RUN_STATE.preflight : RUN_STATE.turnEnd;
    }
    case 'approval_required': return RUN_STATE.approvalWait;
    case 'tool_call_started':
    case 'tool_call_completed': return inFlight > 0 ? RUN_STATE.draining : RUN_STATE.preflight;
    case 'checkpoint_saved': return RUN_STATE.checkpoint;
    case 'turn_ended': return RUN_STATE.turnEnd;
    case 'handoff_occurred': return RUN_STATE.handoff;
    case 'run_suspended': return RUN_STATE.suspended;
    case 'run_completed': return RUN_STATE.completed;
    case 'run_failed': return (event.error as { code?: string } | undefined)?.code === 'RUN_CANCELLED' ? RUN_STATE.cancelled : RUN_STATE.failed;
    default: return undefined;
  }
}

/** Active ids (ancestors first) of every run of the tree, by run id, from its events in order. */
export function statesFromEvents(events: readonly WireRunEvent[]): Map<string, string[]> {
  const leaves = new Map<string, string>();
  const inFlight = new Map<string, number>();
  for (const event of events) {
    const n = inFlight.get(event.runId) ?? 0;
    if (event.type === 'tool_call_started') inFlight.set(event.runId, n + 1);
    if (event.type === 'tool_call_completed' && n > 0) inFlight.set(event.runId, n - 1);
    const leaf = stateAfter(event, inFlight.get(event.runId) ?? 0);
    if (leaf) leaves.set(event.runId, leaf);
  }
  const out = new Map<string, string[]>();
  for (const [runId, leaf] of leaves) out.set(runId, stateChain(leaf));
  return out;
}
