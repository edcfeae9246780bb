import type { WireError } from './wire.js';

export interface SanitizeLimits {
  /** Longest string kept, in UTF-16 units; longer ones are cut with a marker. */
  readonly maxString: number;
  /** Items kept per array / entries per object. */
  readonly maxItems: number;
  /** Nesting depth; deeper values become `"[…]"`. */
  readonly maxDepth: number;
}

export const INSPECT_LIMITS: SanitizeLimits = { maxString: 240, maxItems: 24, maxDepth: 5 };

/** Summarises class instances the generic walk must not enter (e.g. the run core). */
export type Summarizer = (value: object) => unknown | undefined;

const NO_SUMMARY: readonly Summarizer[] = [];

/**
 * Converts any value to small, plain JSON: never an ActorRef (→ `{ $actor }`), never a
 * function (dropped), never a class instance's internals (→ `{ $type }` or a summary),
 * strings, arrays and objects truncated, cycles cut. Never throws.
 */
export function sanitize(value: unknown, limits: SanitizeLimits = INSPECT_LIMITS, summarizers: readonly Summarizer[] = NO_SUMMARY): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    const simple = leafToJson(v, limits.maxString);
    if (simple !== CONTAINER) return simple;
    const obj = v as object;
    if (seen.has(obj)) return '[circular]';
    if (depth >= limits.maxDepth) return '[…]';
    for (const summarize of summarizers) {
      const summary = summarize(obj);
      if (summary !== undefined) return summary;
    }
    seen.add(obj);
    try {
      if (Array.isArray(obj)) {
        const out: unknown[] = [];
        const n = Math.min(obj.length, limits.maxItems);
        for (let i = 0; i < n; i++) out.push(walk(obj[i], depth + 1) ?? null);
        if (obj.length > n) out.push(`[… ${obj.length - n} more]`);
        return out;
      }
      if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
      if (obj instanceof Map) return { $type: 'Map', size: obj.size };
      if (obj instanceof Set) return { $type: 'Set', size: obj.size };
      if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return { $type: obj.constructor.name, bytes: (obj as ArrayBuffer).byteLength };
      if (!isPlainObject(obj)) return { $type: obj.constructor?.name || 'Object' };
      const out: Record<string, unknown> = {};
      let kept = 0;
      let skipped = 0;
      for (const key of Object.keys(obj)) {
        const item = (obj as Record<string, unknown>)[key];
        if (typeof item === 'function' || typeof item === 'symbol' || item === undefined) continue;
        if (kept >= limits.maxItems) {
          skipped++;
          continue;
        }
        out[key] = walk(item, depth + 1);
        kept++;
      }
      if (skipped > 0) out['…'] = `${skipped} more keys`;
      return out;
    } catch {
      return '[unreadable]';
    } finally {
      seen.delete(obj);
    }
  };
  return walk(value, 0);
}

const CONTAINER = Symbol('container');

/**
 * The JSON for values both walkers treat alike: primitives (strings cut to `maxString`),
 * null, actor refs and errors. Other objects return CONTAINER, for the walker to enter.
 */
function leafToJson(v: unknown, maxString: number): unknown {
  switch (typeof v) {
    case 'string':
      return truncateString(v, maxString);
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'boolean':
      return v;
    case 'bigint':
      return `${v}n`;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (v === null) return null;
  const obj = v as object;
  if (isActorRef(obj)) return { $actor: obj.sessionId, id: obj.id };
  if (obj instanceof Error) return errorToWire(obj);
  return CONTAINER;
}

/**
 * Full-fidelity JSON conversion for API responses (the chat stream): no truncation, but
 * functions and symbols dropped, errors as `{ name, code, message }`, bigints as strings,
 * cycles and ActorRefs replaced. Never throws.
 */
export function toJsonSafe(value: unknown): unknown {
  const stack = new Set<object>();
  const walk = (v: unknown): unknown => {
    const simple = leafToJson(v, Infinity);
    if (simple !== CONTAINER) return simple;
    const obj = v as object;
    if (stack.has(obj)) return '[circular]';
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      try {
        return walk((obj as { toJSON(): unknown }).toJSON());
      } catch {
        return '[unreadable]';
      }
    }
    stack.add(obj);
    try {
      if (Array.isArray(obj)) return obj.map((item) => walk(item) ?? null);
      if (obj instanceof Map) return { $type: 'Map', entries: [...obj.entries()].map(([k, item]) => [walk(k), walk(item)]) };
      if (obj instanceof Set) return { $type: 'Set', values: [...obj.values()].map(walk) };
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(obj)) {
        const item = walk((obj as Record<string, unknown>)[key]);
        if (item !== undefined) out[key] = item;
      }
      return out;
    } catch {
      return '[unreadable]';
    } finally {
      stack.delete(obj);
    }
  };
  return walk(value);
}

export function errorToWire(error: unknown): WireError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, code: typeof code === 'string' ? code : undefined, message: error.message };
  }
  return { name: 'Error', code: undefined, message: typeof error === 'string' ? error : 'non-error value thrown' };
}

export function truncateString(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more chars]`;
}

interface ActorRefLike {
  readonly sessionId: string;
  readonly id: string;
}

export function isActorRef(value: object): value is ActorRefLike {
  return typeof (value as { sessionId?: unknown }).sessionId === 'string' && typeof (value as { send?: unknown }).send === 'function';
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
