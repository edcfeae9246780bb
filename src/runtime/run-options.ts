import { UserError } from '../errors.js';
import type { InspectionEvent } from 'xstate';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { Session } from '../store/session.js';
import type { Budget } from '../types.js';

/**
 * Options of one run. Invalid values (a negative maxTurns, an unknown budget field) fail
 * the run with a UserError before anything runs.
 */
export interface RunOptions<Deps = any> {
  /** Default 10. */
  maxTurns?: number;
  budget?: Budget;
  /** Aborting it cancels the run (an already-aborted signal: no model request is made). */
  signal?: AbortSignal;
  /** User dependencies, reachable in tools as `ctx.deps`. */
  context?: Deps;
  runId?: string;
  /** Auto-deny an approval nobody decided within this time; each waiting call has its own timer. */
  approvalTimeoutMs?: number;
  /**
   * Durable runs: append the run log to `store` under `runId`. When the store already holds
   * that run: "resume" (default) continues it, "restart" deletes it first, "fail" is a UserError.
   */
  checkpoint?: { store: CheckpointStore; runId?: string; ifRunExists?: 'resume' | 'restart' | 'fail' };
  /**
   * Conversation memory: the run starts from the session's history, and when it completes
   * its messages are appended to the session (once per run id).
   */
  session?: { store: Session; id: string };
  /**
   * XState inspection observer for this run's actor system (the run, its executor, tool-call
   * and sub-run actors). Opt-in: without it, inspection costs nothing.
   */
  inspect?: InspectionObserver;
}

/** Receives XState's raw inspection events (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`, …). */
export type InspectionObserver = (event: InspectionEvent) => void;

const BUDGET_KEYS = ['maxInputTokens', 'maxOutputTokens', 'maxTotalTokens', 'maxToolCalls', 'maxDurationMs'] as const;

/** Rejects bad run input and options up front, so a typo fails the run clearly instead of silently disabling a limit. */
export function validateRunOptions(input: unknown, options: RunOptions): void {
  if (typeof input !== 'string') throw new UserError(`Run input must be a string, got ${input === null ? 'null' : typeof input}.`);
  if (options.maxTurns !== undefined && (!Number.isInteger(options.maxTurns) || options.maxTurns < 1)) {
    throw new UserError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}.`);
  }
  if (options.approvalTimeoutMs !== undefined && !(Number.isFinite(options.approvalTimeoutMs) && options.approvalTimeoutMs >= 0)) {
    throw new UserError(`approvalTimeoutMs must be a non-negative number, got ${String(options.approvalTimeoutMs)}.`);
  }
  const budget = options.budget;
  if (budget === undefined) return;
  for (const key of Object.keys(budget)) {
    if (!(BUDGET_KEYS as readonly string[]).includes(key)) throw new UserError(`Unknown budget field '${key}'; expected one of ${BUDGET_KEYS.join(', ')}.`);
    const value = (budget as Record<string, unknown>)[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new UserError(`Budget field '${key}' must be a non-negative number, got ${String(value)}.`);
    }
  }
}
