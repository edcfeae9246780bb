/**
 * The stored record format (src/store/format.md): versions, validation of entries, heads and
 * messages, and the JSON export of a run. Every reader goes through here, so a record that
 * does not match the format is a UserError naming the record, never a crash or a skip.
 */
import { UserError } from '../errors.js';
import { contentPartsIssue, providerMetadataIssue, reasoningPartsIssue } from '../message-parts.js';
import type { Message } from '../types.js';
import type { CheckpointEntry, CheckpointHead, RunStatus, StoredRun } from './checkpoint-store.js';

/** Version of the checkpoint record format (entries and head) this build writes and the newest it reads. */
export const CHECKPOINT_SCHEMA_VERSION = 3;
/** Version of the session record format (messages per run) this build writes and the newest it reads. */
export const SESSION_SCHEMA_VERSION = 1;

/** `format` tag of a run exported as JSON. */
export const RUN_EXPORT_FORMAT = 'troupe.checkpoint';

/** A run as a self-describing JSON document (see format.md, "JSON export"). */
export interface RunExport {
  readonly format: typeof RUN_EXPORT_FORMAT;
  readonly schemaVersion: number;
  readonly runId: string;
  readonly head: CheckpointHead;
  readonly entries: readonly CheckpointEntry[];
}

/** Every stored status, in the order messages list them. */
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'suspended', 'completed', 'failed', 'interrupted'];

/** Stored statuses of a run that is over: nothing will continue it. */
export const FINISHED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'interrupted'];

/** Whether a stored status (or `queued`, or nothing) is one of a run that is over. */
export function isFinished(status: string | undefined): boolean {
  return (FINISHED_STATUSES as readonly string[]).includes(status ?? '');
}

const INPUT_SOURCES = ['input', 'mailbox', 'steer', 'follow_up', 'hook', 'repair'];

/** A format violation found while checking a value; turned into a UserError by the callers. */
class Issue extends Error {}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function field(obj: Obj, key: string, path: string): unknown {
  if (!(key in obj) || obj[key] === undefined) throw new Issue(`missing field '${path}${key}'`);
  return obj[key];
}

function str(obj: Obj, key: string, path: string): string {
  const value = field(obj, key, path);
  if (typeof value !== 'string') throw new Issue(`field '${path}${key}' must be a string, got ${describe(value)}`);
  return value;
}

function optStr(obj: Obj, key: string, path: string): void {
  if (obj[key] !== undefined) str(obj, key, path);
}

function bool(obj: Obj, key: string, path: string): void {
  const value = field(obj, key, path);
  if (typeof value !== 'boolean') throw new Issue(`field '${path}${key}' must be a boolean, got ${describe(value)}`);
}

function count(obj: Obj, key: string, path: string): number {
  const value = field(obj, key, path);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Issue(`field '${path}${key}' must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

function amount(obj: Obj, key: string, path: string): void {
  const value = field(obj, key, path);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new Issue(`field '${path}${key}' must be a non-negative number, got ${describe(value)}`);
  }
}

function obj(parent: Obj, key: string, path: string): Obj {
  const value = field(parent, key, path);
  if (!isObj(value)) throw new Issue(`field '${path}${key}' must be an object, got ${describe(value)}`);
  return value;
}

/** Optional fields added within format 1 (older records lack them): content parts, reasoning parts, provider metadata. */
function optional(obj: Obj, key: string, path: string, issueOf: (value: unknown) => string | undefined): void {
  if (obj[key] === undefined) return;
  const issue = issueOf(obj[key]);
  if (issue) throw new Issue(`field '${path}${key}' ${issue}`);
}

function checkMessage(value: unknown, path: string, role?: Message['role']): void {
  if (!isObj(value)) throw new Issue(`'${path.slice(0, -1) || 'message'}' must be an object, got ${describe(value)}`);
  const actual = str(value, 'role', path);
  if (role && actual !== role) throw new Issue(`field '${path}role' must be '${role}', got ${describe(actual)}`);
  switch (actual) {
    case 'user':
      str(value, 'content', path);
      optional(value, 'parts', path, contentPartsIssue);
      return;
    case 'assistant': {
      str(value, 'content', path);
      optStr(value, 'reasoning', path);
      optional(value, 'reasoningParts', path, reasoningPartsIssue);
      str(value, 'agent', path);
      const calls = field(value, 'toolCalls', path);
      if (!Array.isArray(calls)) throw new Issue(`field '${path}toolCalls' must be an array, got ${describe(calls)}`);
      calls.forEach((call: unknown, i) => {
        const at = `${path}toolCalls[${i}].`;
        if (!isObj(call)) throw new Issue(`'${at.slice(0, -1)}' must be an object, got ${describe(call)}`);
        str(call, 'id', at);
        str(call, 'name', at);
        str(call, 'arguments', at);
        optional(call, 'providerMetadata', at, providerMetadataIssue);
      });
      return;
    }
    case 'tool':
      str(value, 'callId', path);
      str(value, 'name', path);
      str(value, 'content', path);
      bool(value, 'isError', path);
      optional(value, 'parts', path, contentPartsIssue);
      return;
    default:
      throw new Issue(`unknown message role ${describe(actual)}`);
  }
}

function optBool(obj: Obj, key: string, path: string): void {
  if (obj[key] !== undefined) bool(obj, key, path);
}

function hex64(obj: Obj, key: string, path: string): void {
  if (!/^[0-9a-f]{64}$/.test(str(obj, key, path))) throw new Issue(`field '${path}${key}' must be 64 lower-case hex digits`);
}

/** Format 3: an approval may carry the edited arguments it approved, always with their hash. */
function checkEdits(value: Obj): void {
  if (value['editedArguments'] === undefined && value['editedArgsHash'] === undefined) return;
  str(value, 'editedArguments', '');
  hex64(value, 'editedArgsHash', '');
  if (value['approved'] !== true) throw new Issue(`field 'editedArguments' is only allowed on an approval (approved: true)`);
}

function checkEntry(value: unknown): asserts value is CheckpointEntry {
  if (!isObj(value)) throw new Issue(`an entry must be an object, got ${describe(value)}`);
  const kind = str(value, 'kind', '');
  switch (kind) {
    case 'input': {
      checkMessage(obj(value, 'message', ''), 'message.', 'user');
      const source = value['source'];
      if (source !== undefined && !INPUT_SOURCES.includes(source as string)) throw new Issue(`field 'source' must be one of ${INPUT_SOURCES.join(', ')}, got ${describe(source)}`);
      optStr(value, 'id', '');
      return;
    }
    case 'reply':
      count(value, 'turn', '');
      checkMessage(obj(value, 'message', ''), 'message.', 'assistant');
      return;
    case 'result':
      count(value, 'turn', '');
      checkMessage(obj(value, 'message', ''), 'message.', 'tool');
      optBool(value, 'terminate', '');
      return;
    case 'turn_end':
      count(value, 'turn', '');
      return;
    case 'handoff':
      count(value, 'turn', '');
      str(value, 'from', '');
      str(value, 'to', '');
      return;
    case 'approval_request':
      count(value, 'turn', '');
      count(value, 'index', '');
      str(value, 'callId', '');
      str(value, 'approvalId', '');
      str(value, 'tool', '');
      hex64(value, 'argsHash', '');
      count(value, 'requestedAt', '');
      return;
    case 'approval_decision':
      str(value, 'approvalId', '');
      str(value, 'callId', '');
      hex64(value, 'argsHash', '');
      bool(value, 'approved', '');
      optStr(value, 'reason', '');
      optStr(value, 'by', '');
      count(value, 'decidedAt', '');
      checkEdits(value);
      return;
    case 'subrun_start':
    case 'subrun_end':
      count(value, 'turn', '');
      count(value, 'index', '');
      str(value, 'callId', '');
      str(value, 'runId', '');
      if (kind === 'subrun_end') {
        const status = str(value, 'status', '');
        if (!RUN_STATUSES.includes(status as RunStatus)) throw new Issue(`field 'status' must be one of ${RUN_STATUSES.join(', ')}, got ${describe(status)}`);
      }
      return;
    default:
      throw new Issue(`unknown entry kind ${describe(kind)}`);
  }
}

function checkHeadValue(value: unknown): asserts value is CheckpointHead {
  if (!isObj(value)) throw new Issue(`the head must be an object, got ${describe(value)}`);
  str(value, 'agent', '');
  count(value, 'turn', '');
  const usage = obj(value, 'usage', '');
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'requests']) amount(usage, key, 'usage.');
  const status = str(value, 'status', '');
  if (!RUN_STATUSES.includes(status as RunStatus)) throw new Issue(`field 'status' must be one of ${RUN_STATUSES.join(', ')}, got ${describe(status)}`);
  optStr(value, 'output', '');
  if (value['error'] !== undefined) {
    const error = obj(value, 'error', '');
    str(error, 'name', 'error.');
    str(error, 'message', 'error.');
  }
}

/** Runs a check of a stored record; a format issue becomes a "corrupt" UserError naming the record. */
function checkStored(check: () => void, where: string): void {
  try {
    check();
  } catch (error) {
    if (error instanceof Issue) throw corrupt(where, error.message);
    throw error;
  }
}

// ── writing side: a caller passing something that cannot be stored ─────────────────────

/** Throws a UserError when an entry to append does not match the format. */
export function checkEntries(entries: readonly CheckpointEntry[], where: string): void {
  if (!Array.isArray(entries)) throw new UserError(`Cannot append to ${where}: entries must be an array, got ${describe(entries)}.`);
  entries.forEach((entry, i) => {
    try {
      checkEntry(entry);
    } catch (error) {
      if (!(error instanceof Issue)) throw error;
      throw new UserError(`Cannot append to ${where}: entry ${i + 1} of this append is invalid: ${error.message}.`);
    }
  });
}

/** Throws a UserError when a head to store does not match the format. */
export function checkHead(head: CheckpointHead, where: string): void {
  try {
    checkHeadValue(head);
  } catch (error) {
    if (!(error instanceof Issue)) throw error;
    throw new UserError(`Cannot append to ${where}: the head is invalid: ${error.message}.`);
  }
}

/** Throws a UserError when messages to store in a session do not match the format. */
export function checkMessages(messages: readonly Message[], where: string): void {
  if (!Array.isArray(messages)) throw new UserError(`Cannot append to ${where}: messages must be an array, got ${describe(messages)}.`);
  messages.forEach((message, i) => {
    try {
      checkMessage(message, '');
    } catch (error) {
      if (!(error instanceof Issue)) throw error;
      throw new UserError(`Cannot append to ${where}: message ${i + 1} is invalid: ${error.message}.`);
    }
  });
}

// ── reading side: a stored record that does not match the format ─────────────────────────

function corrupt(where: string, issue: string, cause?: unknown): UserError {
  return new UserError(`${where} is corrupt: ${issue}.`, cause === undefined ? undefined : { cause });
}

function parse(json: unknown, where: string): unknown {
  if (typeof json !== 'string') throw corrupt(where, `expected JSON text, got ${describe(json)}`);
  try {
    return JSON.parse(json) as unknown;
  } catch (error) {
    throw corrupt(where, `not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

/** Throws a UserError unless `version` is a format version this build reads (1..current). */
export function checkSchemaVersion(version: unknown, current: number, where: string, what = 'checkpoint schemaVersion'): number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw corrupt(where, `its ${what} must be a positive integer, got ${describe(version)}`);
  }
  if (version > current) {
    throw new UserError(`${where} uses ${what} ${version}, but this version of troupe reads only up to ${current}; upgrade troupe to load it.`);
  }
  return version;
}

/** Parses and checks one stored entry (its JSON text). `kind` is the row's kind column, when there is one. */
export function decodeEntry(json: unknown, where: string, kind?: unknown): CheckpointEntry {
  const value = parse(json, where);
  checkStored(() => checkEntry(value), where);
  const entry = value as CheckpointEntry;
  if (kind !== undefined && kind !== entry.kind) throw corrupt(where, `its kind column says ${describe(kind)} but the record says ${describe(entry.kind)}`);
  return entry;
}

/** Checks a head already parsed from its parts. */
export function decodeHead(value: unknown, where: string): CheckpointHead {
  checkStored(() => checkHeadValue(value), where);
  return value as CheckpointHead;
}

/** Parses a JSON value stored in a column (usage, error), as corrupt when it is not JSON. */
export function decodeJson(json: unknown, where: string): unknown {
  return parse(json, where);
}

/**
 * Reads one stored session run's messages from `rows` (ordered by position, then seq), as the
 * SQLite and PostgreSQL sessions store them. Throws a UserError for a newer record format or
 * a missing message.
 */
export function decodeSessionRun(
  where: string,
  run: { readonly schema_version: unknown; readonly position: number; readonly message_count: number },
  rows: Iterator<{ readonly position: number; readonly seq: number; readonly data: unknown }>,
): Message[] {
  checkSchemaVersion(run.schema_version, SESSION_SCHEMA_VERSION, where, 'session schemaVersion');
  const out: Message[] = [];
  for (let seq = 1; seq <= run.message_count; seq++) {
    const next = rows.next();
    if (next.done || next.value.position !== run.position || next.value.seq !== seq) {
      throw new UserError(`${where} is corrupt: message ${seq} of ${run.message_count} is missing.`);
    }
    out.push(decodeMessage(next.value.data, `${where} message ${seq}`));
  }
  return out;
}

/** Parses and checks one stored session message. */
export function decodeMessage(json: unknown, where: string): Message {
  const value = parse(json, where);
  checkStored(() => checkMessage(value, ''), where);
  return value as Message;
}

// ── JSON export ──────────────────────────────────────────────────────────────────────────

/** A stored run as a JSON-ready document; `JSON.stringify` it to write a file. */
export function exportRun(runId: string, run: StoredRun): RunExport {
  return {
    format: RUN_EXPORT_FORMAT,
    schemaVersion: run.schemaVersion ?? CHECKPOINT_SCHEMA_VERSION,
    runId,
    head: run.head,
    entries: run.entries,
  };
}

/**
 * Reads an exported run (JSON text or the parsed value) and checks every part of it. Throws a
 * UserError for a newer schemaVersion or any record that does not match the format.
 */
export function parseRunExport(input: unknown, source = 'run export'): RunExport {
  const doc = typeof input === 'string' ? parse(input, source) : input;
  if (!isObj(doc)) throw corrupt(source, `expected a JSON object, got ${describe(doc)}`);
  if (doc['format'] !== RUN_EXPORT_FORMAT) throw corrupt(source, `field 'format' must be "${RUN_EXPORT_FORMAT}", got ${describe(doc['format'])}`);
  const schemaVersion = checkSchemaVersion(doc['schemaVersion'], CHECKPOINT_SCHEMA_VERSION, source);
  const runId = doc['runId'];
  if (typeof runId !== 'string' || runId.length === 0) throw corrupt(source, `field 'runId' must be a non-empty string, got ${describe(runId)}`);
  const head = decodeHead(doc['head'], `${source}, head of run '${runId}'`);
  const entries = doc['entries'];
  if (!Array.isArray(entries)) throw corrupt(source, `field 'entries' must be an array, got ${describe(entries)}`);
  const checked = entries.map((entry: unknown, i) => {
    checkStored(() => checkEntry(entry), `${source}, run '${runId}' entry ${i + 1}`);
    return entry as CheckpointEntry;
  });
  return { format: RUN_EXPORT_FORMAT, schemaVersion, runId, head, entries: checked };
}
