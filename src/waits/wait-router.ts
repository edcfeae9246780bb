import type { AnyActorRef } from 'xstate';
import type { WaitKind } from './kinds/wait-kind.js';
import type { WaitKindName, WaitOutcome, WaitView } from './wait-types.js';

interface Entry {
  readonly view: WaitView;
  readonly kind: WaitKind;
  readonly ref: AnyActorRef;
}

/**
 * The inbox of one run tree: every wait that is open anywhere in the tree, by wait id, with
 * the machine that waits. It only routes: a resolution addressed to a wait reaches exactly
 * that wait's machine (which owns its deadline, its handler and "resolved once"); the inbox
 * never resolves anything on its own. A wait is listed from the moment it opens until its
 * machine ends (resolved, timed out) or is stopped (its run was cancelled or parked).
 */
export class WaitRouter {
  // Created with the first wait: most runs never wait.
  private waits: Map<string, Entry> | undefined;
  private watchers: Map<string, Array<(outcome: WaitOutcome | undefined) => void>> | undefined;
  private openedListeners: Set<(view: WaitView) => void> | undefined;
  /** Nobody reads the stream any more: approvals left to the consumer go to their handler (or deny). */
  consumerGone = false;
  /** Approvals are left to their handler at once (`result()` without an iterator). */
  passImmediately = false;

  /** Called by a wait machine when it opens. */
  register(view: WaitView, kind: WaitKind, ref: AnyActorRef): void {
    (this.waits ??= new Map()).set(view.waitId, { view, kind, ref });
    ref.subscribe({ complete: () => this.ended(view.waitId, ref), error: () => this.ended(view.waitId, ref) });
    if (this.openedListeners) for (const listener of this.openedListeners) {
      try {
        listener(view);
      } catch {
        // A broken listener must not break the wait.
      }
    }
  }

  private ended(waitId: string, ref: AnyActorRef): void {
    if (this.waits?.get(waitId)?.ref !== ref) return;
    this.waits.delete(waitId);
    const snapshot = ref.getSnapshot() as { status: string; output?: WaitOutcome };
    const outcome = snapshot.status === 'done' ? snapshot.output : undefined;
    const watchers = this.watchers?.get(waitId);
    this.watchers?.delete(waitId);
    for (const watch of watchers ?? []) watch(outcome);
  }

  /** Calls `listener` with every wait that opens from now on, anywhere in the tree; returns an unsubscribe function. */
  onOpened(listener: (view: WaitView) => void): () => void {
    const listeners = (this.openedListeners ??= new Set());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }

  isWaiting(waitId: string): boolean {
    return this.waits?.has(waitId) === true;
  }

  /** The open waits, in the order they opened; only those of `kind` when given. */
  pending(kind?: WaitKindName): WaitView[] {
    if (!this.waits) return [];
    const out: WaitView[] = [];
    for (const { view } of this.waits.values()) if (kind === undefined || view.kind === kind) out.push(view);
    return out;
  }

  /** The open waits of one run of the tree (what it would park on). */
  openFor(runId: string): WaitView[] {
    if (!this.waits) return [];
    const out: WaitView[] = [];
    for (const { view } of this.waits.values()) if (view.runId === runId) out.push(view);
    return out;
  }

  /**
   * Resolves the open wait `waitId` with `given`, checked by its kind first.
   * @returns false when no wait is open under that id. @throws UserError when `given` does not fit the wait (it stays open).
   */
  resolve(waitId: string, given: unknown, by = 'consumer'): boolean {
    const entry = this.waits?.get(waitId);
    if (!entry) return false;
    const resolution = entry.kind.resolution(entry.view, given);
    entry.ref.send({ type: 'wait.resolve', resolution, by });
    return true;
  }

  /**
   * Delivers an external event: every open wait for an event called `name` resolves with
   * `payload` (a JSON value). @returns how many did. @throws UserError when `payload` is not JSON (none does then).
   */
  signal(name: string, payload: unknown, by = 'signal'): number {
    const targets = this.pending('event').filter((view) => view.detail['name'] === name);
    if (targets.length === 0) return 0;
    const entry = this.waits!.get(targets[0]!.waitId)!;
    const resolution = entry.kind.resolution(entry.view, payload);
    for (const view of targets) this.waits!.get(view.waitId)!.ref.send({ type: 'wait.resolve', resolution, by });
    return targets.length;
  }

  /** Resolves with the wait's outcome once it ends (undefined: it was withdrawn, e.g. its run was cancelled); undefined at once when it is not open. */
  settled(waitId: string): Promise<WaitOutcome | undefined> {
    if (!this.isWaiting(waitId)) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const watchers = (this.watchers ??= new Map());
      const list = watchers.get(waitId) ?? [];
      list.push(resolve);
      watchers.set(waitId, list);
    });
  }

  /** The stream consumer pulled past the opened event of `waitId` without resolving it. */
  passed(waitId: string): void {
    this.waits?.get(waitId)?.ref.send({ type: 'wait.unattended', gone: false });
  }

  /** Nobody will read the stream any more: approvals left to the consumer go to their handler, or deny. */
  consumerLeft(): void {
    this.consumerGone = true;
    if (this.waits) for (const { ref } of [...this.waits.values()]) ref.send({ type: 'wait.unattended', gone: true });
  }
}
