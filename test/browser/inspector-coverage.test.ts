import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool } from '../../src/index.js';
import { CoverageRecorder, ScriptedModel, call, exploreAgent, text, type CoverageReport } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { calcAgent } from '../server/agents.js';
import { detailsPayload, haveChromium, openPage, shot, startHarness, type Harness } from './harness.js';

const lookup = tool({ name: 'lookup', description: 'Look up.', parameters: z.object({ q: z.string() }), execute: async () => 'found' });

/** The coverage of one real run: a lookup call, then a text reply. */
async function oneRunCoverage(): Promise<CoverageReport> {
  const agent = new Agent({ name: 'Desk', model: new ScriptedModel([call('lookup', { q: 'a' }), text('done')]), tools: [lookup] });
  const recorder = new CoverageRecorder(agent);
  await recorder.watch(Runner.stream(agent, 'hi', { inspect: recorder.inspect }));
  return recorder.report();
}

describe.skipIf(!haveChromium)('inspector page (Chromium): coverage on the chart', () => {
  let harness: Harness;
  let dir: string;
  const servers: TroupeServer[] = [];

  beforeAll(async () => {
    harness = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'troupe-coverage-page-'));
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.close();
    await harness?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lays a coverage file onto the run chart: visited and unvisited states and edges, counts, the summary; a rewritten file shows when switched on again', async () => {
    const file = join(dir, 'coverage.json');
    writeFileSync(file, JSON.stringify(await oneRunCoverage()));
    const server = await createServer({ agents: { calc: calcAgent }, coverage: file, inspectorDir: harness.pageDir });
    servers.push(server);
    const { page, errors } = await openPage(harness.browser, server.inspectorUrl);
    await page.waitForSelector('#coverage-switch:not([hidden])');
    await page.check('#coverage');
    await page.waitForSelector('#chart[data-source="coverage"] svg.statechart');
    expect(await page.locator('#coverage-summary').textContent()).toBe('coverage of 1 run: 12 of 33 states visited, 10 of 85 transitions taken');
    expect(await page.locator('#chart-state').textContent()).toBe('coverage');

    // States: the twelve the run entered are visited, with their counts; the other 19 are not.
    const states = (cls: string) => page.locator(`#chart [data-state-id].${cls}`).evaluateAll((els) => els.map((el) => `${el.getAttribute('data-state-id')} ${el.getAttribute('data-visits')}`).sort());
    expect(await states('visited')).toEqual([
      'run 1',
      'run.completed 1',
      'run.finishing 1',
      'run.idle 1',
      'run.starting 1',
      'run.turn 1',
      'run.turn.checkLimits 2',
      'run.turn.executing 1',
      'run.turn.executing.draining 1',
      'run.turn.executing.preflight 1',
      'run.turn.model 2',
      'run.turn.turnEnd 2',
    ]);
    expect((await states('unvisited')).length).toBe(21);
    expect(await states('unvisited')).toContain('run.turn.executing.approvalWait 0');
    expect(await page.locator('#chart [data-state-id="run.turn.model"] .coverage-line').allTextContents()).toEqual(['visited 2×']);
    expect(await page.locator('#chart [data-state-id="run.cancelled"] .coverage-line').allTextContents()).toEqual(['never visited']);
    // The root's transitions without a target (no edge) are counted on it.
    expect(await page.locator('#chart [data-state-id="run"] .coverage-line').allTextContents()).toEqual(['visited 1×', 'in place: 0 of 11 taken']);

    // Edges: visited, partly (some of the transitions drawn as one edge never taken) and unvisited, with counts.
    const edge = (key: string) => page.locator(`#chart .transition[data-edge-keys~="${key}"]`);
    expect(await edge('run.turn.model->run.turn.turnEnd').getAttribute('class')).toBe('transition on visited partly');
    expect(await edge('run.turn.model->run.turn.turnEnd').getAttribute('data-visits')).toBe('1');
    expect(await edge('run.turn.model->run.turn.turnEnd').locator('.edge-label').textContent()).toBe('model.replied [replyStops] 0× · model.replied [noToolCalls] 1×');
    expect(await edge('run.turn.model->run.turn.turnEnd').locator('title').textContent()).toBe(
      'run.turn.model model.replied#2 [replyStops] -> run.turn.turnEnd: 0×\nrun.turn.model model.replied#3 [noToolCalls] -> run.turn.turnEnd: 1×',
    );
    expect(await edge('run.turn.model->run.turn.executing').getAttribute('class')).toBe('transition on visited');
    expect(await edge('run->run.cancelled').getAttribute('class')).toBe('transition on unvisited');
    expect(await edge('run->run.cancelled').getAttribute('data-visits')).toBe('0');
    const visitedEdges = await page.locator('#chart .transition.visited').evaluateAll((els) => els.map((el) => `${el.getAttribute('data-edge-keys')} ${el.getAttribute('data-visits')}`).sort());
    expect(visitedEdges).toEqual([
      'run.idle->run.starting 1',
      'run.starting->run.turn 1',
      'run.turn.checkLimits->run.turn.model 2',
      'run.turn.executing.draining->run.turn.turnEnd 1',
      'run.turn.executing.preflight->run.turn.executing.draining 1',
      'run.turn.model->run.turn.executing 1',
      'run.turn.model->run.turn.turnEnd 1',
      'run.turn.turnEnd->run.finishing 1',
      'run.turn.turnEnd->run.turn 1',
      'run.finishing->run.completed 1',
    ].sort());
    // Initial-state dots are not transitions of the report: left unmarked.
    expect(await page.locator('#chart .transition.initial-edge.visited, #chart .transition.initial-edge.unvisited').count()).toBe(0);
    // A state's details carry its visits.
    await page.click('#chart [data-state-id="run.turn.model"] .state-label');
    expect(await detailsPayload(page)).toMatchObject({ id: 'run.turn.model', visits: 2 });
    await page.click('#zoom');
    expect(await page.locator('#chart').getAttribute('data-scale')).toBe('fit');
    await shot(page, 'coverage', '#chart-wrap');

    // Off: the chart is the run view again (no run yet); the summary goes.
    await page.uncheck('#coverage');
    await page.waitForSelector('#chart p.muted');
    expect(await page.locator('#chart').textContent()).toBe('Start a run to see its statechart.');
    expect(await page.locator('#coverage-summary').isHidden()).toBe(true);

    // The file rewritten (an exploration's coverage): switching on again shows it.
    const explored = await exploreAgent(new Agent({ name: 'Desk', model: new ScriptedModel([]), tools: [lookup] }), { maxCallsPerRun: 1 });
    writeFileSync(file, JSON.stringify(explored.coverage));
    await page.check('#coverage');
    const { runs, chart } = explored.coverage;
    await expect.poll(() => page.locator('#coverage-summary').textContent()).toBe(`coverage of ${runs} runs: ${chart.statesCovered} of 33 states visited, ${chart.transitionsCovered} of 85 transitions taken`);
    expect(await page.locator('#chart [data-state-id="run.cancelled"]').getAttribute('class')).toBe('state final visited');
    expect(errors).toEqual([]);
  });

  it('shows no switch when the server has no coverage, and the reason when the file is missing', async () => {
    const plain = await createServer({ agents: { calc: calcAgent }, inspectorDir: harness.pageDir });
    servers.push(plain);
    const page = await harness.browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const asked = page.waitForResponse((res) => res.url().endsWith('/api/coverage'));
    await page.goto(plain.inspectorUrl);
    const answer = await asked;
    expect([answer.status(), await answer.json()]).toEqual([200, { coverage: null, from: null }]);
    await page.waitForSelector('#conn[data-state="open"]');
    expect(await page.locator('#coverage-switch').isHidden()).toBe(true);
    // Asking logged no failed request (the other suites assert a page without console errors).
    expect(errors).toEqual([]);
    await page.close();

    const missing = join(dir, 'not-yet.json');
    const server = await createServer({ agents: { calc: calcAgent }, coverage: missing, inspectorDir: harness.pageDir });
    servers.push(server);
    const { page: second } = await openPage(harness.browser, server.inspectorUrl);
    await second.waitForSelector('#coverage-switch:not([hidden])');
    await second.check('#coverage');
    await expect.poll(() => second.locator('#coverage-summary').textContent()).toBe(
      `No coverage to show: No coverage file at ${missing} yet: write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).`,
    );
    expect(await second.locator('#coverage-summary').getAttribute('data-kind')).toBe('error');
  });
});
