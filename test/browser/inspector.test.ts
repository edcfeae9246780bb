import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, startDemoServer, type TroupeServer } from '../../src/server/index.js';
import { twinRefundsFactory } from '../server/agents.js';

/**
 * The inspector page in a real browser: Debian's Chromium driven by playwright-core (no
 * browser download). The page is built with Vite into a temporary directory first, then
 * served by the demo server. Screenshots go to $TROUPE_ARTIFACTS_DIR (default: the OS
 * temp dir); their paths are printed.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
if (!haveChromium) console.warn(`[browser tests skipped] no Chromium at ${CHROMIUM}; apt-get install -y chromium`);

const root = resolve(import.meta.dirname, '../..');
const artifacts = process.env.TROUPE_ARTIFACTS_DIR ?? join(tmpdir(), 'troupe-browser-artifacts');

describe.skipIf(!haveChromium)('inspector page (Chromium)', () => {
  let pageDir: string;
  let server: TroupeServer;
  let browser: Browser;

  beforeAll(async () => {
    pageDir = mkdtempSync(join(tmpdir(), 'troupe-inspector-'));
    execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(root, 'inspector/vite.config.mjs'), '--outDir', pageDir, '--emptyOutDir'], {
      cwd: root,
      stdio: 'pipe',
    });
    server = await startDemoServer({ inspectorDir: pageDir, out: () => undefined });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
    mkdirSync(artifacts, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (pageDir) rmSync(pageDir, { recursive: true, force: true });
  });

  async function openPage(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(url);
    return { page, errors };
  }

  async function shot(page: Page, name: string): Promise<string> {
    const path = join(artifacts, `troupe-inspector-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`screenshot: ${path}`);
    return path;
  }

  /**
   * x-extents of elements on screen, measured in one task: the timeline is redrawn while
   * calls run or approvals wait, so elements found by one query may be gone by the next.
   */
  async function spans(page: Page, selectors: string[]): Promise<Array<[number, number]>> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const found = await page.evaluate((list) => {
        const out: Array<[number, number]> = [];
        for (const selector of list) {
          const box = document.querySelector(selector)?.getBoundingClientRect();
          if (!box || box.width === 0) return undefined;
          out.push([box.left, box.right]);
        }
        return out;
      }, selectors);
      if (found) return found;
      await page.waitForTimeout(100);
    }
    throw new Error(`not all visible: ${selectors.join(', ')}`);
  }

  it('runs the demo: live statechart, actor tree, overlapping lanes, and Approve lets the gated call run', async () => {
    const { page, errors } = await openPage(server.inspectorUrl);
    // The token moved from the fragment into session storage; the URL no longer shows it.
    await page.waitForSelector('#conn[data-state="open"]');
    expect(page.url()).not.toContain('token=');
    await page.waitForSelector('#agent option[value="demo"]', { state: 'attached' });

    await page.click('#run-button');
    await page.waitForSelector('#approvals li.approval[data-call-id="call_book"]', { timeout: 15_000 });
    const runId = (await page.locator('#runs li.run').first().getAttribute('data-run'))!;
    expect(server.run(runId)?.status).toBe('running');
    // The card is the server's pending approval: keyed by approval id, naming the run that waits and who asked.
    const [pending] = server.run(runId)!.pendingApprovals();
    const card = page.locator('#approvals li.approval[data-call-id="call_book"]');
    expect(await card.getAttribute('data-approval-id')).toBe(pending!.approvalId);
    expect(await card.getAttribute('data-run-id')).toBe(pending!.runId);
    expect(await card.locator('.approval-run').textContent()).toBe(`run ${pending!.runId}`);
    expect(await card.locator('.approval-path').textContent()).toBe(`${pending!.path.join(' › ')} · call_book`);

    // (a) The statechart: nested states drawn from the definition, the active one highlighted.
    await page.waitForSelector('#chart svg.statechart [data-state-id="run.turn.executing.approvalWait"].active.leaf');
    for (const id of ['run', 'run.turn', 'run.turn.executing']) {
      await expect.poll(() => page.locator(`#chart [data-state-id="${id}"]`).getAttribute('class')).toContain('active');
    }
    expect(await page.locator('#chart [data-state-id="run.turn.model"]').getAttribute('class')).not.toContain('active');
    const leafStroke = await page.locator('#chart [data-state-id="run.turn.executing.approvalWait"] > rect').evaluate((el) => getComputedStyle(el).stroke);
    const idleStroke = await page.locator('#chart [data-state-id="run.idle"] > rect').evaluate((el) => getComputedStyle(el).stroke);
    expect(leafStroke).not.toBe(idleStroke);
    // Eventless transitions are drawn too (the definition is walked from machine.root).
    expect(await page.locator('#chart .transition.always').count()).toBeGreaterThan(10);
    expect(await page.locator('#chart-state').textContent()).toContain('turn.executing.approvalWait');

    // (b) The actor tree: run → executor → tool calls → sub-run → its tool calls.
    const rootItem = page.locator(`#tree li.actor.run[data-actor-id="${runId}"]`);
    await expect.poll(() => rootItem.getAttribute('data-status')).toBe('active');
    // Tool-call actors are named `<turn>.<index>` and show the model's call id; sub-runs are `<runId>/<turn>.<index>`.
    const research = rootItem.locator('li.actor.toolCall[data-call-id="call_research"]');
    expect(await research.getAttribute('data-status')).toBe('done');
    expect(await research.getAttribute('data-actor-id')).toBe('2.0');
    expect(await research.locator(':scope > .actor-label .actor-detail').textContent()).toBe('ask_research · call_research');
    const subRun = research.locator(`li.actor.run[data-actor-id="${runId}/2.0"]`);
    expect(await subRun.getAttribute('data-status')).toBe('done');
    expect(await subRun.locator('li.actor.toolCall').evaluateAll((els) => els.map((el) => [el.getAttribute('data-actor-id'), el.getAttribute('data-call-id')]))).toEqual([
      ['1.0', 'call_weather_paris'],
      ['1.1', 'call_weather_rome'],
      ['1.2', 'call_flights'],
    ]);
    expect(await rootItem.locator('li.actor.promise[data-actor-id="approval"]').getAttribute('data-status')).toBe('active');

    // (c) The timeline: the research agent's three parallel calls overlap on screen.
    const lanes = ['call_weather_paris', 'call_weather_rome', 'call_flights'].map((id) => `#timeline .lane[data-call-id="${id}"]`);
    for (const lane of lanes) expect(await page.locator(lane).getAttribute('data-overlap')).toBe('true');
    const bars = await spans(page, lanes.map((lane) => `${lane} .lane-bar`));
    for (let i = 0; i < bars.length; i++) {
      for (let j = i + 1; j < bars.length; j++) {
        const [a, b] = [bars[i]!, bars[j]!];
        expect(Math.max(a[0], b[0]), `lanes ${i} and ${j} overlap`).toBeLessThan(Math.min(a[1], b[1]));
      }
    }
    expect(await page.locator('#timeline .lane[data-call-id="call_research"]').getAttribute('data-overlap')).toBe('false');
    // A failed attempt (flights fails once, then is retried) is marked on its lane.
    expect(await page.locator(`${lanes[2]} .failure-tick`).count()).toBe(1);
    // Barriers: the handoff ran alone; the gated booking waits (hatched) for its approval.
    expect(await page.locator('#timeline .lane[data-call-id="call_handoff"]').getAttribute('class')).toContain('alone');
    expect(await page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('data-status')).toBe('waiting');
    const [wait] = await spans(page, ['#timeline .lane[data-call-id="call_book"] .approval-wait']);
    expect(wait![1] - wait![0]).toBeGreaterThan(3);
    expect(await page.locator('#timeline .barrier-band').count()).toBeGreaterThan(0);

    await shot(page, 'approval-pending');

    // (d) Approve in the page: the gated call runs and the run completes.
    await page.click('#approvals li.approval[data-call-id="call_book"] button.approve');
    await page.waitForSelector(`#runs li.run[data-run="${runId}"][data-status="completed"]`, { timeout: 15_000 });
    await page.waitForSelector('#approvals li.empty');
    await expect.poll(() => page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('data-status')).toBe('ok');
    expect(await page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('class')).toContain('alone');
    await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');
    expect(await page.locator('#chart [data-state-id="run.turn"]').getAttribute('class')).not.toContain('active');
    expect(await page.locator('#notice').textContent()).toContain('Approved book_hotel');

    const booked = server.run(runId)!.events.find((e) => e.type === 'tool_call_completed' && (e.call as { id: string }).id === 'call_book');
    expect(booked).toMatchObject({ isError: false, output: 'Booked 2 nights in Rome (confirmation HX-2041).' });
    expect(server.run(runId)!.status).toBe('completed');

    await shot(page, 'completed');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('asks for the token when the URL has none, and replays earlier runs', async () => {
    // A run that finished before this page was opened.
    const res = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: JSON.stringify({ agent: 'demo', input: 'trip' }) });
    const runId = res.headers.get('x-run-id')!;
    void res.text();
    await expect.poll(() => server.run(runId)?.pendingApprovals().length ?? 0).toBe(1);
    expect(server.run(runId)!.decide(server.run(runId)!.pendingApprovals()[0]!.approvalId, true)).toBe(true);
    await expect.poll(() => server.run(runId)?.status).toBe('completed');

    const page = await browser.newPage();
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.type());
      void dialog.accept(server.token);
    });
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#conn[data-state="open"]');
    expect(asked).toEqual(['prompt']);
    // History replayed to this late client: pick the finished run, its chart shows the final state.
    await page.click(`#runs li.run[data-run="${runId}"][data-status="completed"]`);
    await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');
    expect(await page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('data-status')).toBe('ok');
    await page.close();
  }, 30_000);

  it('two sub-runs waiting on the same call id get two cards; each button decides only its own', async () => {
    const refunded: number[] = [];
    const twins = await createServer({ agents: { twins: twinRefundsFactory(refunded) }, inspect: 'always', inspectorDir: pageDir });
    try {
      const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(twins.inspectorUrl);
      await page.waitForSelector('#conn[data-state="open"]');
      await page.waitForSelector('#agent option[value="twins"]', { state: 'attached' });
      await page.click('#run-button');
      await expect.poll(() => page.locator('#approvals li.approval[data-call-id="k1"]').count(), { timeout: 15_000 }).toBe(2);
      const runId = (await page.locator('#runs li.run').first().getAttribute('data-run'))!;
      const pending = twins.run(runId)!.pendingApprovals();
      expect(pending).toHaveLength(2);
      const small = pending.find((p) => (p.args as { cents: number }).cents === 100)!;
      const large = pending.find((p) => (p.args as { cents: number }).cents === 999_999)!;
      const cardOf = (approvalId: string) => page.locator(`#approvals li.approval[data-approval-id="${approvalId}"]`);
      for (const approval of [small, large]) {
        const card = cardOf(approval.approvalId);
        expect(await card.getAttribute('data-run-id')).toBe(approval.runId);
        expect(await card.locator('.approval-run').textContent()).toBe(`run ${approval.runId}`);
        expect(await card.locator('.approval-path').textContent()).toBe(`desk › ${approval.agent} · k1`);
      }
      // One lane per call, keyed by run and call id (tool-call actors are named `<turn>.<index>`, not after the call).
      const lanes = () => page.locator('#timeline .lane').evaluateAll((els) => els.map((el) => `${el.getAttribute('data-run-id')}|${el.getAttribute('data-call-id')}|${el.getAttribute('data-tool')}`).sort());
      await expect.poll(lanes).toEqual([`${runId}|l1|ask_large`, `${runId}|s1|ask_small`, `${large.runId}|k1|refund`, `${small.runId}|k1|refund`].sort());
      expect(await page.locator(`#timeline .lane[data-run-id="${small.runId}"][data-call-id="k1"]`).getAttribute('data-status')).toBe('waiting');
      await shot(page, 'two-approvals');

      await cardOf(small.approvalId).locator('button.approve').click();
      await expect.poll(() => refunded).toEqual([100]);
      await expect.poll(() => page.locator('#approvals li.approval').count()).toBe(1);
      expect(await page.locator('#approvals li.approval').getAttribute('data-approval-id')).toBe(large.approvalId);
      expect(twins.run(runId)!.pendingApprovals().map((p) => p.approvalId)).toEqual([large.approvalId]);

      await cardOf(large.approvalId).locator('button.deny').click();
      await page.waitForSelector(`#runs li.run[data-run="${runId}"][data-status="completed"]`, { timeout: 15_000 });
      await page.waitForSelector('#approvals li.empty');
      expect(refunded).toEqual([100]);
      await expect.poll(() => page.locator(`#timeline .lane[data-run-id="${small.runId}"][data-call-id="k1"]`).getAttribute('data-status')).toBe('ok');
      expect(await page.locator(`#timeline .lane[data-run-id="${large.runId}"][data-call-id="k1"]`).getAttribute('data-status')).toBe('rejected');
      expect(await page.locator('#notice').textContent()).toBe(`Denied refund (k1 in ${large.runId}).`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await twins.close();
    }
  }, 60_000);
});
