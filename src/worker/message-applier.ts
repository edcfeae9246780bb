import { UserError } from '../errors.js';
import { runOfApproval } from '../runtime/approvals.js';
import { appendDecision, pendingStoredApprovals } from '../runtime/decide.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { RunBus, StoredRunMessage } from '../store/run-bus.js';
import type { ServerRun } from '../server/runs.js';
import type { LeasingStore } from './owned-store.js';
import { resolveStoredWaits } from '../runtime/stored-waits.js';
import { storedTreeWaits } from '../server/tree-waits.js';


/**
 * Before a claimed stored run resumes: decisions sent to it are written into the log of the run
 * that waits (the root or a sub-run, leased as `owner`), so the resumed run applies them as
 * stored decisions, bound to the call's arguments, before it would ask or park again. Returns
 * the approve messages that are settled (recorded now, or no longer pending: stale).
 */
export async function recordSentDecisions(
  store: LeasingStore,
  owner: string,
  ttlMs: number,
  rootId: string,
  messages: readonly StoredRunMessage[],
  log: (line: string) => void,
): Promise<StoredRunMessage[]> {
  const settled: StoredRunMessage[] = [];
  for (const sent of messages) {
    const { message } = sent;
    if (message.kind === 'signal' || message.kind === 'answer') {
      // Applied ones took effect in the log already (and a signal must not reach a later wait of the same name).
      if (sent.appliedAt === undefined) settled.push(...(await recordSentResolution(store, { owner, ttlMs }, rootId, sent, log)));
      continue;
    }
    if (message.kind !== 'approve') continue;
    const runId = runOfApproval(message.approvalId) || rootId;
    try {
      if (runId !== rootId) await store.claim(runId, owner, ttlMs);
      const decision = { approved: message.approved, ...(message.reason !== undefined ? { reason: message.reason } : {}), ...(message.args !== undefined ? { args: message.args } : {}), by: message.by ?? 'api' };
      await appendDecision(store, runId, message.approvalId, decision, owner);
      settled.push(sent);
    } catch (error) {
      log(`run ${rootId}: recording the decision for ${message.approvalId} failed (${(error as Error).message}); it is applied when the call asks again`);
    }
  }
  return settled;
}

/**
 * A signal or an answer sent while no process held the run: written into the log of each run of
 * the tree whose open wait it resolves (as `Runner.signal` / `Runner.answer` would), under the
 * worker's lease. Settled (returned) when written or when nothing waits for it any more;
 * left unsettled when writing failed (the run then gets it live, or at its next claim).
 */
async function recordSentResolution(store: LeasingStore, lease: { owner: string; ttlMs: number }, rootId: string, sent: StoredRunMessage, log: (line: string) => void): Promise<StoredRunMessage[]> {
  const { message } = sent;
  if (message.kind !== 'signal' && message.kind !== 'answer') return [];
  try {
    const { waits } = await storedTreeWaits(store, rootId);
    const matches = waits.filter((w) => (message.kind === 'signal' ? w.kind === 'event' && w.detail['name'] === message.name : w.kind === 'question' && w.waitId === message.requestId));
    const given = message.kind === 'signal' ? (message.payload ?? null) : message.answer;
    for (const runId of new Set(matches.map((w) => w.runId))) {
      const ids = new Set(matches.filter((w) => w.runId === runId).map((w) => w.waitId));
      await resolveStoredWaits(store, runId, (pending) => pending.filter((w) => ids.has(w.waitId)), given, message.by ?? 'api', lease);
    }
    return [sent];
  } catch (error) {
    // An answer that does not fit its question can never be applied: dropped, and said so.
    if (error instanceof UserError) {
      log(`run ${rootId}: the ${message.kind} sent as message ${sent.id} is not applied (${error.message})`);
      return [sent];
    }
    log(`run ${rootId}: recording the ${message.kind} sent as message ${sent.id} failed (${(error as Error).message}); it is applied to the live run`);
    return [];
  }
}

/** The id a cluster message's steer gets in the run (and its log), so it is applied once. */
export function steerIdFor(messageId: number): string {
  return `msg_${messageId}`;
}

/**
 * Applies the messages sent to one run to its live ServerRun, each at most once per process,
 * and marks them applied in the bus. Messages stay stored until the run ends, so when this
 * process dies, the next owner applies them again, and only what its log does not show yet
 * takes effect: an approval applies only while its call waits (a decided one no longer does),
 * a steer whose id is in the log is skipped, a cancel cancels again.
 */
export class MessageApplier {
  private readonly applied = new Set<number>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: RunBus,
    private readonly store: CheckpointStore,
    private readonly run: ServerRun,
    /** Ids of steer messages already in the run's log (from the load before a resume). */
    private readonly logged: ReadonlySet<string>,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Applies cancels and steers at once, synchronously: called right after the run starts, so a
   * cancel sent before it started stops it before its first model request.
   */
  applyAtStart(messages: readonly StoredRunMessage[], settled: readonly StoredRunMessage[] = []): void {
    // Approvals, signals and answers wait for their call to wait again (poke); the rest applies now.
    const later = new Set(['approve', 'signal', 'answer']);
    const recorded = new Set(settled.map((message) => message.id));
    const done = messages.filter((message) => !later.has(message.message.kind) && !recorded.has(message.id) && this.applyOne(message));
    this.record([...settled, ...done]);
  }

  /** Fetches the run's messages and applies what can be now (serialised; never rejects). */
  poke(): Promise<void> {
    this.chain = this.chain.then(async () => {
      try {
        const messages = await this.bus.messages(this.run.id);
        this.record(messages.filter((message) => !this.applied.has(message.id) && this.applyOne(message)));
      } catch (error) {
        this.log(`run ${this.run.id}: reading its messages failed (${(error as Error).message}); they are applied at the next notice`);
      }
    });
    return this.chain;
  }

  /**
   * After the run parked: approvals sent for calls its log no longer has waiting are marked
   * applied (they are stale), so they do not make the run look runnable again.
   */
  async settleStale(): Promise<void> {
    await this.chain;
    const open = (await this.bus.messages(this.run.id)).filter((m) => m.appliedAt === undefined && !this.applied.has(m.id));
    const stale: StoredRunMessage[] = [];
    let tree: Awaited<ReturnType<typeof storedTreeWaits>> | undefined;
    for (const message of open) {
      const sent = message.message;
      if (sent.kind === 'signal' || sent.kind === 'answer') {
        // Stale unless the parked tree's log still has a wait it resolves (then the next claim records it).
        tree ??= await storedTreeWaits(this.store, this.run.id).catch(() => undefined);
        if (tree && !tree.waits.some((w) => (sent.kind === 'signal' ? w.kind === 'event' && w.detail['name'] === sent.name : w.waitId === sent.requestId))) stale.push(message);
        continue;
      }
      if (sent.kind !== 'approve') continue;
      const approvalId = sent.approvalId;
      const runId = runOfApproval(approvalId) || this.run.id;
      const pending = await pendingStoredApprovals(this.store, runId).catch(() => undefined);
      if (pending && !pending.some((p) => p.approvalId === approvalId)) stale.push(message);
    }
    this.record(stale);
  }

  private applyOne({ id, message }: StoredRunMessage): boolean {
    const { run } = this;
    switch (message.kind) {
      case 'approve':
        return run.decide(message.approvalId, message.approved, message.reason, message.args);
      case 'cancel':
        if (run.finished) return false;
        run.cancel(message.reason ?? 'cancelled via API');
        return true;
      case 'signal':
        // Delivered to the calls waiting now; none: it stays unapplied (the run may be parking, and its next claim records it).
        return run.handle.signal(message.name, message.payload ?? null) > 0;
      case 'answer':
        try {
          return run.handle.humans.answer(message.requestId, message.answer as string | string[]);
        } catch (error) {
          // It does not fit the question (the server checked it against the log, so only a changed question gets here): dropped, and said so.
          if (!(error instanceof UserError)) throw error;
          this.log(`run ${run.id}: the answer sent as message ${id} is not applied (${error.message})`);
          return true;
        }
      case 'steer': {
        const steerId = steerIdFor(id);
        if (this.logged.has(steerId)) return true;
        try {
          if (message.queue === 'follow_up') run.handle.followUp(message.text, { id: steerId });
          else run.handle.steer(message.text, { id: steerId });
          return true;
        } catch (error) {
          // The run has ended (or the message waits already): nothing more to do with it here.
          if (error instanceof UserError) return false;
          throw error;
        }
      }
    }
  }

  private record(messages: readonly StoredRunMessage[]): void {
    if (messages.length === 0) return;
    for (const message of messages) this.applied.add(message.id);
    const ids = messages.filter((message) => message.appliedAt === undefined).map((message) => message.id);
    void this.bus.markApplied(ids).catch((error: unknown) => this.log(`run ${this.run.id}: marking messages applied failed (${(error as Error).message})`));
  }
}
