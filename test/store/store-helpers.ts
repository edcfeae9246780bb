import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { CheckpointEntry, CheckpointHead } from '../../src/store/checkpoint-store.js';

/** A fresh temporary folder per test, removed afterwards. */
export function useTempDir(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-store-'));
    dirs.push(dir);
    return dir;
  };
}

/** Asserts that `fn` throws a UserError with exactly `message`. */
export function expectUserError(fn: () => unknown, message: string): UserError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(UserError);
  expect((thrown as UserError).message).toBe(message);
  return thrown as UserError;
}

/** A second, raw connection to a store's file (to inspect or damage it). */
export function raw(path: string): Database.Database {
  return new Database(path);
}

/** A deterministic clock: start, start + 1, … */
export function ticks(start = 1000): () => number {
  let t = start;
  return () => t++;
}

export const usage = (n: number) => ({ inputTokens: n, outputTokens: n, totalTokens: 2 * n, requests: n });

export const head = (over: Partial<CheckpointHead> = {}): CheckpointHead => ({ agent: 'a', turn: 0, usage: usage(0), status: 'running', ...over });

export const input = (content = 'q'): CheckpointEntry => ({ kind: 'input', message: { role: 'user', content } });

export const reply = (turn: number, calls: string[] = [], content = ''): CheckpointEntry => ({
  kind: 'reply',
  turn,
  message: { role: 'assistant', content, toolCalls: calls.map((id) => ({ id, name: 'echo', arguments: '{}' })), agent: 'a' },
});

export const result = (turn: number, callId: string, content = `r-${callId}`): CheckpointEntry => ({
  kind: 'result',
  turn,
  message: { role: 'tool', callId, name: 'echo', content, isError: false },
});

export const turnEnd = (turn: number): CheckpointEntry => ({ kind: 'turn_end', turn });
