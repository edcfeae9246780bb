import { UserError } from '../errors.js';
import type { Exploration, ExploredPath } from './explore-types.js';

/** The part of a test runner the helper needs: vitest's, jest's, mocha's or node:test's `describe` and `it`. */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => void | Promise<void>): unknown;
}

/** An explored path broke an invariant: the message names each breach, the path's steps, and the shortest failing path. */
export class PathFailure extends Error {
  override readonly name = 'PathFailure';
  constructor(
    readonly path: ExploredPath,
    readonly shortest: ExploredPath,
  ) {
    super(failureText(path, shortest));
  }
}

function failureText(path: ExploredPath, shortest: ExploredPath): string {
  const lines = [`path #${path.index} broke ${path.violations.length} invariant${path.violations.length === 1 ? '' : 's'}:`];
  for (const v of path.violations) lines.push(`  ${v.invariant}: ${v.message}`);
  lines.push(`its choices: ${path.name}`, 'its events:', ...path.steps.map((s) => `  ${s}`));
  if (shortest !== path) lines.push(`the shortest failing path is #${shortest.index} (${shortest.steps.length} events): ${shortest.name}`);
  return lines.join('\n');
}

/**
 * Throws PathFailure when `path` broke an invariant (its message lists them, the path's
 * events and, given the exploration, the shortest failing path); returns otherwise.
 */
export function assertPath(path: ExploredPath, exploration?: Exploration): void {
  if (path.violations.length === 0) return;
  throw new PathFailure(path, exploration?.failures[0] ?? path);
}

/**
 * One test per explored path, in a `describe(title)` block: each named `#<n> <outcome>:
 * <choices>`, failing with PathFailure when its path broke an invariant. First comes a test of
 * the exploration itself: it fails when `maxPaths` cut it short (unless `allowTruncated`),
 * naming the shortest failing path when there is one.
 *
 * ```ts
 * const exploration = await exploreAgent(agent, { maxCallsPerRun: 2 });
 * describePaths('support desk', exploration, { describe, it });
 * ```
 * @throws UserError when `runner` has no `describe` or `it` function.
 */
export function describePaths(title: string, exploration: Exploration, runner: TestRunner, options: { readonly allowTruncated?: boolean } = {}): void {
  if (typeof runner?.describe !== 'function' || typeof runner.it !== 'function') throw new UserError('describePaths needs the test runner\'s describe and it, e.g. describePaths(title, exploration, { describe, it }).');
  runner.describe(title, () => {
    runner.it(`explores ${exploration.paths.length} paths`, () => {
      if (exploration.truncated && !options.allowTruncated) {
        throw new Error(`the exploration stopped at maxPaths (${exploration.paths.length} paths) with paths left: raise maxPaths, lower maxCallsPerRun or maxChoices, or pass { allowTruncated: true }.`);
      }
      const shortest = exploration.failures[0];
      if (shortest) throw new PathFailure(shortest, shortest);
    });
    for (const path of exploration.paths) runner.it(`#${path.index} ${path.outcome}: ${path.name}`, () => assertPath(path, exploration));
  });
}
