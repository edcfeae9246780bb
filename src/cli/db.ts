import { parseArgs } from 'node:util';
import { StoreUnavailable, UserError } from '../errors.js';
import type { MigrationStep } from '../store/postgres-migrate.js';
import { PRUNE_USAGE, dbPrune } from './db-prune.js';

export const DB_USAGE = `usage: troupe db migrate --db <postgres://user:password@host:port/database> [--schema <name>]
       troupe db prune --db <url> (--older-than <duration> | --keep-last <runs>) [--dry-run] (troupe db prune --help)

migrate: creates troupe's PostgreSQL tables, or upgrades them to the layout this version uses,
in one transaction (running it again changes nothing). Stores never create tables themselves.
prune: deletes the stored event streams of finished runs (never their logs).

options of migrate:
  --db <url>        the database (default: $TROUPE_DATABASE_URL)
  --schema <name>   the schema to use, created when missing (default public)
`;

/** One line per component: what the migration did. */
export function describeStep(step: MigrationStep): string {
  if (step.from === undefined) return `${step.component}: created (layout ${step.to})`;
  if (step.from === step.to) return `${step.component}: up to date (layout ${step.to})`;
  return `${step.component}: upgraded from layout ${step.from} to ${step.to}`;
}

/**
 * `troupe db <subcommand>`. Returns the exit code: 0 done, 1 the database could not be
 * reached (StoreUnavailable), 2 bad arguments or a layout this version cannot handle.
 */
export async function db(argv: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand === undefined) {
    err(DB_USAGE);
    return 2;
  }
  const help = rest.includes('--help') || rest.includes('-h');
  if (subcommand === 'prune') {
    if (!help) return dbPrune(rest, out, err);
    out(PRUNE_USAGE);
    return 0;
  }
  if (subcommand === '--help' || subcommand === '-h' || help) {
    out(DB_USAGE);
    return 0;
  }
  if (subcommand !== 'migrate') {
    err(`troupe db: unknown subcommand '${subcommand}'\n\n${DB_USAGE}`);
    return 2;
  }
  let values: { db?: string; schema?: string };
  try {
    ({ values } = parseArgs({ args: rest, options: { db: { type: 'string' }, schema: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    err(`troupe db migrate: ${(error as Error).message}\n\n${DB_USAGE}`);
    return 2;
  }
  const url = values.db ?? process.env.TROUPE_DATABASE_URL;
  if (!url) {
    err(`troupe db migrate: --db is required (or set TROUPE_DATABASE_URL)\n\n${DB_USAGE}`);
    return 2;
  }
  try {
    // Loaded here so that other commands never load pg.
    const { migratePostgres } = await import('../store/postgres-migrate.js');
    const steps = await migratePostgres(url, values.schema !== undefined ? { schema: values.schema } : {});
    for (const step of steps) out(describeStep(step));
    return 0;
  } catch (error) {
    if (error instanceof StoreUnavailable) {
      err(`troupe db migrate: ${error.message}`);
      return 1;
    }
    if (error instanceof UserError) {
      err(`troupe db migrate: ${error.message}`);
      return 2;
    }
    throw error;
  }
}
