/**
 * `troupe/sqlite`: the SQLite checkpoint store and session. A separate entry because
 * better-sqlite3 is a native addon: only code that asks for SQLite loads it.
 */
export { SqliteCheckpointStore } from '../store/sqlite-checkpoint-store.js';
export { SqliteSession } from '../store/sqlite-session.js';
export type { SqliteStoreOptions } from '../store/sqlite-options.js';
