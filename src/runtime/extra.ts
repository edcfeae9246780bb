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
