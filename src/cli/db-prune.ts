/** `troupe db prune`: retention of the cluster's stored run events (`troupe_events`). */
import { parseArgs } from 'node:util';
import { StoreUnavailable, UserError } from '../errors.js';
import type { PruneReport } from '../store/event-retention.js';

export const PRUNE_USAGE = `usage: troupe db prune --db <postgres://…> (--older-than <duration> | --keep-last <runs>) [--dry-run] [--schema <name>]

Deletes the stored event streams (troupe_events: what server nodes replay to clients) of
finished runs (completed, failed, cancelled). A run's log and result are never touched. A run
loses its events when every rule given drops it: it finished longer ago than --older-than, and
it is not among the --keep-last runs that finished last. A client that attaches to a pruned
run's stream later gets an events_pruned error naming where its result is.

options:
  --db <url>               the database (default: $TROUPE_DATABASE_URL)
  --schema <name>          the schema of the tables (default public)
  --older-than <duration>  prune runs that finished at least this long ago: 7d, 12h, 30m, 45s, 500ms
  --keep-last <runs>       keep the events of this many runs, the ones that finished last
  --dry-run                print what would be pruned, delete nothing
`;

/** The report, one line per run, as the command prints it. */
export function describePrune(report: PruneReport): string[] {
  const runs = report.runs.length === 1 ? '1 run' : `${report.runs.length} runs`;
  const events = report.events === 1 ? '1 event' : `${report.events} events`;
  if (report.runs.length === 0) return [report.dryRun ? 'dry run: no finished run has events to prune' : 'no finished run has events to prune'];
  const head = report.dryRun ? `dry run: would prune ${events} of ${runs} (nothing deleted; logs are never pruned):` : `pruned ${events} of ${runs} (their logs are kept):`;
  return [head, ...report.runs.map((run) => `  ${run.runId}  ${run.status}  finished ${new Date(run.finishedAt).toISOString()}  ${run.events} ${run.events === 1 ? 'event' : 'events'}`)];
}

/** Returns the exit code: 0 done, 1 the database could not be reached, 2 bad arguments or tables. */
export async function dbPrune(args: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const fail = (message: string, usage = false): number => {
    err(`troupe db prune: ${message}${usage ? `\n\n${PRUNE_USAGE}` : ''}`);
    return 2;
  };
  let values: { db?: string; schema?: string; 'older-than'?: string; 'keep-last'?: string; 'dry-run'?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { db: { type: 'string' }, schema: { type: 'string' }, 'older-than': { type: 'string' }, 'keep-last': { type: 'string' }, 'dry-run': { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return fail((error as Error).message, true);
  }
  const url = values.db ?? process.env.TROUPE_DATABASE_URL;
  if (!url) return fail('--db is required (or set TROUPE_DATABASE_URL)', true);
  if (values['older-than'] === undefined && values['keep-last'] === undefined) return fail('give --older-than <duration> and/or --keep-last <runs>: which finished runs keep their events', true);
  try {
    const [{ parseDuration }, { pruneEvents }] = await Promise.all([import('../store/event-retention.js'), import('../store/postgres-prune.js')]);
    const olderThan = values['older-than'] === undefined ? undefined : parseDuration(values['older-than'], '--older-than');
    const keepText = values['keep-last'];
    if (keepText !== undefined && !/^\d+$/.test(keepText)) return fail(`--keep-last must be a whole number of runs (0 or more), got ${JSON.stringify(keepText)}.`);
    const report = await pruneEvents(url, {
      ...(olderThan !== undefined ? { olderThan } : {}),
      ...(keepText !== undefined ? { keepLast: Number(keepText) } : {}),
      ...(values.schema !== undefined ? { schema: values.schema } : {}),
      dryRun: values['dry-run'] === true,
    });
    for (const line of describePrune(report)) out(line);
    return 0;
  } catch (error) {
    if (error instanceof StoreUnavailable) {
      err(`troupe db prune: ${error.message}`);
      return 1;
    }
    if (error instanceof UserError) return fail(error.message);
    throw error;
  }
}
