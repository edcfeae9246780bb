/**
 * The record checks of the stored format (src/store/format.md): what every entry, head and
 * message must look like. A violation is an `Issue`, which format.ts turns into a UserError
 * naming the record (a corrupt store) or the caller's append (nothing is written).
 */
import { contentPartsIssue, providerMetadataIssue, reasoningPartsIssue } from '../message-parts.js';
import type { Message } from '../types.js';
import { CALL_WAIT_KINDS, DETAIL_ISSUE, RESOLUTION_ISSUE, type CallWaitKind } from '../waits/kinds/records.js';
import { STORED_RUN_STATUSES } from '../run-status.js';
import type { CheckpointEntry, CheckpointHead } from './records.js';

const INPUT_SOURCES = ['input', 'mailbox', 'steer', 'follow_up', 'hook', 'repair'];
/** The roles models know (any other role is a custom message's, format 6). */
const MODEL_ROLES: ReadonlySet<unknown> = new Set(['system', 'user', 'assistant', 'tool']);

/** A format violation found while checking a value; turned into a UserError by the callers. */
export class Issue extends Error {}

type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
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

export function checkMessage(value: unknown, path: string, role?: Message['role']): void {
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
    case 'system':
      throw new Issue(`unknown message role ${describe(actual)}`);
    default:
      // A custom role (format 6): a note, a UI event; its data is any JSON.
      if (actual === '') throw new Issue(`field '${path}role' must be a non-empty string`);
      str(value, 'content', path);
      return;
  }
}

function optBool(obj: Obj, key: string, path: string): void {
  if (obj[key] !== undefined) bool(obj, key, path);
}

function hex64(obj: Obj, key: string, path: string): void {
  if (!/^[0-9a-f]{64}$/.test(str(obj, key, path))) throw new Issue(`field '${path}${key}' must be 64 lower-case hex digits`);
}

/** Format 4: the kind of a call's wait (approvals have entries of their own). */
function callWaitKind(value: Obj): CallWaitKind {
  const kind = str(value, 'waitKind', '');
  if (!(CALL_WAIT_KINDS as readonly string[]).includes(kind)) throw new Issue(`field 'waitKind' must be one of ${CALL_WAIT_KINDS.join(', ')}, got ${describe(kind)}`);
  return kind as CallWaitKind;
}

/** Format 3: an approval may carry the edited arguments it approved, always with their hash. */
function checkEdits(value: Obj): void {
  if (value['editedArguments'] === undefined && value['editedArgsHash'] === undefined) return;
  str(value, 'editedArguments', '');
  hex64(value, 'editedArgsHash', '');
  if (value['approved'] !== true) throw new Issue(`field 'editedArguments' is only allowed on an approval (approved: true)`);
}

export function checkEntry(value: unknown): asserts value is CheckpointEntry {
  if (!isObj(value)) throw new Issue(`an entry must be an object, got ${describe(value)}`);
  const kind = str(value, 'kind', '');
  switch (kind) {
    case 'input': {
      // A user message, or (format 6) a message of a custom role.
      const message = obj(value, 'message', '');
      checkMessage(message, 'message.', typeof message['role'] === 'string' && !MODEL_ROLES.has(message['role']) ? undefined : 'user');
      const source = value['source'];
      if (source !== undefined && !INPUT_SOURCES.includes(source as string)) throw new Issue(`field 'source' must be one of ${INPUT_SOURCES.join(', ')}, got ${describe(source)}`);
      optStr(value, 'id', '');
      if (value['forkedFrom'] !== undefined) {
        const origin = obj(value, 'forkedFrom', '');
        str(origin, 'runId', 'forkedFrom.');
        count(origin, 'atTurn', 'forkedFrom.');
      }
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
      if (value['resolved'] !== undefined) {
        const resolved = obj(value, 'resolved', '');
        str(resolved, 'name', 'resolved.');
        str(resolved, 'arguments', 'resolved.');
      }
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
      if (value['deadline'] !== undefined) count(value, 'deadline', '');
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
    case 'wait_request': {
      str(value, 'waitId', '');
      const kind = callWaitKind(value);
      count(value, 'turn', '');
      count(value, 'index', '');
      str(value, 'callId', '');
      str(value, 'tool', '');
      const issue = DETAIL_ISSUE[kind](obj(value, 'detail', ''));
      if (issue) throw new Issue(`field 'detail' ${issue}`);
      count(value, 'requestedAt', '');
      if (value['deadline'] !== undefined) count(value, 'deadline', '');
      return;
    }
    case 'wait_resolution': {
      str(value, 'waitId', '');
      const kind = callWaitKind(value);
      str(value, 'callId', '');
      const ended = str(value, 'ended', '');
      if (ended !== 'resolved' && ended !== 'timedOut') throw new Issue(`field 'ended' must be resolved or timedOut, got ${describe(ended)}`);
      if (ended === 'resolved') {
        const issue = RESOLUTION_ISSUE[kind](value['resolution']);
        if (issue) throw new Issue(`field 'resolution' ${issue}`);
      }
      optStr(value, 'by', '');
      count(value, 'resolvedAt', '');
      return;
    }
    case 'extra':
      obj(value, 'value', '');
      return;
    case 'abort':
      count(value, 'turn', '');
      str(value, 'reason', '');
      optStr(value, 'by', '');
      count(value, 'abortedAt', '');
      return;
    case 'subrun_start':
    case 'subrun_end':
      count(value, 'turn', '');
      count(value, 'index', '');
      str(value, 'callId', '');
      str(value, 'runId', '');
      if (kind === 'subrun_end') {
        const status = str(value, 'status', '');
        if (!(STORED_RUN_STATUSES as readonly string[]).includes(status)) throw new Issue(`field 'status' must be one of ${STORED_RUN_STATUSES.join(', ')}, got ${describe(status)}`);
      }
      return;
    default:
      throw new Issue(`unknown entry kind ${describe(kind)}`);
  }
}

export function checkHeadValue(value: unknown): asserts value is CheckpointHead {
  if (!isObj(value)) throw new Issue(`the head must be an object, got ${describe(value)}`);
  str(value, 'agent', '');
  count(value, 'turn', '');
  const usage = obj(value, 'usage', '');
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'requests']) amount(usage, key, 'usage.');
  const status = str(value, 'status', '');
  if (!(STORED_RUN_STATUSES as readonly string[]).includes(status)) throw new Issue(`field 'status' must be one of ${STORED_RUN_STATUSES.join(', ')}, got ${describe(status)}`);
  optStr(value, 'output', '');
  if (value['error'] !== undefined) {
    const error = obj(value, 'error', '');
    str(error, 'name', 'error.');
    str(error, 'message', 'error.');
  }
}
