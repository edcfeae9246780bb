import type { Agent } from '../agent.js';
import type { Tool } from '../tools/tool.js';
import type { AssistantMessage } from '../types.js';

/** The part of a turn's calls the end-of-turn rules look at. */
export interface SettledCall {
  readonly terminate: boolean;
  readonly output: string;
}

/** A batch runs one call at a time when the agent says so or any requested tool is sequential. */
export function isSequentialBatch(agent: Agent, tools: ReadonlyMap<string, Tool>, reply: AssistantMessage): boolean {
  return agent.toolExecution === 'sequential' || reply.toolCalls.some((c) => tools.get(c.name)?.executionMode === 'sequential');
}

/**
 * Terminate rule: every result of a non-empty batch set `terminate: true`, so the run
 * completes without another model call.
 */
export function batchTerminates(calls: readonly SettledCall[]): boolean {
  return calls.length > 0 && calls.every((c) => c.terminate);
}

/**
 * The run is done after this turn: a reply without calls (or one afterModelResponse
 * stopped), or a batch that terminates — unless a message is waiting for the model (then it
 * gets another turn: nothing queued is lost).
 */
export function runFinishes(reply: AssistantMessage | undefined, calls: readonly SettledCall[], waitingMessages: number, stopped = false, softStopped = false): boolean {
  if (!reply || waitingMessages > 0) return false;
  // afterModelResponse's stop makes the reply final (its calls never ran); a waiting message still gets a turn.
  // shouldStopAfterTurn (softStopped) skips the model call the results would trigger.
  return stopped || softStopped || reply.toolCalls.length === 0 || batchTerminates(calls);
}

/** Capacity rule: another call may start while fewer than `max` run (no cap: always). */
export function hasCapacity(inFlight: number, max: number | undefined): boolean {
  return max === undefined || inFlight < max;
}

/** How many queued messages one model request takes from a queue. */
export function takeCount(queued: number, mode: 'all' | 'one-at-a-time' | undefined): number {
  return mode === 'one-at-a-time' ? Math.min(1, queued) : queued;
}

/** The final output: the text of a reply without calls, else the terminating results joined by newlines. */
export function finalOutput(reply: AssistantMessage | undefined, calls: readonly SettledCall[], stopped = false): string {
  if (!reply) return '';
  if (reply.toolCalls.length === 0 || stopped) return reply.content;
  return calls.map((c) => c.output).join('\n');
}

/**
 * Suspend rule: a run parks only when it only waits: something of it waits (`waitOpen`) and
 * no call of it is running (`running`: calls in flight that are not waiting).
 */
export function shouldPark(running: number, waitOpen: boolean): boolean {
  return running === 0 && waitOpen;
}
