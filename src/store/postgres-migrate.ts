/**
 * `troupe db migrate`: creates or upgrades troupe's tables in a PostgreSQL schema, explicitly.
 * One transaction under an advisory lock, so two migrations at once never interleave and a
 * failed one leaves the schema as it was.
 */
import { UserError } from '../errors.js';
import { checkSchemaVersion } from './format.js';
import { PostgresDatabase, type Query } from './postgres.js';
import { META_TABLE, POSTGRES_COMPONENTS, inSchema, type PostgresComponent } from './postgres-layout.js';
import type { PostgresConnection } from './postgres-options.js';

/** What happened to one component. */
export interface MigrationStep {
  readonly component: string;
  /** Layout version before (undefined: the tables did not exist). */
  readonly from: number | undefined;
  readonly to: number;
}

export interface MigrateOptions {
  /** Schema to create the tables in (default "public"); created when missing. */
  readonly schema?: string;
}

/** Key of the advisory lock every migration holds (any fixed number; "troupe" in ASCII). */
const MIGRATION_LOCK = 0x74726f757065;

/**
 * Brings every troupe component in the schema to the layout this build uses.
 * @throws UserError when a component's layout is newer than this build (nothing changes).
 * @throws StoreUnavailable when the database cannot be reached (nothing changes).
 */
export async function migratePostgres(connection: PostgresConnection, options: MigrateOptions = {}): Promise<MigrationStep[]> {
  const db = new PostgresDatabase(connection, 'database', undefined, options.schema !== undefined ? { schema: options.schema } : {});
  try {
    return await db.transaction(async (q) => {
      await q('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await q(`CREATE SCHEMA IF NOT EXISTS ${db.s}`);
      await q(inSchema(META_TABLE, db.s));
      const steps: MigrationStep[] = [];
      for (const component of POSTGRES_COMPONENTS) steps.push(await migrateComponent(q, db, component));
      return steps;
    });
  } finally {
    await db.close();
  }
}

async function migrateComponent(q: Query, db: PostgresDatabase, component: PostgresComponent): Promise<MigrationStep> {
  const rows = await q<{ version: unknown }>(inSchema('SELECT schema_version AS version FROM {s}.troupe_meta WHERE component = $1', db.s), [component.name]);
  if (rows.length === 0) {
    await q(inSchema(component.create, db.s));
    await q(inSchema('INSERT INTO {s}.troupe_meta (component, schema_version) VALUES ($1, $2)', db.s), [component.name, component.version]);
    return { component: component.name, from: undefined, to: component.version };
  }
  const what = `'${component.name}' table layout version`;
  const from = checkSchemaVersion(rows[0]!.version, component.version, `PostgreSQL schema '${db.schema}'`, what);
  for (let version = from; version < component.version; version++) {
    const step = component.migrate?.[version];
    if (step === undefined) throw new UserError(`PostgreSQL schema '${db.schema}' uses ${what} ${version}, which this version of troupe cannot migrate.`);
    await q(inSchema(step, db.s));
  }
  await q(inSchema('UPDATE {s}.troupe_meta SET schema_version = $1 WHERE component = $2', db.s), [component.version, component.name]);
  return { component: component.name, from, to: component.version };
}
