/**
 * Shared plumbing of the crash matrix: real Node processes running test/fixtures/crash-matrix.ts
 * on real SQLite files, killed with SIGKILL once the store holds what a scenario needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import type { CheckpointEntry, StoredRun } from '../../src/index.js';
import type { FixtureConfig } from '../fixtures/crash-matrix.js';

export type { FixtureConfig };
export type { Scenario } from '../fixtures/crash-agents.js';

/** One parsed output line of the fixture. */
export interface FixtureLine {
  readonly event?: {
    readonly type: string;
    readonly runId: string;
    readonly callId?: string;
    readonly approvalId?: string;
    readonly output?: string;
    readonly delta?: string;
    readonly error?: string;
    readonly entries?: number;
    readonly owner?: string;
    readonly expiresAt?: number;
  };
  readonly result?: { readonly output: string; readonly turns: number };
  readonly suspended?: ReadonlyArray<{ readonly approvalId: string; readonly callId: string; readonly tool: string }>;
  readonly error?: { readonly name: string; readonly code?: string; readonly message: string };
  readonly decided?: Record<string, unknown>;
  readonly signalled?: ReadonlyArray<Record<string, unknown>>;
  readonly requests?: Record<string, ReadonlyArray<{ readonly agent: string; readonly system: string; readonly messages: readonly string[] }>>;
}

export interface Finished {
  /** Exit code (null when killed). */
  readonly code: number | null;
  readonly lines: readonly FixtureLine[];
  readonly stderr: string;
  readonly pid: number;
}

export interface Running {
  readonly pid: number;
  readonly lines: FixtureLine[];
  /** Resolves when the process ends. */
  readonly done: Promise<Finished>;
  /** SIGKILL; resolves once it is gone. */
  kill(): Promise<Finished>;
}

/** A fresh directory with a database path, a marks file path and a gate path; removed by `cleanup`. */
export function workspace(prefix: string): { dir: string; file(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `troupe-crash-${prefix}-`));
  return { dir, file: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Fixture processes still running. A test that fails (or times out) before it kills or awaits
 * its process would leave it running after vitest exits (a fixture keeps itself alive), so
 * every test file that uses these helpers kills what is left when it ends.
 */
const alive = new Set<ChildProcess>();
afterAll(() => {
  for (const child of alive) child.kill('SIGKILL');
});

/** Starts one fixture process. */
export function start(config: FixtureConfig): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-matrix.ts', JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  alive.add(child);
  child.on('exit', () => alive.delete(child));
  const lines: FixtureLine[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as FixtureLine);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => resolve({ code: signal ? null : code, lines, stderr, pid: child.pid! })),
  );
  return { pid: child.pid!, lines, done, kill: () => (child.kill('SIGKILL'), done) };
}

/** Runs a fixture process to its end. */
export function run(config: FixtureConfig): Promise<Finished> {
  return start(config).done;
}

/** Polls until `ready` holds (checked every 10 ms); rejects with `what` after 60 s or when the process ended first. */
export async function until(process: Running, what: string, ready: () => boolean): Promise<void> {
  let ended: Finished | undefined;
  void process.done.then((f) => (ended = f));
  const deadline = Date.now() + 60_000;
  while (!ready()) {
    if (ended) throw new Error(`the fixture ended (code ${ended.code}) before ${what}: ${ended.stderr}\n${JSON.stringify(ended.lines)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The run as the store holds it now (its own connection, closed again). */
export function load(db: string, runId: string): StoredRun | undefined {
  if (!existsSync(db)) return undefined;
  const store = new SqliteCheckpointStore(db);
  try {
    return store.load(runId);
  } finally {
    store.close();
  }
}

/** An entry in a compact form: `result:<callId>`, `reply:<turn>`, `handoff:a>b`, `approval_request:<callId>`, ... */
export function describeEntry(entry: CheckpointEntry): string {
  switch (entry.kind) {
    case 'result':
      return `result:${(entry.message as { callId: string }).callId}${entry.terminate ? ':terminate' : ''}`;
    case 'reply':
    case 'turn_end':
      return `${entry.kind}:${entry.turn}`;
    case 'handoff':
      return `handoff:${entry.from}>${entry.to}`;
    case 'approval_request':
      return `approval_request:${entry.callId}`;
    case 'approval_decision':
      return `approval_decision:${entry.callId}:${entry.approved ? 'approved' : 'denied'}${entry.editedArguments !== undefined ? `:${entry.editedArguments}` : ''}`;
    case 'subrun_start':
    case 'subrun_end':
      return `${entry.kind}:${entry.callId}:${entry.runId}${entry.kind === 'subrun_end' ? `:${entry.status}` : ''}`;
    case 'input':
      return `input${entry.source && entry.source !== 'input' ? `:${entry.source}` : ''}`;
    case 'wait_request':
      return `wait_request:${entry.callId}:${entry.waitKind}`;
    case 'wait_resolution':
      return `wait_resolution:${entry.callId}:${entry.ended}`;
  }
}

/** The stored entries, described; [] when the run is not stored. */
export function entriesOf(db: string, runId: string): string[] {
  return (load(db, runId)?.entries ?? []).map(describeEntry);
}

/** SIGKILLs the process once the stored entries of `runId` are exactly `expected`. */
export async function killWhenStored(process: Running, db: string, runId: string, expected: readonly string[]): Promise<void> {
  await until(process, `entries ${expected.join(', ')}`, () => JSON.stringify(entriesOf(db, runId)) === JSON.stringify(expected));
  const killed = await process.kill();
  if (killed.code !== null) throw new Error(`the fixture exited on its own with ${killed.code}: ${killed.stderr}`);
}

/** Waits until nobody holds an unexpired lease on the run (a killed process's lease runs out on its own). */
export async function leaseExpired(db: string, runId: string): Promise<void> {
  for (;;) {
    const lease = load(db, runId)?.lease;
    if (!lease || lease.expiresAt < Date.now()) return;
    await new Promise((resolve) => setTimeout(resolve, Math.max(5, lease.expiresAt - Date.now() + 5)));
  }
}

/** Tool executions so far, in order ("<phase> <callId>"). */
export function marks(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean) : [];
}

export function openGate(path: string): void {
  writeFileSync(path, 'open');
}

/** The event types a process printed, `type` or `type:callId` for tool events (deltas and saves left out). */
export function trace(lines: readonly FixtureLine[], runId?: string): string[] {
  return lines
    .filter((l) => l.event && l.event.type !== 'text_delta' && l.event.type !== 'checkpoint_saved' && (runId === undefined || l.event.runId === runId))
    .map((l) => (l.event!.callId ? `${l.event!.type}:${l.event!.callId}` : l.event!.type));
}

/** The final line (result, suspended or error) of a finished process. */
export function outcome(finished: Finished): FixtureLine {
  const last = finished.lines[finished.lines.length - 1];
  if (!last || last.event) throw new Error(`the fixture printed no outcome (code ${finished.code}): ${finished.stderr}`);
  return last;
}
