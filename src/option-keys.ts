import { UserError } from './errors.js';

/**
 * Every key of an options type, spelled once as an object whose keys the compiler checks
 * against the type (a missing or an extra key does not compile), so the runtime list of
 * known options cannot drift from the interface.
 */
export type KeyList<T> = { readonly [K in keyof Required<T>]: true };

/** The keys of a `KeyList`, in the order written. */
export function optionKeys<T>(keys: KeyList<T>): readonly string[] {
  return Object.keys(keys);
}

/**
 * Rejects an options object a person wrote by hand when it is not an object or has a key no
 * option has (in plain JavaScript a typo such as `maxTurn` would otherwise be silently
 * ignored). `owner` and `kind` name the options in the message ("run" + "option",
 * "budget" + "field"). Keys whose value is undefined count too: a misspelt key is wrong
 * whatever its value.
 * @throws UserError `Unknown run option 'maxTurn'; did you mean 'maxTurns'? Expected one of …`,
 *   or `Expected run options as an object, got null.`
 */
export function checkOptionKeys(options: unknown, known: readonly string[], owner: string, kind: 'option' | 'field' = 'option'): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UserError(`Expected ${owner} ${kind}s as an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}.`);
  }
  const allowed = knownSet(known);
  for (const key of Object.keys(options)) {
    if (allowed.has(key)) continue;
    throw new UserError(`Unknown ${owner} ${kind} '${key}'; did you mean '${closestName(key, known)}'? Expected one of ${known.join(', ')}.`);
  }
}

/** The lists are module constants: each gets its Set once (runs check their options on every launch). */
const knownSets = new WeakMap<readonly string[], ReadonlySet<string>>();
function knownSet(known: readonly string[]): ReadonlySet<string> {
  let set = knownSets.get(known);
  if (!set) knownSets.set(known, (set = new Set(known)));
  return set;
}

/**
 * The candidate nearest to `name` by edit distance, case-insensitive; of equally near ones,
 * one contained in it or containing it (`sessionId` → `id`), then the earlier one.
 */
export function closestName(name: string, candidates: readonly string[]): string {
  let best = candidates[0] ?? '';
  let bestScore = Infinity;
  const lower = name.toLowerCase();
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const contained = Math.min(lower.length, other.length) >= 2 && (lower.includes(other) || other.includes(lower));
    const score = editDistance(lower, other) * 2 + (contained ? 0 : 1);
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours each cost 1. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[rows - 1]![cols - 1]!;
}
