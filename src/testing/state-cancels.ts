import type { InspectionEvent } from 'xstate';
import type { PathDriver } from './path-driver.js';

/** States a cancel is not tried in: before the run starts, and once it has ended. */
const SKIPPED = new Set(['run.idle', 'run.completed', 'run.failed', 'run.cancelled', 'run.suspended']);

interface RunSnapshotLike {
  readonly status?: string;
  readonly machine?: { readonly id?: string };
  readonly _nodes?: ReadonlyArray<{ readonly id: string; readonly type: string }>;
  readonly context?: { readonly run?: { readonly runId: string; readonly path: readonly string[] } };
}

/**
 * "A cancel in every state" (`exploreAgent({ cancelInStates: true })`): each time a run of the
 * tree comes to rest in a state of the run chart (after a macrostep) for the first time on a
 * path, that is a choice point, go on or cancel. A cancel is sent once the macrostep's
 * microtasks ran (never from inside XState's own processing), as `handle.cancel()` would be
 * called by code that saw the run in that state; work the run started meanwhile (a model
 * request, a tool attempt) waits for it instead of choosing (`PathDriver.cancelling`).
 */
export class StateCancels {
  private readonly offered = new Set<string>();

  constructor(private readonly driver: PathDriver) {}

  /** Reads the inspection stream of the run tree (pass every event). */
  inspect(event: InspectionEvent): void {
    if (event.type !== '@xstate.snapshot' || this.driver.cancelling || this.driver.failure) return;
    const snapshot = event.snapshot as unknown as RunSnapshotLike;
    const run = snapshot.context?.run;
    if (snapshot.machine?.id !== 'run' || snapshot.status !== 'active' || !run) return;
    // The run's id below the root (`/1.0` for the sub-run of call 0 in turn 1): stable across paths, unlike the root's random id.
    const below = run.runId.includes('/') ? run.runId.slice(run.runId.indexOf('/') + 1) : '';
    for (const node of snapshot._nodes ?? []) {
      if (node.type !== 'atomic' || SKIPPED.has(node.id) || this.offered.has(`${below} ${node.id}`)) continue;
      this.offered.add(`${below} ${node.id}`);
      const at = `${run.path.join(' > ')}${below ? ` (${below})` : ''} in ${node.id.replace(/^run\./, '')}`;
      let took: number;
      try {
        took = this.driver.choose(at, ['go on', 'cancel']);
      } catch {
        return; // nondeterminism: the driver keeps it and cancels the run
      }
      if (took === 1) return this.driver.cancelSoon(at);
    }
  }
}
