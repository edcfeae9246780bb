/**
 * `troupe/postgres`: the PostgreSQL checkpoint store and session, for runs shared by many
 * processes, and the migration that creates their tables (`troupe db migrate` runs it). A
 * separate entry so that only code that asks for PostgreSQL loads `pg`.
 */
export { PostgresCheckpointStore } from '../store/postgres-checkpoint-store.js';
export { PostgresSession } from '../store/postgres-session.js';
export { enqueueRun, type ClaimedRun, type RunJob } from '../store/postgres-queue.js';
export { migratePostgres, type MigrateOptions, type MigrationStep } from '../store/postgres-migrate.js';
export type { PostgresConnection, PostgresConnectionOptions, PostgresStoreOptions } from '../store/postgres-options.js';
export type { AppendRequest, Lease, AppendFence } from '../store/checkpoint-store.js';
export { RunLocked, StoreUnavailable } from '../errors.js';
