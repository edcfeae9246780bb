import type { ApprovalDecision, ApprovalHandler, ApprovalRequest } from '../agent.js';
import type { RunContext } from '../tools/context.js';

interface PendingApproval {
  readonly request: ApprovalRequest;
  readonly ctx: RunContext<any>;
  readonly handler: ApprovalHandler | undefined;
  /** Set once the stream consumer has seen the event and moved on without deciding. */
  handlerAsked: boolean;
  /** The handler answered "ask": the call waits for an out-of-band decision. */
  leftToConsumer: boolean;
  resolve(approved: boolean): void;
}

/**
 * Collects approval decisions for one run tree. Order of authority: the stream consumer
 * (ev.approve/reject, handle.approvals), then the agent's approvalHandler once the
 * consumer has moved past the event, else deny. Every undecided path ends in deny.
 */
export class ApprovalDesk {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly watchers = new Map<string, Array<(approved: boolean) => void>>();
  private consumerGone = false;

  /** Opens a request; the promise resolves true only on an explicit allow. */
  open(request: ApprovalRequest, ctx: RunContext<any>, handler: ApprovalHandler | undefined, timeoutMs: number | undefined, signal: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (approved: boolean): void => {
        if (!this.pending.delete(request.call.id)) return;
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(approved);
        const watchers = this.watchers.get(request.call.id);
        this.watchers.delete(request.call.id);
        for (const watch of watchers ?? []) watch(approved);
      };
      const onAbort = (): void => finish(false);
      this.pending.set(request.call.id, { request, ctx, handler, handlerAsked: false, leftToConsumer: false, resolve: finish });
      if (signal.aborted) return finish(false);
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(() => finish(false), timeoutMs);
    });
  }

  /** A decision from the consumer; false when no call with that id is waiting. */
  decide(callId: string, approved: boolean): boolean {
    const entry = this.pending.get(callId);
    if (!entry) return false;
    entry.resolve(approved);
    return true;
  }

  /** Decides every waiting call at once. Returns how many were decided. */
  release(approved: boolean): number {
    const entries = [...this.pending.values()];
    for (const entry of entries) entry.resolve(approved);
    return entries.length;
  }

  /** Resolves with the decision once the waiting call is decided, by anyone; undefined when nothing waits. */
  settled(callId: string): Promise<boolean | undefined> {
    if (!this.pending.has(callId)) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const list = this.watchers.get(callId) ?? [];
      list.push(resolve);
      this.watchers.set(callId, list);
    });
  }

  waitingCallIds(): string[] {
    return [...this.pending.keys()];
  }

  /** The consumer moved past the approval event without deciding: ask the handler. */
  passed(callId: string): void {
    const entry = this.pending.get(callId);
    if (!entry || entry.handlerAsked) return;
    entry.handlerAsked = true;
    void this.askHandler(entry);
  }

  /** Nobody will read events any more: "ask" can no longer be answered, so it denies. */
  consumerLeft(): void {
    this.consumerGone = true;
    for (const entry of [...this.pending.values()]) {
      if (entry.leftToConsumer) {
        entry.resolve(false);
      } else if (!entry.handlerAsked) {
        entry.handlerAsked = true;
        void this.askHandler(entry);
      }
      // An entry whose handler is still deciding sees consumerGone when it answers.
    }
  }

  private async askHandler(entry: PendingApproval): Promise<void> {
    let decision: ApprovalDecision | undefined;
    try {
      decision = entry.handler ? await entry.handler(entry.request, entry.ctx) : undefined;
    } catch {
      decision = 'deny';
    }
    if (decision === true || decision === 'allow') return entry.resolve(true);
    // "ask" leaves the call waiting for an out-of-band decision, but only while someone can give one.
    if (decision === 'ask' && !this.consumerGone) {
      entry.leftToConsumer = true;
      return;
    }
    entry.resolve(false);
  }
}
