/**
 * Every stored format version that must keep loading. The fixtures under test/fixtures were
 * written by make-store-fixtures.ts from store-v1.data.ts and are frozen: this test opens
 * copies of them (never the files themselves) and checks that they load to exactly that data.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/store/checkpoint-store.js';
import { CHECKPOINT_SCHEMA_VERSION, exportRun, parseRunExport } from '../../src/store/format.js';
import { SqliteCheckpointStore } from '../../src/store/sqlite-checkpoint-store.js';
import { SqliteSession } from '../../src/store/sqlite-session.js';
import { completedRun, failedRun, interruptedRun, sessionRuns, summaries } from '../fixtures/store-v1.data.js';
import { suspendedRun } from '../fixtures/store-v2.data.js';
import { editedRun } from '../fixtures/store-v3.data.js';
import { REPORT_UNTIL, waitingRun } from '../fixtures/store-v4.data.js';
import { abortedRun } from '../fixtures/store-v5.data.js';
import { resolvedRun } from '../fixtures/store-v6.data.js';
import { z } from 'zod';
import { Agent, Runner, tool, type RunEvent } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { expectUserError, head, input, raw, turnEnd, useTempDir } from './store-helpers.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
const tempDir = useTempDir();
const runs = [completedRun, interruptedRun, failedRun];

/** A private copy of store-v1.sqlite. */
function copyV1(): string {
  const path = join(tempDir(), 'store-v1.sqlite');
  copyFileSync(join(fixtures, 'store-v1.sqlite'), path);
  return path;
}

describe('version 1 fixtures', () => {
  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v1.sqlite'))).digest('hex');
    expect(sha).toBe('2d2bd14c3b7627c64f940df63d86a036f62000d6567aca7a11814f097bf1906b');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v1.sqlite'))).toEqual(['store-v1.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v1')).sort()).toEqual(['run-completed.json', 'run-failed.json', 'run-interrupted.json']);
  });

  it('store-v1.sqlite loads every run exactly', () => {
    const store = new SqliteCheckpointStore(copyV1());
    for (const run of runs) expect(store.load(run.runId)).toEqual({ entries: run.entries, head: run.head, schemaVersion: 1 });
    expect(store.list()).toEqual(summaries);
    expect(store.list({ status: 'running' }).map((r) => r.runId)).toEqual(['run-interrupted']);
    store.close();
  });

  it('store-v1.sqlite takes further appends after the stored entries', () => {
    const path = copyV1();
    const store = new SqliteCheckpointStore(path, { now: () => 5 });
    const resumed = head({ agent: 'travel', turn: 1, status: 'completed', output: 'booked' });
    store.append('run-interrupted', [{ kind: 'result', turn: 1, message: { role: 'tool', callId: 'h2', name: 'book', content: 'ok', isError: false } }, turnEnd(1)], resumed);
    store.append('run-new', [input('new')], head());
    store.close();
    const reopened = new SqliteCheckpointStore(path);
    expect(reopened.load('run-interrupted')?.entries).toEqual([
      ...interruptedRun.entries,
      { kind: 'result', turn: 1, message: { role: 'tool', callId: 'h2', name: 'book', content: 'ok', isError: false } },
      turnEnd(1),
    ]);
    expect(reopened.load('run-completed')?.entries).toEqual(completedRun.entries);
    expect(reopened.list().map((r) => [r.runId, r.entries, r.head.status])).toEqual([
      ['run-completed', 7, 'completed'],
      ['run-interrupted', 5, 'completed'],
      ['run-failed', 4, 'failed'],
      ['run-new', 1, 'running'],
    ]);
    reopened.close();
  });

  it('store-v1.sqlite holds the session history, each run once', () => {
    const session = new SqliteSession(copyV1());
    expect(session.history('chat-1')).toEqual(sessionRuns.flatMap(([, messages]) => messages));
    const [first] = sessionRuns;
    expect(session.append('chat-1', ...first!)).toBe(false);
    session.close();
  });

  it('checkpoint-v1/*.json parse exactly and import into a store', () => {
    for (const run of runs) {
      const text = readFileSync(join(fixtures, 'checkpoint-v1', `${run.runId}.json`), 'utf8');
      const parsed = parseRunExport(text, `${run.runId}.json`);
      expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 1, runId: run.runId, head: run.head, entries: run.entries });
      const store = new MemoryCheckpointStore();
      store.append(parsed.runId, parsed.entries, parsed.head);
      // Importing is appending, which writes the current format; the records themselves are unchanged.
      expect(exportRun(run.runId, store.load(run.runId)!)).toEqual({ ...parsed, schemaVersion: CHECKPOINT_SCHEMA_VERSION });
      // The writer's output is byte-identical to the fixture but for the version it writes.
      expect(`${JSON.stringify(exportRun(run.runId, store.load(run.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 1,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
    }
  });

  it('a copy of store-v1.sqlite with a damaged record fails loudly, naming the record', () => {
    const path = copyV1();
    const db = raw(path);
    db.prepare("UPDATE troupe_entries SET data = '{\"kind\":\"reply\",\"turn\":2}' WHERE run_id = 'run-completed' AND seq = 6").run();
    db.close();
    const store = new SqliteCheckpointStore(path);
    expectUserError(() => store.load('run-completed'), `SQLite checkpoint store '${path}': run 'run-completed' entry 6 is corrupt: missing field 'message'.`);
    expect(store.load('run-failed')?.entries).toEqual(failedRun.entries);
    store.close();
  });
});

describe('version 2 fixtures', () => {
  /** A private copy of store-v2.sqlite. */
  function copyV2(): string {
    const path = join(tempDir(), 'store-v2.sqlite');
    copyFileSync(join(fixtures, 'store-v2.sqlite'), path);
    return path;
  }

  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v2.sqlite'))).digest('hex');
    expect(sha).toBe('3f13ca86a49e91cf7e4c04e9e8f232e569a709a4f0f05302a66c2a8d336e9d8b');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v2.sqlite'))).toEqual(['store-v2.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v2'))).toEqual(['run-suspended.json']);
  });

  it('store-v2.sqlite loads the suspended run with every format-2 entry kind exactly', () => {
    const store = new SqliteCheckpointStore(copyV2());
    expect(store.load(suspendedRun.runId)).toEqual({ entries: suspendedRun.entries, head: suspendedRun.head, schemaVersion: 2 });
    expect(store.list({ status: 'suspended' }).map((r) => [r.runId, r.entries])).toEqual([[suspendedRun.runId, suspendedRun.entries.length]]);
    store.close();
  });

  it('checkpoint-v2/run-suspended.json parses exactly and imports byte for byte', () => {
    const text = readFileSync(join(fixtures, 'checkpoint-v2', 'run-suspended.json'), 'utf8');
    const parsed = parseRunExport(text, 'run-suspended.json');
    expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 2, runId: suspendedRun.runId, head: suspendedRun.head, entries: suspendedRun.entries });
    const store = new MemoryCheckpointStore();
    store.append(parsed.runId, parsed.entries, parsed.head);
    // Appending writes the current version; everything else is byte for byte.
    expect(`${JSON.stringify(exportRun(parsed.runId, store.load(parsed.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 2,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
  });
});

describe('version 3 fixtures', () => {
  /** A private copy of store-v3.sqlite. */
  function copyV3(): string {
    const path = join(tempDir(), 'store-v3.sqlite');
    copyFileSync(join(fixtures, 'store-v3.sqlite'), path);
    return path;
  }

  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v3.sqlite'))).digest('hex');
    expect(sha).toBe('55fb1e680551f93ce532f6ed833eb0531912e2af14c631942c3f60d5980b9350');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v3.sqlite'))).toEqual(['store-v3.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v3'))).toEqual(['run-edited.json']);
  });

  it('store-v3.sqlite loads the run with its edited approval exactly', () => {
    const store = new SqliteCheckpointStore(copyV3());
    expect(store.load(editedRun.runId)).toEqual({ entries: editedRun.entries, head: editedRun.head, schemaVersion: 3 });
    store.close();
  });

  it('checkpoint-v3/run-edited.json parses exactly and imports byte for byte', () => {
    const text = readFileSync(join(fixtures, 'checkpoint-v3', 'run-edited.json'), 'utf8');
    const parsed = parseRunExport(text, 'run-edited.json');
    expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 3, runId: editedRun.runId, head: editedRun.head, entries: editedRun.entries });
    const store = new MemoryCheckpointStore();
    store.append(parsed.runId, parsed.entries, parsed.head);
    // Appending writes the current version; everything else is byte for byte.
    expect(`${JSON.stringify(exportRun(parsed.runId, store.load(parsed.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 3,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
  });

  it('resuming the stored run runs the approved edited arguments, not the model\'s', async () => {
    const store = new SqliteCheckpointStore(copyV3());
    const ran: string[] = [];
    const shell = tool({ name: 'shell', description: 'd', parameters: z.object({ cmd: z.string() }), needsApproval: true, execute: ({ cmd }) => (ran.push(cmd), `ran ${cmd}`) });
    const model = new ScriptedModel([text('cleaned')]);
    const result = await Runner.resume(new Agent({ name: 'operator', model, tools: [shell] }), { store, runId: editedRun.runId }).result();
    expect(result.output).toBe('cleaned');
    expect(ran).toEqual(['ls']);
    expect(model.requests[0]!.messages.at(-1)).toEqual({ role: 'tool', callId: 'x1', name: 'shell', content: 'ran ls', isError: false });
    store.close();
  });
});

describe('version 4 fixtures', () => {
  /** A private copy of store-v4.sqlite. */
  function copyV4(): string {
    const path = join(tempDir(), 'store-v4.sqlite');
    copyFileSync(join(fixtures, 'store-v4.sqlite'), path);
    return path;
  }

  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v4.sqlite'))).digest('hex');
    expect(sha).toBe('ed7807f1a13a15a4ea02a2283691c4df86f9732fb80d6ef8c3a4f65bcee11234');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v4.sqlite'))).toEqual(['store-v4.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v4'))).toEqual(['run-waiting.json']);
  });

  it('store-v4.sqlite loads the parked run with its calls\' waits exactly', () => {
    const store = new SqliteCheckpointStore(copyV4());
    expect(store.load(waitingRun.runId)).toEqual({ entries: waitingRun.entries, head: waitingRun.head, schemaVersion: 4 });
    store.close();
  });

  it('checkpoint-v4/run-waiting.json parses exactly and imports byte for byte', () => {
    const text = readFileSync(join(fixtures, 'checkpoint-v4', 'run-waiting.json'), 'utf8');
    const parsed = parseRunExport(text, 'run-waiting.json');
    expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 4, runId: waitingRun.runId, head: waitingRun.head, entries: waitingRun.entries });
    const store = new MemoryCheckpointStore();
    store.append(parsed.runId, parsed.entries, parsed.head);
    expect(`${JSON.stringify(exportRun(parsed.runId, store.load(parsed.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 4,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
  });

  it('resumed, the paid call gets its delivered payload and the report waits for its time again; no tool runs again', async () => {
    const store = new SqliteCheckpointStore(copyV4());
    const ran: string[] = [];
    const pay = tool({ name: 'pay', description: 'd', parameters: z.object({ order: z.string() }), execute: () => (ran.push('pay'), 'unexpected') });
    const report = tool({ name: 'report', description: 'd', parameters: z.object({}), execute: () => (ran.push('report'), 'unexpected') });
    const handle = Runner.resume(new Agent({ name: 'planner', model: new ScriptedModel([text('all done')]), tools: [pay, report] }), { store, runId: waitingRun.runId, suspendOnWait: true });
    const events: RunEvent[] = [];
    for await (const event of handle) events.push(event);
    expect(ran).toEqual([]);
    expect(events.filter((e) => e.type === 'tool_call_completed').map((e) => [(e as { call: { id: string } }).call.id, (e as { output: string }).output])).toEqual([['p1', '{"amount":1200,"currency":"EUR"}']]);
    expect(events.at(-1)).toMatchObject({ type: 'run_suspended', waits: [{ waitId: 'run-waiting:2.1', kind: 'timer', deadline: REPORT_UNTIL }] });
    store.close();
  });
});

describe('version 5 fixtures', () => {
  /** A private copy of store-v5.sqlite. */
  function copyV5(): string {
    const path = join(tempDir(), 'store-v5.sqlite');
    copyFileSync(join(fixtures, 'store-v5.sqlite'), path);
    return path;
  }

  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v5.sqlite'))).digest('hex');
    expect(sha).toBe('e7ab3ee3ec2fd3bf30fc0d33593d9d80a9915da61a72fc00a0ac1ab3fb57727b');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v5.sqlite'))).toEqual(['store-v5.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v5'))).toEqual(['run-aborted.json']);
  });

  it('store-v5.sqlite loads the aborted run exactly: fork origin, ctx.extra, an answered form, a cancelled sub-run, the abort', () => {
    const store = new SqliteCheckpointStore(copyV5());
    expect(store.load(abortedRun.runId)).toEqual({ entries: abortedRun.entries, head: abortedRun.head, schemaVersion: 5 });
    expect(store.list({ status: 'cancelled' }).map((r) => r.runId)).toEqual([abortedRun.runId]);
    store.close();
  });

  it('checkpoint-v5/run-aborted.json parses exactly and imports byte for byte', () => {
    const text = readFileSync(join(fixtures, 'checkpoint-v5', 'run-aborted.json'), 'utf8');
    const parsed = parseRunExport(text, 'run-aborted.json');
    expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 5, runId: abortedRun.runId, head: abortedRun.head, entries: abortedRun.entries });
    const store = new MemoryCheckpointStore();
    store.append(parsed.runId, parsed.entries, parsed.head);
    expect(`${JSON.stringify(exportRun(parsed.runId, store.load(parsed.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 5,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
  });

  it('an aborted run is never resumed: the resume is refused and writes nothing', async () => {
    const store = new SqliteCheckpointStore(copyV5());
    const handle = Runner.resume(new Agent({ name: 'planner', model: new ScriptedModel([text('unexpected')]) }), { store, runId: abortedRun.runId });
    const events: RunEvent[] = [];
    for await (const event of handle) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_failed']);
    expect((events[1] as Extract<RunEvent, { type: 'run_failed' }>).error.message).toBe("Cannot resume run 'run-aborted': it was aborted (Conversation aborted: the customer left).");
    expect(store.load(abortedRun.runId)!.entries).toEqual(abortedRun.entries);
    store.close();
  });
});

describe('version 6 fixtures', () => {
  /** A private copy of store-v6.sqlite. */
  function copyV6(): string {
    const path = join(tempDir(), 'store-v6.sqlite');
    copyFileSync(join(fixtures, 'store-v6.sqlite'), path);
    return path;
  }

  it('are the committed files, unchanged and without WAL side files', () => {
    const sha = createHash('sha256').update(readFileSync(join(fixtures, 'store-v6.sqlite'))).digest('hex');
    expect(sha).toBe('70622f5df34fb568f1df7218bc3568ef24fcff94dd6dd3922d13aad84e57922f');
    expect(readdirSync(fixtures).filter((name) => name.startsWith('store-v6.sqlite'))).toEqual(['store-v6.sqlite']);
    expect(readdirSync(join(fixtures, 'checkpoint-v6'))).toEqual(['run-resolved.json']);
  });

  it('store-v6.sqlite loads the run exactly: custom-role input and steer, resolved results, an approval with a logged deadline denied by it', () => {
    const store = new SqliteCheckpointStore(copyV6());
    expect(store.load(resolvedRun.runId)).toEqual({ entries: resolvedRun.entries, head: resolvedRun.head, schemaVersion: 6 });
    expect(store.list({ status: 'completed' }).map((r) => r.runId)).toEqual([resolvedRun.runId]);
    store.close();
  });

  it('checkpoint-v6/run-resolved.json parses exactly and imports byte for byte', () => {
    const text = readFileSync(join(fixtures, 'checkpoint-v6', 'run-resolved.json'), 'utf8');
    const parsed = parseRunExport(text, 'run-resolved.json');
    expect(parsed).toEqual({ format: 'troupe.checkpoint', schemaVersion: 6, runId: resolvedRun.runId, head: resolvedRun.head, entries: resolvedRun.entries });
    const store = new MemoryCheckpointStore();
    store.append(parsed.runId, parsed.entries, parsed.head);
    expect(`${JSON.stringify(exportRun(parsed.runId, store.load(parsed.runId)!), null, 2)}\n`).toBe(text.replace('"schemaVersion": 6,', `"schemaVersion": ${CHECKPOINT_SCHEMA_VERSION},`));
  });

  it('the completed run replays from the log without calling the model', async () => {
    const store = new SqliteCheckpointStore(copyV6());
    const handle = Runner.resume(new Agent({ name: 'desk', model: new ScriptedModel([]) }), { store, runId: resolvedRun.runId });
    const events: RunEvent[] = [];
    for await (const event of handle) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['run_started', 'run_completed']);
    expect(events[1]).toMatchObject({ output: resolvedRun.head.output });
    expect(store.load(resolvedRun.runId)!.entries).toEqual(resolvedRun.entries);
    store.close();
  });
});
