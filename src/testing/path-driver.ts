import { UserError } from '../errors.js';
import type { Choice } from './explore-types.js';

/** Something the explorer saw happen on a path, in order: what the invariants read besides the events. */
export type PathLogEntry =
  | { readonly kind: 'model'; readonly runId: string; readonly agent: string }
  | { readonly kind: 'tool'; readonly runId: string; readonly callId: string; readonly tool: string; readonly alwaysGated: boolean }
  | { readonly kind: 'decision'; readonly runId: string; readonly callId: string; readonly approved: boolean }
  | { readonly kind: 'cancel'; readonly at: string };

/** The exploration found the runs of one agent system going differently with the same choices. */
export class ExplorationNondeterminism extends UserError {
}

/**
 * The state of one path while it runs: the choices replayed from `prefix` then taken first
 * (option 0) past it, what happened (the log), and the run's handle once it exists. The
 * scripted model, the scripted tools and the approval listener ask it what to do.
 */
export class PathDriver {
  readonly choices: Choice[] = [];
  readonly log: PathLogEntry[] = [];
  cancelled = false;
  /**
   * A cancel was chosen (it may not have reached the run yet): whatever the run asks of the
   * explorer meanwhile (a model reply, a tool attempt, an approval) makes no choice and waits
   * for the cancel, as work in flight when a cancel arrives does.
   */
  cancelling = false;
  /** Set when a replayed choice came out differently: the exploration stops with it. */
  failure: ExplorationNondeterminism | undefined;
  private cancelRun: ((reason: string) => void) | undefined;
  private readonly calls = new Map<string, number>();
  private readonly attempts = new Map<string, number>();
  /** Calls whose event wait is to be resolved once it opens (`runId/callId` → payload). */
  readonly resolveWhenOpen = new Map<string, unknown>();

  constructor(
    private readonly prefix: readonly Choice[],
    private readonly maxChoices: number,
    readonly withCancels: boolean,
  ) {}

  /**
   * Takes the next choice at `at` among `options` (the prefix's, or the first). Past
   * `maxChoices` only the first option is offered.
   * @throws ExplorationNondeterminism when the prefix made this choice somewhere else.
   */
  choose(at: string, options: readonly string[]): number {
    const i = this.choices.length;
    const offered = i >= this.maxChoices ? options.slice(0, 1) : options;
    const replayed = this.prefix[i];
    if (replayed && (replayed.at !== at || replayed.options.join('|') !== offered.join('|'))) {
      // Thrown where the choice was asked (a model, a tool, an approval listener, which may swallow it) and kept for the explorer, which throws it once the run ended.
      this.failure ??= new ExplorationNondeterminism(
        `exploreAgent: the same choices led elsewhere: choice ${i + 1} was "${replayed.at}" (${replayed.options.join(', ')}) and is now "${at}" (${offered.join(', ')}). The agent system must behave the same for the same model replies and tool outcomes (no randomness, clocks or real I/O).`,
      );
      this.cancelRun?.('exploration: nondeterminism');
      throw this.failure;
    }
    const took = replayed?.took ?? 0;
    this.choices.push({ at, options: offered, took });
    return took;
  }

  /** @throws ExplorationNondeterminism when the run ended before it came to every replayed choice. */
  checkReplayed(): void {
    const missing = this.prefix[this.choices.length];
    if (this.failure || !missing) return;
    this.failure = new ExplorationNondeterminism(
      `exploreAgent: the same choices led elsewhere: the run ended after ${this.choices.length} choices, and before it came to choice ${this.choices.length + 1}, "${missing.at}". The agent system must behave the same for the same model replies and tool outcomes (no randomness, clocks or real I/O).`,
    );
  }

  /** `options` with the cancel option appended when cancels are explored. */
  withCancel(options: readonly string[]): string[] {
    return this.withCancels ? [...options, 'cancel'] : [...options];
  }

  /** The option name taken by the last choice. */
  lastTaken(): string {
    const last = this.choices[this.choices.length - 1]!;
    return last.options[last.took]!;
  }

  attach(cancel: (reason: string) => void): void {
    this.cancelRun = cancel;
  }

  /** Cancels the run (the root of the tree) as `handle.cancel()` does. */
  cancel(at: string): void {
    this.log.push({ kind: 'cancel', at });
    this.cancelled = true;
    this.cancelling = true;
    this.cancelRun?.(`exploration: cancel at ${at}`);
  }

  /** Cancels once the current step's microtasks ran (never from inside XState's processing); from now on nothing more is chosen. */
  cancelSoon(at: string): void {
    this.cancelling = true;
    queueMicrotask(() => this.cancel(at));
  }

  /** Counts a tool-calling reply of `runId`; returns how many it made before. */
  countCall(runId: string): number {
    const made = this.calls.get(runId) ?? 0;
    this.calls.set(runId, made + 1);
    return made;
  }

  callsMade(runId: string): number {
    return this.calls.get(runId) ?? 0;
  }

  /** The 1-based attempt number of this execution of `runId/callId`. */
  nextAttempt(runId: string, callId: string): number {
    const key = `${runId}/${callId}`;
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    return n;
  }
}

/** Resolves when `signal` aborts (at once when it has), then rejects with its reason, as an aborted call would. */
export function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'aborted')));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
