import type { RunEvent } from '../types.js';
import type { Choice } from './explore-types.js';

/** One event as a short line: `<agent path> <type> <what>`, e.g. `Triage > Research tool_call_completed weather ok`. */
export function stepOf(event: RunEvent): string {
  const who = event.path.join(' > ');
  switch (event.type) {
    case 'tool_call_started':
    case 'tool_call_progress':
      return `${who} ${event.type} ${event.call.name}`;
    case 'approval_required':
      return `${who} approval_required ${event.call.name}`;
    case 'tool_call_failed':
      return `${who} tool_call_failed ${event.call.name} attempt ${event.attempt}${event.willRetry ? ' (retrying)' : ''}`;
    case 'tool_call_completed':
      return `${who} tool_call_completed ${event.call.name} ${event.isError ? 'error' : 'ok'}`;
    case 'wait_opened':
      return `${who} wait_opened ${event.kind}`;
    case 'wait_resolved':
      return `${who} wait_resolved ${event.timedOut ? 'timed out' : 'resolved'}`;
    case 'message_completed':
      return `${who} message_completed${event.message.toolCalls.length ? ` calls ${event.message.toolCalls.map((c) => c.name).join(', ')}` : ' text'}`;
    case 'handoff_occurred':
      return `${who} handoff_occurred ${event.from} -> ${event.to}`;
    case 'run_failed':
      return `${who} run_failed ${event.error.name}`;
    case 'turn_started':
    case 'turn_ended':
      return `${who} ${event.type} ${event.turn}`;
    default:
      return `${who} ${event.type}`;
  }
}

/**
 * A path's name: its choices as `<where>: <option>`, joined with ` › `; points with one option
 * (a script, no cancels) are left out, and so are states a run went on from (`cancelInStates`:
 * only a cancel there is named), as is everything when nothing was chosen (`(no choices)`).
 */
export function pathName(choices: readonly Choice[]): string {
  const real = choices.filter((c) => c.options.length > 1 && c.options[c.took] !== 'go on');
  return real.length ? real.map((c) => `${c.at}: ${c.options[c.took]}`).join(' › ') : '(no choices)';
}
