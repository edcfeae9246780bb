/** Settled once and shared: every reaction on it is one microtask, queued in call order. */
const settled = Promise.resolve();

/**
 * Runs `fn` in a microtask, queued now, in the same order as `queueMicrotask` would queue it and
 * in the caller's async context. Node's `queueMicrotask` makes an AsyncResource and a bound
 * function for every call; a reaction on a settled promise makes neither, and the run's per-run
 * and per-batch hand-overs take this path. `fn` must not throw: a throw is an unhandled rejection.
 */
export function inNextMicrotask(fn: () => void): void {
  void settled.then(fn);
}
