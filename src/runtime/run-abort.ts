/**
 * A run's abort signal, created when something first reads it. Node's AbortController and its
 * AbortSignal (an EventTarget) are among the costliest objects a run allocates, and a run whose
 * model never looks at `request.signal` and whose calls never read `ctx.signal` (a text-only
 * run, no-op tools) never needs one. Aborting before the first read keeps the reason: the signal
 * then starts aborted with it, as the eagerly created one would be by then (its 'abort' event has
 * fired for nobody either way).
 */
export class RunAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  /** Whether the run's signal has aborted (without creating it). */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** The run's signal: one object for the run's lifetime. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the signal with `reason`; later calls do nothing, as AbortController.abort. Never throws on its own (listeners may). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
