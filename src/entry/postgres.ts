/**
 * `troupe/postgres`: the PostgreSQL checkpoint store and session, for runs shared by many
 * processes, the cluster bus (messages to a run's owner, run events for every server node),
 * and the migration that creates their tables (`troupe db migrate` runs it); the worker loop
 * that uses them is `startWorker` in `troupe/server` (`troupe worker` runs it). A
 * separate entry so that only code that asks for PostgreSQL loads `pg`.
 */
export { PostgresCheckpointStore } from '../store/postgres-checkpoint-store.js';
export { PostgresSession } from '../store/postgres-session.js';
export { enqueueRun, type ClaimedRun, type RunJob } from '../store/postgres-queue.js';
export { PostgresRunBus } from '../store/postgres-bus.js';
export type { RunBus, RunMessage, StoredRunMessage, StoredRunEvent, BusListeners } from '../store/run-bus.js';
export { migratePostgres, type MigrateOptions, type MigrationStep } from '../store/postgres-migrate.js';
export type { PostgresConnection, PostgresConnectionOptions, PostgresStoreOptions } from '../store/postgres-options.js';
export type { AppendRequest, Lease, AppendFence } from '../store/checkpoint-store.js';
export { EventsPruned, RunLocked, StoreUnavailable } from '../errors.js';
export { pruneEvents, type PruneOptions } from '../store/postgres-prune.js';
export { parseDuration, PRUNED_EVENTS_TYPE, type EventRetention, type PruneReport, type PrunedRun } from '../store/event-retention.js';
