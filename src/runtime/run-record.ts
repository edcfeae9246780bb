/**
 * What a run writes about itself: entries appended to its log, the head stored with them, and
 * the final output both are made from.
 */
import { checkOutput } from '../rules/output.js';
import { finalOutput } from '../rules/batch.js';
import type { CheckpointEntry, CheckpointHead, StoredRunStatus } from '../store/checkpoint-store.js';
import { withExtra } from './extra.js';
import type { RunState } from './run-state.js';

/** Appends one entry to the run's log (when it has a checkpoint store). */
export function log(state: RunState, entry: CheckpointEntry): void {
  state.runLog?.append(state.extra ? withStoredExtra(state, [entry]) : [entry], head(state, 'running'));
}

/**
 * `entries` preceded by an `extra` entry when `ctx.extra` changed since it was last stored. A
 * value JSON cannot write fails the run (`log.failed`, as a failed write) and `entries` are appended alone.
 */
export function withStoredExtra(state: RunState, entries: CheckpointEntry[]): CheckpointEntry[] {
  try {
    return withExtra(state.extra, entries);
  } catch (error) {
    const self = state.self;
    if (self.getSnapshot().status === 'active') self.send({ type: 'log.failed', error: error as Error });
    return entries;
  }
}

export function head(state: RunState, status: StoredRunStatus, error?: Error): CheckpointHead {
  const output = status === 'completed' ? completedOutput(state) : '';
  // Written on every append: optional fields are set, not spread (spreading into a literal is a slow path on Node 20).
  const written: { -readonly [K in keyof CheckpointHead]: CheckpointHead[K] } = { agent: state.agent.name, turn: state.turn, usage: { ...state.usage }, status };
  if (output) written.output = output;
  if (error) written.error = { name: error.name, message: error.message };
  return written;
}

/** The run's final output: a replayed completed run's stored one, else this turn's final reply or terminating results. */
export function completedOutput(state: RunState): string {
  return state.replayCompleted ? state.storedOutput : finalOutput(state.batch.reply, state.batch.slots, state.batch.stopped);
}

/** The run's final output value: the outputType's parsed value when the agent has one, else the output text. */
export function finalValue(state: RunState): unknown {
  const text = completedOutput(state);
  const outputType = state.agent.outputType;
  if (!outputType) return text;
  const check = checkOutput(outputType, text);
  return check.ok ? check.value : undefined;
}
