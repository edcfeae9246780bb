/**
 * The cluster channel on PostgreSQL: messages to a run's owner in `troupe_messages`, run events
 * in `troupe_events`, each write announced with `pg_notify` in the same transaction (so a node
 * that hears of it can read it). Notifications only say "look"; the tables are the truth, so a
 * node that missed some (reconnecting, not started yet) polls and loses nothing.
 */
import { EventsPruned, StoreUnavailable, UserError } from '../errors.js';
import type { WireRunEvent } from '../inspect/wire.js';
import { checkRunId } from './checkpoint-store.js';
import { FINISHED_STORED_STATUSES, decodeJson } from './format.js';
import { PostgresDatabase } from './postgres.js';
import { POSTGRES_CHECKPOINTS, inSchema } from './postgres-layout.js';
import { channelFor, listenFor } from './postgres-listener.js';
import { PRUNED_EVENTS_TYPE, checkRetention, type EventRetention, type PrunedEventsMarker, type PruneReport } from './event-retention.js';
import { pruneEventsIn } from './postgres-prune.js';
import type { PostgresConnection, PostgresStoreOptions } from './postgres-options.js';
import type { BusListeners, RunBus, RunMessage, StoredRunEvent, StoredRunMessage } from './run-bus.js';


/** @throws UserError when `message` is not a RunMessage (checked before anything is written). */
export function checkRunMessage(message: unknown): asserts message is RunMessage {
  const m = message as Partial<Record<string, unknown>> | null;
  const bad = (why: string): never => {
    throw new UserError(`A run message ${why}, got ${JSON.stringify(message)}.`);
  };
  if (typeof m !== 'object' || m === null) bad('must be an object');
  switch (m!.kind) {
    case 'approve':
      if (typeof m!.approvalId !== 'string' || m!.approvalId.length === 0) bad('of kind approve needs a non-empty approvalId');
      if (typeof m!.approved !== 'boolean') bad('of kind approve needs approved: boolean');
      if (m!.args !== undefined && (m!.approved !== true || typeof m!.args !== 'object' || m!.args === null || Array.isArray(m!.args))) bad('of kind approve has args only as a JSON object with approved: true');
      break;
    case 'cancel':
      break;
    case 'steer':
      if (typeof m!.text !== 'string' || m!.text.length === 0) bad('of kind steer needs a non-empty text');
      if (m!.queue !== undefined && m!.queue !== 'steer' && m!.queue !== 'follow_up') bad("of kind steer has queue 'steer' or 'follow_up'");
      break;
    case 'signal':
      if (typeof m!.name !== 'string' || m!.name.length === 0) bad('of kind signal needs a non-empty name');
      break;
    case 'answer':
      if (typeof m!.requestId !== 'string' || m!.requestId.length === 0) bad('of kind answer needs a non-empty requestId');
      if (typeof m!.answer !== 'string' && !(Array.isArray(m!.answer) && m!.answer.every((a) => typeof a === 'string'))) bad('of kind answer needs an answer: a string or an array of strings');
      break;
    default:
      bad("has kind 'approve', 'cancel', 'steer', 'signal' or 'answer'");
  }
  for (const key of ['reason', 'by'] as const) if (m![key] !== undefined && typeof m![key] !== 'string') bad(`has a string ${key}`);
}

/**
 * `RunBus` on PostgreSQL: the same tables as `PostgresCheckpointStore` (layout 2, made by
 * `troupe db migrate`), its own small pool, and one listening connection per `listen`.
 */
export class PostgresRunBus implements RunBus {
  private readonly db: PostgresDatabase;
  private readonly now: () => number;
  private readonly stops = new Set<() => Promise<void>>();

  constructor(
    private readonly connection: PostgresConnection,
    options: PostgresStoreOptions = {},
  ) {
    this.db = new PostgresDatabase(connection, 'run bus', POSTGRES_CHECKPOINTS, options);
    this.now = options.now ?? Date.now;
  }

  get where(): string {
    return this.db.where;
  }

  async send(runId: string, message: RunMessage): Promise<StoredRunMessage> {
    checkRunId(runId);
    checkRunMessage(message);
    const sentAt = this.now();
    const { kind, ...body } = message;
    const rows = await this.db.transaction(async (q) => {
      const inserted = await q<{ id: string }>(this.sql('INSERT INTO {s}.troupe_messages (run_id, kind, body, sent_at) VALUES ($1, $2, $3, $4) RETURNING id'), [runId, kind, JSON.stringify(body), sentAt]);
      // The owner hears `message`; idle workers hear `work` (a suspended or queued run may now have something to do).
      await q('SELECT pg_notify($1, $3), pg_notify($2, $3)', [channelFor(this.db.schema, 'message'), channelFor(this.db.schema, 'work'), runId]);
      return inserted;
    });
    return { id: Number(rows[0]!.id), runId, message, sentAt, appliedAt: undefined };
  }

  async messages(runId: string): Promise<StoredRunMessage[]> {
    checkRunId(runId);
    const rows = await this.db.query<{ id: string; kind: string; body: string; sent_at: string; applied_at: string | null }>(
      this.sql('SELECT id, kind, body, sent_at, applied_at FROM {s}.troupe_messages WHERE run_id = $1 ORDER BY id'),
      [runId],
    );
    return rows.map((row) => {
      const where = `${this.db.where}: message ${row.id} of run '${runId}'`;
      const body = decodeJson(row.body, where);
      const message = { kind: row.kind, ...(typeof body === 'object' && body !== null ? body : {}) };
      try {
        checkRunMessage(message);
      } catch (error) {
        throw new UserError(`${where} is corrupt: ${(error as Error).message}`);
      }
      return { id: Number(row.id), runId, message, sentAt: Number(row.sent_at), appliedAt: row.applied_at === null ? undefined : Number(row.applied_at) };
    });
  }

  async markApplied(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(this.sql('UPDATE {s}.troupe_messages SET applied_at = $2 WHERE id = ANY($1::bigint[]) AND applied_at IS NULL'), [ids.map(String), this.now()]);
  }

  async clearFinished(runId: string): Promise<number> {
    checkRunId(runId);
    const rows = await this.db.query(
      this.sql('DELETE FROM {s}.troupe_messages m WHERE m.run_id = $1 AND EXISTS (SELECT 1 FROM {s}.troupe_runs r WHERE r.run_id = $1 AND r.status = ANY($2::text[])) RETURNING m.id'),
      [runId, FINISHED_STORED_STATUSES],
    );
    return rows.length;
  }

  async publish(runId: string, events: readonly WireRunEvent[]): Promise<void> {
    checkRunId(runId);
    if (events.length === 0) return;
    const at = this.now();
    await this.db.transaction(async (q) => {
      // One statement for the batch; unnest keeps the given order in the identity column.
      await q(this.sql('INSERT INTO {s}.troupe_events (run_id, type, data, at) SELECT $1, t, d, $4 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(t, d, n) ORDER BY n'), [
        runId,
        events.map((event) => event.type),
        events.map((event) => JSON.stringify(event)),
        at,
      ]);
      await q('SELECT pg_notify($1, $2)', [channelFor(this.db.schema, 'events'), runId]);
    });
  }

  async events(runId: string, afterId = 0, limit = 1000): Promise<StoredRunEvent[]> {
    checkRunId(runId);
    const rows = await this.db.query<{ id: string; type: string; data: string; at: string }>(this.sql('SELECT id, type, data, at FROM {s}.troupe_events WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3'), [runId, afterId, limit]);
    // A pruned run's events before its marker are gone: a cursor below it cannot be replayed.
    if (rows[0]?.type === PRUNED_EVENTS_TYPE) {
      const marker = decodeJson(rows[0].data, `${this.db.where}: event ${rows[0].id} of run '${runId}'`) as PrunedEventsMarker;
      throw new EventsPruned(runId, Number(rows[0].id), Number(marker.prunedAt));
    }
    return rows
      .filter((row) => row.type !== PRUNED_EVENTS_TYPE)
      .map((row) => ({ id: Number(row.id), runId, event: decodeJson(row.data, `${this.db.where}: event ${row.id} of run '${runId}'`) as WireRunEvent, at: Number(row.at) }));
  }

  /**
   * Prunes the stored events of finished runs that `retention` drops (or with `dryRun` only
   * says which): see `pruneEvents` in troupe/postgres. Safe to run from several processes at once.
   * @throws UserError for a bad retention; StoreUnavailable.
   */
  async pruneEvents(retention: EventRetention, options: { readonly dryRun?: boolean } = {}): Promise<PruneReport> {
    const rule = checkRetention(retention, 'pruneEvents');
    return pruneEventsIn(this.db, rule, this.now(), options.dryRun === true);
  }

  async listen(listeners: BusListeners): Promise<() => Promise<void>> {
    // The tables must exist before a node relies on hearing about them.
    await this.db.query('SELECT 1');
    let stop: () => Promise<void>;
    try {
      stop = await listenFor(this.connection, this.db.schema, listeners);
    } catch (error) {
      throw new StoreUnavailable(this.db.where, `Cannot listen on ${this.db.where}: ${(error as Error).message}.`, { cause: error, outcome: 'not_written' });
    }
    const once = async (): Promise<void> => {
      this.stops.delete(once);
      await stop();
    };
    this.stops.add(once);
    return once;
  }

  async close(): Promise<void> {
    await Promise.all([...this.stops].map((stop) => stop()));
    await this.db.close();
  }

  private sql(text: string): string {
    return inSchema(text, this.db.s);
  }
}
