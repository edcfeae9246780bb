import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoAgent } from '../../src/cli/demo.js';
import { MemoryCheckpointStore } from '../../src/index.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { brokenAgent, calcAgent, gatedAgent } from '../server/agents.js';
import { detailsPayload, haveChromium, openPage, shot, startHarness, type Harness } from './harness.js';

async function startRun(server: TroupeServer, agent: string, input: string): Promise<{ runId: string; done: Promise<string> }> {
  const res = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: JSON.stringify({ agent, input }) });
  return { runId: res.headers.get('x-run-id')!, done: res.text() };
}

const agents = { calc: calcAgent, broken: brokenAgent, gated: gatedAgent, demo: () => demoAgent() };

describe.skipIf(!haveChromium)('inspector page (Chromium): runs, replay, errors, layout', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
  });

  it('after a restart: the list comes from the store (filter, search, keyboard), stored runs show transcript, error and a replay slider', async () => {
    const store = new MemoryCheckpointStore();
    const before = await createServer({ agents, checkpointStore: store, inspect: 'off' });
    const calc = await startRun(before, 'calc', 'add two pairs');
    await calc.done;
    const broken = await startRun(before, 'broken', 'this one fails');
    await broken.done;
    await before.close();

    const server = await createServer({ agents, checkpointStore: store, inspectorDir: harness.pageDir });
    try {
      const { page, errors } = await openPage(harness.browser, server.inspectorUrl);
      const listed = () => page.locator('#runs li.run').evaluateAll((els) => els.map((el) => `${el.getAttribute('data-source')}:${el.getAttribute('data-status')}:${el.getAttribute('data-run')}`));
      await expect.poll(listed).toEqual([`stored:failed:${broken.runId}`, `stored:completed:${calc.runId}`]);
      const row = page.locator(`#runs li.run[data-run="${calc.runId}"]`);
      const tokens = store.load(calc.runId)!.head.usage.totalTokens;
      expect(await row.locator('.run-meta').textContent()).toMatch(new RegExp(` · \\d+(\\.\\d+)? (ms|s) · ${tokens} tokens · stored$`));
      expect(await row.locator('.run-input').textContent()).toBe('add two pairs');

      // Search and filter (server-side for stored runs).
      await page.fill('#run-search', 'PAIRS');
      await expect.poll(listed).toEqual([`stored:completed:${calc.runId}`]);
      await page.fill('#run-search', '');
      await page.selectOption('#run-status', 'failed');
      await expect.poll(listed).toEqual([`stored:failed:${broken.runId}`]);
      await page.selectOption('#run-status', '');
      await expect.poll(listed).toHaveLength(2);
      await shot(page, 'runs', '#runs-panel');

      // Keyboard: arrows move the selection through the list.
      await page.locator('#runs li.run').first().focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#runs li.run[aria-selected="true"]').getAttribute('data-run')).toBe(broken.runId);
      // The failed run: the error class and message at the top.
      await expect.poll(() => page.locator('#error-banner .error-class').textContent()).toBe('ScriptExhausted');
      expect(await page.locator('#error-banner .error-message').textContent()).toBe('ScriptedModel has no reply for request 1: the script has 0 steps.');
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => page.locator('#runs li.run[aria-selected="true"]').getAttribute('data-run')).toBe(calc.runId);
      await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLElement).dataset.run)).toBe(calc.runId);

      // The stored run: output, transcript from the log, usage from its head, the chart from the log.
      await expect.poll(() => page.locator('#final-output .t-text').textContent()).toBe('done');
      expect(await page.locator('#run-state').textContent()).toBe('completed');
      expect(await page.locator('#transcript .replay-items li').evaluateAll((els) => els.map((el) => el.getAttribute('data-kind')))).toEqual(['input', 'reply', 'result', 'result', 'turn_end', 'reply', 'turn_end']);
      expect(await page.locator('#transcript .replay-items li[data-index="2"] .t-output').textContent()).toBe('3');
      expect(await page.locator('#usage-total > strong').textContent()).toBe(`${tokens} tokens`);
      await page.waitForSelector('#chart[data-source="replay"] [data-state-id="run.completed"].active.leaf');

      // Replay: step N shows N items and the chart state after them; no model is called.
      expect(await page.locator('#replay-panel').isVisible()).toBe(true);
      expect(await page.locator('#replay-step').getAttribute('max')).toBe('7');
      await page.fill('#replay-step', '3');
      await expect.poll(() => page.locator('#replay li').count()).toBe(3);
      expect(await page.locator('#replay-label').textContent()).toBe('step 3 of 7 · result · turn.executing');
      await page.waitForSelector('#chart[data-source="replay"] [data-state-id="run.turn.executing"].active.leaf');
      expect(await page.locator('#chart-state').textContent()).toBe('replay step 3: turn.executing');
      await page.fill('#replay-step', '4');
      await expect.poll(() => page.locator('#replay li').count()).toBe(4);
      await page.waitForSelector('#chart [data-state-id="run.turn.checkpoint"].active.leaf');
      await page.locator('#replay li[data-index="3"]').click();
      expect(await detailsPayload(page)).toEqual({ kind: 'result', index: 3, turn: 1, callId: 'c2', tool: 'add', content: '7', isError: false });
      await shot(page, 'replay', '#replay-panel');
      await page.click('#replay-live');
      await expect.poll(() => page.locator('#replay li').count()).toBe(7);
      await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');

      // A completed run cannot be resumed; the failed one offers Resume, which continues it on the server (POST /api/runs/:id/resume).
      expect(await page.locator('#resume-run').isDisabled()).toBe(true);
      await page.click(`#runs li.run[data-run="${broken.runId}"]`);
      await expect.poll(() => page.locator('#resume-run').isDisabled()).toBe(false);
      await page.click('#resume-run');
      await expect.poll(() => page.locator('#notice').textContent()).toBe(`Resuming ${broken.runId}.`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a run started while no page was open still shows chart state, actor tree and timeline (from its events); Cancel ends it', async () => {
    const server = await createServer({ agents, inspect: 'on-demand', inspectorDir: harness.pageDir, approvalTimeoutMs: 60_000 });
    try {
      const gated = await startRun(server, 'gated', 'refund A1');
      await expect.poll(() => server.run(gated.runId)?.pendingApprovals().length ?? 0).toBe(1);
      const { page, errors } = await openPage(harness.browser, server.inspectorUrl);
      await page.click(`#runs li.run[data-run="${gated.runId}"]`);
      await page.waitForSelector('#chart [data-state-id="run.turn.executing.approvalWait"].active.leaf');
      // Late attach found the run: inspection bootstraps it, so the chart is the inspected one; the tree shows its actors.
      expect(await page.locator('#chart-state').textContent()).toContain('turn.executing.approvalWait');
      expect(await page.locator(`#tree li.actor.run[data-actor-id="${gated.runId}"]`).count()).toBe(1);
      expect(await page.locator('#timeline .lane[data-call-id="r1"]').getAttribute('data-status')).toBe('waiting');
      expect(await page.locator('#transcript .t-tool[data-call-id="r1"] .t-args').textContent()).toBe('{"orderId":"A1","cents":6000}');
      // Cancel: the run ends cancelled, with the error at the top.
      await page.click('#cancel-run');
      await page.waitForSelector(`#runs li.run[data-run="${gated.runId}"][data-status="cancelled"]`, { timeout: 15_000 });
      await expect.poll(() => page.locator('#error-banner .error-class').textContent()).toBe('RunCancelled');
      expect(await page.locator('#error-banner .error-message').textContent()).toBe('Run cancelled: cancelled via API');
      expect(await page.locator('#error-banner .error-where').textContent()).toMatch(new RegExp(`^where: refunds \\(run ${gated.runId}\\), turn 1`));
      await shot(page, 'error', '#run-panel');
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  }, 60_000);

  it('inspection off: chart state and actor tree come from the run events', async () => {
    const server = await createServer({ agents, inspect: 'off', inspectorDir: harness.pageDir });
    try {
      const run = await startRun(server, 'calc', 'add');
      await run.done;
      const { page, errors } = await openPage(harness.browser, server.inspectorUrl);
      await page.click(`#runs li.run[data-run="${run.runId}"]`);
      await page.waitForSelector('#chart[data-source="events"] [data-state-id="run.completed"].active.leaf');
      expect(await page.locator('#chart-state').textContent()).toBe(`${run.runId}: completed (from events)`);
      expect(await page.locator('#tree .tree.derived li.actor.toolCall').evaluateAll((els) => els.map((el) => el.getAttribute('data-call-id')))).toEqual(['c1', 'c2']);
      expect(await page.locator('#timeline .lane').count()).toBe(2);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  }, 30_000);

  it('layout at 390, 800, 1400 and 2560 px: no horizontal overflow, approvals visible without scrolling at 800 px, tree labels not clipped', async () => {
    const server = await createServer({ agents, inspect: 'always', inspectorDir: harness.pageDir });
    try {
      const { page, errors } = await openPage(harness.browser, server.inspectorUrl, 800, 900);
      await page.waitForSelector('#agent option[value="demo"]', { state: 'attached' });
      await page.selectOption('#agent', 'demo');
      await page.click('#run-button');
      await page.waitForSelector('#approvals li.approval', { timeout: 15_000 });
      for (const [width, height] of [[390, 844], [800, 900], [1400, 900], [2560, 1300]] as const) {
        await page.setViewportSize({ width, height });
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.waitForTimeout(150);
        const layout = await page.evaluate(() => {
          const card = document.querySelector('#approvals li.approval')!.getBoundingClientRect();
          const tree = document.getElementById('tree')!;
          const treeBox = tree.getBoundingClientRect();
          const clipped = Array.from(tree.querySelectorAll('.actor-label')).filter((el) => el.getBoundingClientRect().right > treeBox.right + 1).length;
          return { overflow: document.documentElement.scrollWidth - window.innerWidth, cardBottom: card.bottom, clipped, treeWidth: treeBox.width };
        });
        expect(layout.overflow, `horizontal overflow at ${width}px`).toBeLessThanOrEqual(0);
        expect(layout.clipped, `clipped actor labels at ${width}px`).toBe(0);
        if (width <= 800) expect(layout.cardBottom, `approval card visible at ${width}px`).toBeLessThanOrEqual(height);
        if (width === 2560) expect(layout.treeWidth).toBeGreaterThan(400);
        await shot(page, `layout-${width}`);
      }
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.close();
    }
  }, 60_000);
});
