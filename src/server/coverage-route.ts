import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UserError } from '../errors.js';
import type { CoverageReport } from '../testing/coverage-report.js';
import { HttpError } from './http.js';

/**
 * Where the server finds the coverage report the inspector lays onto the run chart
 * (`GET /api/coverage`): a JSON file (read at every request, so a rerun of your tests shows
 * on the page's next load of it), or a function (e.g. `() => recorder.report()` for live coverage).
 */
export type CoverageSource = string | (() => CoverageReport | Promise<CoverageReport>);

/** @throws UserError when the `coverage` option is neither a path nor a function. */
export function checkCoverageSource(source: unknown): void {
  if (source !== undefined && !(typeof source === 'string' && source.length > 0) && typeof source !== 'function') {
    throw new UserError(`server: coverage must be the path of a coverage JSON file or a function returning a coverage report, got ${typeof source}.`);
  }
}

/** What `GET /api/coverage` answers; `coverage: null` (and `from: null`) when the server has no coverage source. */
export type CoverageAnswer = { readonly coverage: CoverageReport; /** The file's absolute path, or `function`. */ readonly from: string } | { readonly coverage: null; readonly from: null };

/**
 * The report `source` gives now; without a source, `{ coverage: null }` (a 200, so the page
 * asking on load logs no failed request on servers without coverage).
 * @throws HttpError 404 `coverage_not_found` (no such file), 422 `invalid_coverage` (not JSON,
 *   or not a coverage report), 500 `coverage_failed` (the function threw, the file is unreadable).
 */
export async function readCoverage(source: CoverageSource | undefined): Promise<CoverageAnswer> {
  if (source === undefined) return { coverage: null, from: null };
  if (typeof source === 'function') {
    let report: CoverageReport;
    try {
      report = await source();
    } catch (error) {
      throw new HttpError(500, 'coverage_failed', `The coverage function threw: ${(error as Error)?.message ?? String(error)}`);
    }
    return { coverage: checked(report, 'the coverage function’s result'), from: 'function' };
  }
  const file = resolve(source);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new HttpError(404, 'coverage_not_found', `No coverage file at ${file} yet: write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).`);
    throw new HttpError(500, 'coverage_failed', `Cannot read the coverage file ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HttpError(422, 'invalid_coverage', `${file} is not JSON: ${(error as Error).message}`);
  }
  return { coverage: checked(parsed, file), from: file };
}

function checked(value: unknown, where: string): CoverageReport {
  try {
    return checkCoverageReport(value, where);
  } catch (error) {
    if (error instanceof UserError) throw new HttpError(422, 'invalid_coverage', error.message);
    throw error;
  }
}

/**
 * `value` (a parsed coverage file) as a CoverageReport, checked field by field.
 * @throws UserError naming `where` and the first field that is missing or of the wrong type.
 */
export function checkCoverageReport(value: unknown, where: string): CoverageReport {
  const fail = (what: string): never => {
    throw new UserError(`${where} is not a coverage report: ${what}. Write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).`);
  };
  const record = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!record(value)) return fail('it is not a JSON object');
  if (!isCount(value.runs)) fail('"runs" must be a non-negative integer');
  const chart = value.chart;
  if (!record(chart)) return fail('"chart" must be an object');
  for (const list of ['states', 'transitions'] as const) {
    const items = chart[list];
    if (!Array.isArray(items)) return fail(`"chart.${list}" must be an array`);
    items.forEach((item: unknown, i) => {
      if (!record(item) || typeof item.id !== 'string' || !isCount(item.count)) fail(`"chart.${list}[${i}]" must be { id: string, count: non-negative integer }`);
    });
  }
  if (!isCount(chart.statesCovered) || !isCount(chart.transitionsCovered)) fail('"chart.statesCovered" and "chart.transitionsCovered" must be non-negative integers');
  if (!Array.isArray(value.agents)) fail('"agents" must be an array');
  return value as unknown as CoverageReport;
}

const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
