/**
 * The stored record format (src/store/format.md): versions, validation of entries, heads and
 * messages, and the JSON export of a run. Every reader goes through here, so a record that
 * does not match the format is a UserError naming the record, never a crash or a skip.
 */
import { UserError } from '../errors.js';
import type { Message } from '../types.js';
import { FINISHED_RUN_STATUSES, LEGACY_CANCELLED_STATUS, fromStoredStatus } from '../run-status.js';
import type { CheckpointEntry, CheckpointHead, StoredRun } from './records.js';
import { Issue, checkEntry, checkHeadValue, checkMessage, describe, isObj } from './record-checks.js';

/** Version of the checkpoint record format (entries and head) this build writes and the newest it reads. */
export const CHECKPOINT_SCHEMA_VERSION = 6;
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

export { FINISHED_RUN_STATUSES, STORED_RUN_STATUSES, isFinished } from '../run-status.js';
/** Statuses of a finished run as stored rows may say them (format 4 and older: `interrupted`). */
export const FINISHED_STORED_STATUSES: readonly string[] = [...FINISHED_RUN_STATUSES, LEGACY_CANCELLED_STATUS];

/**
 * A record of format `version` as this build's format says it. Format 5 renamed the status of
 * a cancelled run (head and `subrun_end`) from `interrupted` to `cancelled`.
 */
function upgrade(value: unknown, version: number): unknown {
  if (!isObj(value)) return value;
  const status = fromStoredStatus(value['status'], version);
  return status === value['status'] ? value : { ...value, status };
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

/**
 * Parses and checks one stored entry (its JSON text) of a run of format `version`, upgraded to
 * this build's format. `kind` is the row's kind column, when there is one.
 */
export function decodeEntry(json: unknown, where: string, version: number, kind?: unknown): CheckpointEntry {
  const value = upgrade(parse(json, where), version);
  checkStored(() => checkEntry(value), where);
  const entry = value as CheckpointEntry;
  if (kind !== undefined && kind !== entry.kind) throw corrupt(where, `its kind column says ${describe(kind)} but the record says ${describe(entry.kind)}`);
  return entry;
}

/** Checks a head of a run of format `version`, already parsed from its parts, upgraded to this build's format. */
export function decodeHead(stored: unknown, where: string, version: number): CheckpointHead {
  const value = upgrade(stored, version);
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
    // A loaded run's records are already upgraded to this build's format (decodeHead, decodeEntry).
    schemaVersion: CHECKPOINT_SCHEMA_VERSION,
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
  const head = decodeHead(doc['head'], `${source}, head of run '${runId}'`, schemaVersion);
  const entries = doc['entries'];
  if (!Array.isArray(entries)) throw corrupt(source, `field 'entries' must be an array, got ${describe(entries)}`);
  const checked = entries.map((stored: unknown, i) => {
    const entry = upgrade(stored, schemaVersion);
    checkStored(() => checkEntry(entry), `${source}, run '${runId}' entry ${i + 1}`);
    return entry as CheckpointEntry;
  });
  return { format: RUN_EXPORT_FORMAT, schemaVersion, runId, head, entries: checked };
}
