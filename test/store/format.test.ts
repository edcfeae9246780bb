import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { MemoryCheckpointStore } from '../../src/store/checkpoint-store.js';
import { CHECKPOINT_SCHEMA_VERSION, SESSION_SCHEMA_VERSION, exportRun, parseRunExport } from '../../src/store/format.js';
import { expectUserError, head, input, reply, result, turnEnd } from './store-helpers.js';

const doc = () => ({
  format: 'troupe.checkpoint',
  schemaVersion: 6,
  runId: 'r1',
  head: head({ turn: 1, status: 'completed', output: 'ok' }),
  entries: [input(), reply(1, ['c1']), result(1, 'c1'), turnEnd(1)] as unknown[],
});

describe('record format versions', () => {
  it('are 6 for checkpoints (custom roles, resolved calls, approval deadlines) and 1 for sessions', () => {
    expect(CHECKPOINT_SCHEMA_VERSION).toBe(6);
    expect(SESSION_SCHEMA_VERSION).toBe(1);
  });
});

describe('JSON export', () => {
  it('round-trips a stored run through JSON text', () => {
    const store = new MemoryCheckpointStore();
    store.append('r1', [input(), reply(1, ['c1']), result(1, 'c1')], head({ turn: 1 }));
    store.append('r1', [turnEnd(1)], head({ turn: 1, status: 'completed', output: 'ok' }));
    const exported = exportRun('r1', store.load('r1')!);
    expect(exported).toEqual(doc());
    const text = JSON.stringify(exported);
    expect(parseRunExport(text)).toEqual(doc());
    // Import = append the entries to a store that does not hold the run yet.
    const other = new MemoryCheckpointStore();
    const parsed = parseRunExport(text);
    other.append(parsed.runId, parsed.entries, parsed.head);
    expect(other.load('r1')).toEqual(store.load('r1'));
  });

  it('accepts an already parsed value', () => {
    expect(parseRunExport(doc())).toEqual(doc());
  });

  it('refuses text that is not JSON, naming the source', () => {
    let thrown: unknown;
    try {
      parseRunExport('{"format":', 'backup.json');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UserError);
    expect((thrown as Error).message.startsWith('backup.json is corrupt: not valid JSON (')).toBe(true);
    expect((thrown as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it('refuses a newer schemaVersion with an upgrade hint', () => {
    expectUserError(
      () => parseRunExport({ ...doc(), schemaVersion: 7 }, 'backup.json'),
      'backup.json uses checkpoint schemaVersion 7, but this version of troupe reads only up to 6; upgrade troupe to load it.',
    );
  });

  it('refuses a malformed document', () => {
    expectUserError(() => parseRunExport([]), 'run export is corrupt: expected a JSON object, got an array.');
    expectUserError(() => parseRunExport({ ...doc(), format: 'other' }), 'run export is corrupt: field \'format\' must be "troupe.checkpoint", got "other".');
    expectUserError(() => parseRunExport({ ...doc(), schemaVersion: '1' }), 'run export is corrupt: its checkpoint schemaVersion must be a positive integer, got "1".');
    expectUserError(() => parseRunExport({ ...doc(), schemaVersion: undefined }), 'run export is corrupt: its checkpoint schemaVersion must be a positive integer, got undefined.');
    expectUserError(() => parseRunExport({ ...doc(), runId: '' }), 'run export is corrupt: field \'runId\' must be a non-empty string, got "".');
    expectUserError(() => parseRunExport({ ...doc(), entries: {} }), "run export is corrupt: field 'entries' must be an array, got an object.");
    expectUserError(
      () => parseRunExport({ ...doc(), head: { ...head(), turn: 1.5 } }),
      "run export, head of run 'r1' is corrupt: field 'turn' must be a non-negative integer, got 1.5.",
    );
  });

  it('refuses every corrupt entry instead of skipping it', () => {
    const withEntry = (entry: unknown, at = 2) => {
      const d = doc();
      d.entries[at - 1] = entry;
      return d;
    };
    const cases: Array<[unknown, string]> = [
      [null, 'an entry must be an object, got null'],
      ['turn_end', 'an entry must be an object, got "turn_end"'],
      [{ turn: 1 }, "missing field 'kind'"],
      [{ kind: 7 }, "field 'kind' must be a string, got 7"],
      [{ kind: 'note' }, 'unknown entry kind "note"'],
      [{ kind: 'input' }, "missing field 'message'"],
      [{ kind: 'input', message: 'hi' }, "field 'message' must be an object, got \"hi\""],
      [{ kind: 'input', message: { role: 'user' } }, "missing field 'message.content'"],
      [{ kind: 'input', message: { role: 'assistant', content: '' } }, "field 'message.role' must be 'user', got \"assistant\""],
      [{ kind: 'reply', message: { role: 'assistant' } }, "missing field 'turn'"],
      [{ kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'a' } }, "missing field 'message.toolCalls'"],
      [{ kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'a', toolCalls: {} } }, "field 'message.toolCalls' must be an array, got an object"],
      [
        { kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'a', toolCalls: [{ id: 'c', name: 'n', arguments: {} }] } },
        "field 'message.toolCalls[0].arguments' must be a string, got an object",
      ],
      [{ kind: 'reply', turn: 1, message: { role: 'assistant', content: '', agent: 'a', toolCalls: [], reasoning: 3 } }, "field 'message.reasoning' must be a string, got 3"],
      [{ kind: 'result', turn: 1, message: { role: 'tool', callId: 'c', name: 'n', content: 'x', isError: 'no' } }, "field 'message.isError' must be a boolean, got \"no\""],
      [{ kind: 'turn_end', turn: null }, "field 'turn' must be a non-negative integer, got null"],
      [{ kind: 'turn_end' }, "missing field 'turn'"],
    ];
    for (const [entry, issue] of cases) {
      expectUserError(() => parseRunExport(withEntry(entry)), `run export, run 'r1' entry 2 is corrupt: ${issue}.`);
    }
    expectUserError(() => parseRunExport(withEntry({ kind: 'turn_end' }, 4)), "run export, run 'r1' entry 4 is corrupt: missing field 'turn'.");
  });
});
