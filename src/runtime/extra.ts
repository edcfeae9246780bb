/**
 * `ctx.extra` (CubePi's `ctx.extra`): one JSON object per run that its tools and hooks share
 * and change in place, stored in the run's log so it survives a crash, a park and a resume.
 *
 * Cost: nothing until something reads it. Once read (or given as `RunOptions.extra`), each
 * append of the run's log checks it (one JSON.stringify) and, when it changed since it was
 * last stored, writes an `extra` entry with the whole value just before the entry being
 * appended, in the same append: a stored result never goes without the value its tool left.
 */
import { UserError } from '../errors.js';
import type { CheckpointEntry, ExtraEntry } from '../store/checkpoint-store.js';
import type { Message } from '../types.js';

export type ExtraValue = Record<string, unknown>;

export class RunExtra {
  /** Whether something read it (or it was given): only then can it have changed. */
  #watched: boolean;
  /** Its JSON text as last stored (undefined: never stored). */
  #stored: string | undefined;

  constructor(
    /** The object tools and hooks get; changed in place by them. */
    readonly value: ExtraValue,
    origin: 'new' | 'given' | 'stored',
  ) {
    this.#watched = origin === 'given';
    this.#stored = origin === 'stored' ? JSON.stringify(value) : undefined;
  }

  /** The object, for a tool's or a hook's `ctx.extra`. */
  read(): ExtraValue {
    this.#watched = true;
    return this.value;
  }

  /**
   * The `extra` entry to store before the next append, or undefined when it did not change.
   * @throws UserError when the value cannot be written as JSON (a cycle, a BigInt): nothing is stored then.
   */
  changed(): ExtraEntry | undefined {
    if (!this.#watched) return undefined;
    let text: string;
    try {
      text = JSON.stringify(this.value);
    } catch (error) {
      throw new UserError(`ctx.extra cannot be written as JSON: ${(error as Error).message}.`);
    }
    if (text === this.#stored) return undefined;
    this.#stored = text;
    return { kind: 'extra', value: JSON.parse(text) as ExtraValue };
  }
}

/**
 * `entries` with the changed extra first (the same array when it did not change).
 * @throws UserError as RunExtra.changed.
 */
export function withExtra(extra: RunExtra | undefined, entries: CheckpointEntry[]): CheckpointEntry[] {
  const entry = extra?.changed();
  return entry ? [entry, ...entries] : entries;
}

/**
 * `RunOptions.extra` as the run keeps it: a copy of a plain JSON object.
 * @throws UserError for anything else.
 */
export function givenExtra(value: unknown): ExtraValue {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UserError(`extra must be a plain object (JSON), got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new UserError(`extra cannot be written as JSON: ${(error as Error).message}.`);
  }
  return JSON.parse(text) as ExtraValue;
}

/** The run's extra, made (empty) on first use. */
export function runExtra(state: { extra: RunExtra | undefined }): RunExtra {
  return (state.extra ??= new RunExtra({}, 'new'));
}

/**
 * The role of the message that carries a session's `ctx.extra` from one run to the next: the
 * last message of each stored run of the session whose run had an extra (a custom-role
 * message, format 6). It is taken out of the history before the next run starts: it never
 * joins a transcript and no model sees it.
 */
export const SESSION_EXTRA_ROLE = 'troupe.extra';

/** The message a completed run leaves in its session for the next run: its extra as it ended. */
export function sessionExtraMessage(extra: RunExtra): Message {
  return { role: SESSION_EXTRA_ROLE, content: '', data: JSON.parse(JSON.stringify(extra.value)) as ExtraValue } as unknown as Message;
}

/**
 * A session's history without its extra messages, and the extra of the last run that left one.
 */
export function splitSessionExtra(history: readonly Message[]): { readonly messages: Message[]; readonly extra: ExtraValue | undefined } {
  let extra: ExtraValue | undefined;
  const messages: Message[] = [];
  for (const message of history) {
    if ((message.role as string) !== SESSION_EXTRA_ROLE) messages.push(message);
    else extra = ((message as { data?: ExtraValue }).data ?? {}) as ExtraValue;
  }
  return { messages, extra };
}

/**
 * The extra a session's new run starts with: the session's (its last run's, as it ended),
 * with `RunOptions.extra`'s keys over it (a shallow merge), or whichever of the two exists.
 */
export function sessionStartExtra(fromSession: ExtraValue | undefined, given: RunExtra | undefined): RunExtra | undefined {
  if (fromSession === undefined) return given;
  return new RunExtra({ ...structuredClone(fromSession), ...(given?.value ?? {}) }, 'given');
}
