import type { ScriptStep } from '../models/script-steps.js';
import type { RunOptions } from '../runtime/run-options.js';
import type { RunEvent, RunInputValue } from '../types.js';
import type { CoverageReport } from './coverage-report.js';

/**
 * What a scripted tool does on one attempt, instead of its code:
 *   - `{ returns: value }`: the attempt returns `value`;
 *   - `{ throws: message }`: the attempt throws an Error with `message` (a retry may follow);
 *   - `{ timesOut: true }`: the attempt never returns; the tool's timeout (`timeoutMs`, or the
 *     agent's `defaultToolTimeoutMs`) ends it, so it is offered only for tools that have one;
 *   - `{ waitsForEvent: name, payload? }`: the tool returns `waitForEvent(name)`; explored both
 *     ways, the wait resolved with `payload` and the wait timed out;
 *   - `'real'`: the tool's own code runs.
 */
export type ToolOutcome =
  | { readonly returns: unknown }
  | { readonly throws: string }
  | { readonly timesOut: true }
  | { readonly waitsForEvent: string; readonly payload?: unknown }
  | 'real';

/** A property every explored path must have; return a message (or false) when the path breaks it. */
export interface PathInvariant {
  readonly name: string;
  readonly check: (path: ExploredPath) => string | boolean | undefined | void;
}

export interface ExploreOptions {
  /** The run's input. Default `'Hello.'`. */
  readonly input?: RunInputValue;
  /**
   * Replies per agent name, as a ScriptedModel script: that agent answers with them instead of
   * exploring every reply. Agents not listed here are explored: each model request is answered
   * once with a plain text reply and once with a call of each tool the agent has (handoffs and
   * agents as tools included), as long as the run has made fewer than `maxCallsPerRun` calls.
   */
  readonly replies?: Readonly<Record<string, readonly ScriptStep[]>>;
  /** Arguments for the calls an explored reply makes, per tool name. Default: a minimal value valid for the tool's JSON Schema. */
  readonly arguments?: Readonly<Record<string, unknown>>;
  /** What each tool's attempts may do, per tool name. Default: `{ returns: '<tool> done' }` and `{ throws: '<tool> failed' }`, and `{ timesOut: true }` when the tool has a timeout. Handoff and agent tools always run for real. */
  readonly tools?: Readonly<Record<string, readonly ToolOutcome[]>>;
  /** Tool-calling replies an explored run makes at most (each run of the tree counts its own). Default 2. */
  readonly maxCallsPerRun?: number;
  /** Choices a path makes at most; past it, each choice point takes its first option. Default 24. */
  readonly maxChoices?: number;
  /** Paths explored at most; the exploration says `truncated` when more were left. Default 1000. */
  readonly maxPaths?: number;
  /** Explore a cancel at every choice point (before the model replies, a tool runs, an approval is decided). Default true. */
  readonly cancels?: boolean;
  /**
   * Also explore a cancel in every state of the run chart a run comes to rest in (preflight,
   * an approval wait, executing calls, a handoff, …): the first time each run of the tree rests
   * in a state on a path, the path goes on and another cancels there. Default false (it
   * multiplies the paths; `maxChoices` and `maxPaths` bound it). These choices show in a path's
   * name only when taken (`Desk in turn.executing.preflight: cancel`).
   */
  readonly cancelInStates?: boolean;
  /** Explore a model that fails (an error from its stream) at every explored reply: the run fails, and a sub-run's failure reaches its caller as a tool error. Default false. */
  readonly modelFailures?: boolean;
  /** Your own invariants, checked on every path after the built-in ones (see `INVARIANTS`). */
  readonly invariants?: readonly PathInvariant[];
  /** Options for every run (maxTurns, budget, context, …); `inspect` composes with the coverage recorder. */
  readonly runOptions?: Omit<RunOptions, 'runId' | 'signal' | 'checkpoint' | 'session'>;
  /** A path whose run has not ended after this many ms is cancelled and reported as a violation. Default 10,000. */
  readonly pathTimeoutMs?: number;
}

/** One decision the explorer made on a path: at `at` (a readable place) it took `options[took]`. */
export interface Choice {
  readonly at: string;
  readonly options: readonly string[];
  readonly took: number;
}

/** An invariant the path broke, and how. */
export interface Violation {
  readonly invariant: string;
  readonly message: string;
}

export type PathOutcome = 'completed' | 'failed' | 'cancelled' | 'suspended';

/** One path through the agent system, as it happened on the real runtime. */
export interface ExploredPath {
  /** 1-based, in exploration order (depth-first, first options first). */
  readonly index: number;
  /** The choices as one readable line: `Triage: call transfer_to_support › support_refund#1: approved › …`. */
  readonly name: string;
  readonly choices: readonly Choice[];
  /** Every event of the run tree, as the root stream delivered them (text deltas left out). */
  readonly events: readonly RunEvent[];
  /** The events as short lines (`Triage run_started`, `Triage > Research tool_call_completed weather ok`, …). */
  readonly steps: readonly string[];
  readonly outcome: PathOutcome;
  /** The root run's output (completed) or its error message. */
  readonly result: string;
  readonly violations: readonly Violation[];
}

/** What `exploreAgent` found. */
export interface Exploration {
  readonly paths: readonly ExploredPath[];
  /** Paths that broke an invariant, shortest (fewest steps) first. */
  readonly failures: readonly ExploredPath[];
  /** True when `maxPaths` stopped the exploration with paths left. */
  readonly truncated: boolean;
  /** Which states and transitions of the run chart, and which tools, handoffs, approvals and waits of your agents, the paths visited. */
  readonly coverage: CoverageReport;
  /** Wall-clock ms the exploration took. */
  readonly durationMs: number;
}
