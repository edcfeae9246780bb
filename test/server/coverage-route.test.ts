import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { UserError } from '../../src/errors.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { CoverageRecorder } from '../../src/entry/testing.js';
import type { CoverageReport } from '../../src/entry/testing.js';
import { calcAgent } from './agents.js';
import { call } from './helpers.js';

/** An empty report: every state and transition of the chart with 0 (no run recorded). */
const empty = (): CoverageReport => new CoverageRecorder().report();

describe('GET /api/coverage', () => {
  let dir: string;
  const servers: TroupeServer[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-coverage-'));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (coverage?: string | (() => CoverageReport)): Promise<TroupeServer> => {
    const server = await createServer({ agents: { calc: calcAgent }, ...(coverage !== undefined ? { coverage } : {}) });
    servers.push(server);
    return server;
  };

  it('answers the file as it is now (read at every request), and says what is wrong with a missing or bad one', async () => {
    const file = join(dir, 'coverage.json');
    const server = await start(file);
    expect(await call(server, 'GET', '/api/coverage')).toMatchObject({
      status: 404,
      json: { error: { code: 'coverage_not_found', message: `No coverage file at ${file} yet: write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).` } },
    });
    writeFileSync(file, JSON.stringify(empty()));
    const first = await call(server, 'GET', '/api/coverage');
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ coverage: JSON.parse(JSON.stringify(empty())), from: file });
    writeFileSync(file, JSON.stringify({ ...empty(), runs: 7 }));
    expect((await call(server, 'GET', '/api/coverage')).json.coverage.runs).toBe(7);
    writeFileSync(file, '{"runs": 1,');
    const broken = await call(server, 'GET', '/api/coverage');
    expect(broken.status).toBe(422);
    expect(broken.json.error.code).toBe('invalid_coverage');
    expect(broken.json.error.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not JSON: `));
    writeFileSync(file, JSON.stringify({ runs: 1, chart: { states: [] } }));
    expect(await call(server, 'GET', '/api/coverage')).toMatchObject({
      status: 422,
      json: { error: { code: 'invalid_coverage', message: `${file} is not a coverage report: "chart.transitions" must be an array. Write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).` } },
    });
    expect(await call(server, 'POST', '/api/coverage', { body: {} })).toMatchObject({ status: 405, json: { error: { code: 'method_not_allowed' } } });
    expect((await call(server, 'GET', '/api/coverage', { token: 'wrong-token-123' })).status).toBe(401);
  });

  it('answers a function’s report (live coverage), 500 when it throws, and { coverage: null } without the option', async () => {
    let runs = 0;
    const live = await start(() => ({ ...empty(), runs: ++runs }));
    expect((await call(live, 'GET', '/api/coverage')).json).toMatchObject({ coverage: { runs: 1 }, from: 'function' });
    expect((await call(live, 'GET', '/api/coverage')).json).toMatchObject({ coverage: { runs: 2 }, from: 'function' });
    const throwing = await start(() => {
      throw new Error('recorder gone');
    });
    expect(await call(throwing, 'GET', '/api/coverage')).toMatchObject({ status: 500, json: { error: { code: 'coverage_failed', message: 'The coverage function threw: recorder gone' } } });
    const none = await start();
    expect(await call(none, 'GET', '/api/coverage')).toMatchObject({ status: 200, json: { coverage: null, from: null } });
  });

  it('rejects a coverage option that is neither a path nor a function', async () => {
    await expect(createServer({ agents: {}, coverage: 42 as never })).rejects.toThrow(new UserError('server: coverage must be the path of a coverage JSON file or a function returning a coverage report, got number.'));
  });

  it('troupe serve --coverage <file> serves that file and says so', async () => {
    const file = join(dir, 'served.json');
    writeFileSync(file, JSON.stringify({ ...empty(), runs: 3 }));
    const lines: string[] = [];
    const server = await serve(['--port', '0', '--db', 'off', '--coverage', file], (line) => lines.push(line));
    servers.push(server);
    expect(lines[0]).toBe(`  coverage:  ${file} (the inspector's "coverage" switch)`);
    expect((await call(server, 'GET', '/api/coverage')).json).toMatchObject({ coverage: { runs: 3 }, from: file });
  });
});
