import { UserError } from '../errors.js';
import type { Message } from '../types.js';
import { checkMessages } from './format.js';

type MaybePromise<T> = T | Promise<T>;

/**
 * Conversation memory across runs: per session id, the messages of each completed run, in the
 * order the runs were appended. `append` is idempotent per run id, so a run that is resumed and
 * completes again does not duplicate its messages.
 */
export interface Session {
  /**
   * Stores `messages` as run `runId` of session `sessionId`. Returns true when stored, false
   * when that run was already stored with the same messages (nothing changes). Throws a
   * UserError when the run was already stored with different messages.
   */
  append(sessionId: string, runId: string, messages: readonly Message[]): MaybePromise<boolean>;
  /** Every stored message of the session: runs in append order, each run's messages in order. */
  history(sessionId: string): MaybePromise<Message[]>;
  /** Forgets the session (its runs may then be appended again). */
  clear(sessionId: string): MaybePromise<void>;
  /** Releases the session's resources; a closed session refuses further use. */
  close?(): MaybePromise<void>;
}

/** In-process session memory. Messages are validated, then kept by reference. */
export class MemorySession implements Session {
  private readonly sessions = new Map<string, Map<string, readonly Message[]>>();

  append(sessionId: string, runId: string, messages: readonly Message[]): boolean {
    checkIds(sessionId, runId);
    checkMessages(messages, `session '${sessionId}' run '${runId}'`);
    let runs = this.sessions.get(sessionId);
    const stored = runs?.get(runId);
    if (stored) {
      assertSameRun(stored, messages, sessionId, runId);
      return false;
    }
    if (!runs) this.sessions.set(sessionId, (runs = new Map()));
    runs.set(runId, [...messages]);
    return true;
  }

  history(sessionId: string): Message[] {
    const out: Message[] = [];
    for (const messages of this.sessions.get(sessionId)?.values() ?? []) for (const message of messages) out.push(message);
    return out;
  }

  clear(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  close(): void {}
}

/** @internal */
export function checkIds(sessionId: unknown, runId: unknown): void {
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw new UserError(`A session id must be a non-empty string, got ${JSON.stringify(sessionId)}.`);
  if (typeof runId !== 'string' || runId.length === 0) throw new UserError(`A run id must be a non-empty string, got ${JSON.stringify(runId)}.`);
}

/** @internal Throws unless a repeated append carries the messages already stored for the run. */
export function assertSameRun(stored: readonly Message[], messages: readonly Message[], sessionId: string, runId: string): void {
  if (stored.length === messages.length && stored.every((message, i) => canonical(message) === canonical(messages[i]))) return;
  throw new UserError(
    `Session '${sessionId}' already holds run '${runId}' with different messages (${stored.length} stored, ${messages.length} given); a run is stored once. Clear the session to store it again.`,
  );
}

/** JSON with sorted keys and undefined members dropped, so equal messages compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
    return sorted;
  });
}
