import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarizeUsage } from '../../src/inspect/usage.js';
import { createServer, startDemoServer, type TroupeServer } from '../../src/server/index.js';
import { twinRefundsFactory } from '../server/agents.js';
import { detailsPayload, haveChromium, openPage, shot, spans, startHarness, type Harness } from './harness.js';

describe.skipIf(!haveChromium)('inspector page (Chromium): the demo, live', () => {
  let harness: Harness;
  let server: TroupeServer;

  beforeAll(async () => {
    harness = await startHarness();
    server = await startDemoServer({ inspectorDir: harness.pageDir, out: () => undefined });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await harness?.close();
  });

  it('runs the demo: chart, topology, actor tree, lanes; Approve; then transcript, usage, details and timeline zoom', async () => {
    const { page, errors } = await openPage(harness.browser, server.inspectorUrl);
    // The token moved from the fragment into session storage; the URL no longer shows it.
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
    expect(await card.locator('.approval-run').textContent()).toBe(`run ${pending!.runId}`);
    expect(await card.locator('.approval-path').textContent()).toBe(`${pending!.path.join(' › ')} · call_book`);
    // The page counts down to the server's deadline (the terminal prints the same one).
    expect(await card.locator('.approval-wait').textContent()).toMatch(/^waiting .+ · auto-deny in (4:5\d|29\d\.\d) s$|^waiting .+ · auto-deny in \d+\.\d s$/);

    // The statechart: the active state highlighted, readable at the default zoom (1:1, text ≥ 11 px).
    await page.waitForSelector('#chart svg.statechart [data-state-id="run.turn.executing.approvalWait"].active.leaf');
    for (const id of ['run', 'run.turn', 'run.turn.executing']) {
      await expect.poll(() => page.locator(`#chart [data-state-id="${id}"]`).getAttribute('class')).toContain('active');
    }
    expect(await page.locator('#chart [data-state-id="run.turn.model"]').getAttribute('class')).not.toContain('active');
    expect(await page.locator('#chart .transition.always').count()).toBeGreaterThan(10);
    expect(await page.locator('#chart-state').textContent()).toContain('turn.executing.approvalWait');
    expect(await page.locator('#chart').getAttribute('data-scale')).toBe('1');
    const textPx = await page.evaluate(() => {
      const chart = document.querySelector<SVGSVGElement>('#chart svg.statechart')!;
      const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
      return ['.state-label', '.state-sub', '.edge-label'].map((s) => parseFloat(getComputedStyle(chart.querySelector(s)!).fontSize) * scale);
    });
    for (const px of textPx) expect(px).toBeGreaterThanOrEqual(11);
    // The active state is scrolled into the chart box.
    const inBox = () => page.evaluate(() => {
      const box = document.getElementById('chart')!.getBoundingClientRect();
      const leaf = document.querySelector('#chart .state.leaf')!.getBoundingClientRect();
      return leaf.left >= box.left && leaf.right <= box.right && leaf.top >= box.top && leaf.bottom <= box.bottom;
    });
    expect(await inBox()).toBe(true);
    await page.click('#chart-in');
    expect(await page.locator('#chart').getAttribute('data-scale')).toBe('1.25');
    await page.click('#zoom');
    expect(await page.locator('#chart').getAttribute('data-scale')).toBe('fit');
    await page.click('#zoom-active');
    expect(await page.locator('#chart').getAttribute('data-scale')).toBe('1');
    expect(await inBox()).toBe(true);
    // Collapse inactive regions: the stopping region becomes one box; the active path stays open.
    await page.check('#collapse');
    await expect.poll(() => page.locator('#chart [data-state-id="run.stopping.checkpoint"]').count()).toBe(0);
    expect(await page.locator('#chart [data-state-id="run.stopping"] .state-sub').last().textContent()).toMatch(/states inside \(collapsed\)$/);
    expect(await page.locator('#chart [data-state-id="run.turn.executing.approvalWait"]').getAttribute('class')).toContain('leaf');
    await page.uncheck('#collapse');

    // The topology: agents, their tools, handoff and agent-as-tool edges; the agent waiting is highlighted.
    for (const agent of ['Triage', 'Travel specialist', 'Research']) expect(await page.locator(`#topology .topo-node[data-agent="${agent}"] .topo-name`).textContent()).toBe(agent);
    expect(await page.locator('#topology .topo-node[data-agent="Research"] .topo-tool').allTextContents()).toEqual(['ƒ weather', 'ƒ flights']);
    expect(await page.locator('#topology .topo-edge').evaluateAll((els) => els.map((el) => `${el.getAttribute('data-from')}→${el.getAttribute('data-to')}:${el.getAttribute('data-kind')}`))).toEqual(['Triage→Travel specialist:handoff', 'Travel specialist→Research:tool']);
    await expect.poll(() => page.locator('#topology .topo-node.active').evaluateAll((els) => els.map((el) => el.getAttribute('data-agent')))).toEqual(['Travel specialist']);
    await shot(page, 'graph', '#graph-panel');

    // The actor tree: run → executor → tool calls → sub-run → its tool calls.
    const rootItem = page.locator(`#tree li.actor.run[data-actor-id="${runId}"]`);
    await expect.poll(() => rootItem.getAttribute('data-status')).toBe('active');
    const research = rootItem.locator('li.actor.toolCall[data-call-id="call_research"]');
    expect(await research.getAttribute('data-actor-id')).toBe('2.0');
    const subRun = research.locator(`li.actor.run[data-actor-id="${runId}/2.0"]`);
    expect(await subRun.locator('li.actor.toolCall').evaluateAll((els) => els.map((el) => el.getAttribute('data-call-id')))).toEqual(['call_weather_paris', 'call_weather_rome', 'call_flights']);

    // The timeline: the research agent's three parallel calls overlap; lanes are grouped by the agent that called.
    const lanes = ['call_weather_paris', 'call_weather_rome', 'call_flights'].map((id) => `#timeline .lane[data-call-id="${id}"]`);
    for (const lane of lanes) expect(await page.locator(lane).getAttribute('data-overlap')).toBe('true');
    const bars = await spans(page, lanes.map((lane) => `${lane} .lane-bar`));
    for (let i = 0; i < bars.length; i++) for (let j = i + 1; j < bars.length; j++) expect(Math.max(bars[i]![0], bars[j]![0])).toBeLessThan(Math.min(bars[i]![1], bars[j]![1]));
    expect(await page.locator(`${lanes[2]} .failure-tick`).count()).toBe(1);
    expect(await page.locator('#timeline .lane[data-call-id="call_handoff"]').getAttribute('class')).toContain('alone');
    expect(await page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('data-status')).toBe('waiting');
    expect(await page.locator('#timeline .barrier-band').count()).toBeGreaterThan(0);
    await shot(page, 'approval-pending');

    // Approve in the page: the gated call runs and the run completes.
    await page.click('#approvals li.approval[data-call-id="call_book"] button.approve');
    await page.waitForSelector(`#runs li.run[data-run="${runId}"][data-status="completed"]`, { timeout: 15_000 });
    await page.waitForSelector('#approvals li.empty');
    await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');
    expect(await page.locator('#notice').textContent()).toContain('Approved book_hotel');
    const run = server.run(runId)!;
    expect(run.status).toBe('completed');

    // Transcript: system prompt, input, handoff, tool args and results (raw and as the model saw them), the nested sub-run, the final output.
    const transcript = page.locator('#transcript');
    expect(await transcript.locator('.t-system').first().textContent()).toBe('system · TriageSend each request to the right specialist.');
    expect(await transcript.locator('.t-user').first().locator('.t-text').textContent()).toBe('Plan a weekend in Paris or Rome and book the hotel.');
    expect(await transcript.locator('.t-handoff .t-text').textContent()).toBe('⇄ Triage → Travel specialist');
    const flights = transcript.locator('.t-tool[data-call-id="call_flights"]');
    expect(await flights.locator('.t-args').textContent()).toBe('{"from":"Paris","to":"Rome"}');
    expect(await flights.locator('.t-output').textContent()).toBe('Paris→Rome 08:15 €89\nParis→Rome 17:40 €64');
    expect(JSON.parse((await flights.locator('.t-result').textContent())!)).toEqual(['Paris→Rome 08:15 €89', 'Paris→Rome 17:40 €64']);
    expect(await flights.locator('.t-failure code').textContent()).toBe('Error: flight search timed out upstream (retried)');
    expect(await transcript.locator('.t-tool[data-call-id="call_weather_paris"] .t-progress').textContent()).toBe('{"stage":"asking the weather service","city":"Paris"}');
    expect(await transcript.locator('.t-tool[data-call-id="call_research"] > .t-subrun > summary').textContent()).toBe(`sub-run ${runId}/2.0 · Research · completed`);
    expect(await transcript.locator('.t-tool[data-call-id="call_book"] .t-output').textContent()).toBe('Booked 2 nights in Rome (confirmation HX-2041).');
    expect(await transcript.locator(':scope > .transcript > .t-end.completed .t-output-final').textContent()).toBe(run.output);
    expect(await page.locator('#final-output .t-text').textContent()).toBe(run.output);
    await shot(page, 'transcript', '#transcript-panel');

    // The demo server checkpoints its runs, so the finished run can be replayed step by step.
    // 17 entries: the replies, results and turn ends, plus the handoff, the research sub-run's start and end, and the booking's approval request and decision.
    const detail = (await (await fetch(`${server.url}/api/runs/${runId}`, { headers: { authorization: `Bearer ${server.token}` } })).json()) as { log: { entries: Array<{ kind: string }> } };
    expect(detail.log.entries).toHaveLength(17);
    await expect.poll(() => page.locator('#replay-step').getAttribute('max')).toBe('17');
    await page.fill('#replay-step', '2');
    await expect.poll(() => page.locator('#replay li').evaluateAll((els) => els.map((el) => el.getAttribute('data-kind')))).toEqual(['input', 'reply']);
    expect(await page.locator('#replay-label').textContent()).toBe('step 2 of 17 · reply · turn.executing');
    await expect.poll(() => page.locator('#topology .topo-node.active').evaluateAll((els) => els.map((el) => el.getAttribute('data-agent')))).toEqual(['Triage']);
    await page.click('#replay-live');
    await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');

    // Usage: the tree's tokens (the root's final total), per turn and per agent.
    const usage = summarizeUsage(run.events);
    expect(usage.total.totalTokens).toBe(run.usage!.totalTokens);
    expect(await page.locator('#usage-total > strong').textContent()).toBe(`${run.usage!.totalTokens} tokens`);
    expect(await page.locator('#usage .usage-table tbody tr').count()).toBe(6);
    // Each reply shows its own tokens (the events carry the run's running total).
    const turn3 = usage.turns.find((t) => t.runId === runId && t.turn === 3)!;
    expect(await transcript.locator('.t-assistant[data-agent="Travel specialist"][data-turn="3"] .t-usage').textContent()).toBe(`${turn3.inputTokens} in · ${turn3.outputTokens} out · ${turn3.totalTokens} tokens`);
    expect(await page.locator('#usage .usage-agents li[data-agent="Research"]').textContent()).toBe(`Research ${usage.byAgent.get('Research')!.inputTokens} in · ${usage.byAgent.get('Research')!.outputTokens} out · ${usage.byAgent.get('Research')!.totalTokens} total (2 requests)`);

    // Details: a timeline bar (args, result, the failed attempt), an approval's decision, an event, a chart state, an actor.
    await page.click('#timeline .lane[data-call-id="call_flights"] .lane-label');
    const lane = await detailsPayload(page);
    expect(lane).toMatchObject({ callId: 'call_flights', tool: 'flights', agent: 'Research', arguments: '{"from":"Paris","to":"Rome"}', output: 'Paris→Rome 08:15 €89\nParis→Rome 17:40 €64', result: ['Paris→Rome 08:15 €89', 'Paris→Rome 17:40 €64'] });
    expect(lane.failedAttempts).toEqual([{ attempt: 1, error: { name: 'Error', message: 'flight search timed out upstream' }, willRetry: true }]);
    expect(lane.timing.durationMs).toBeGreaterThan(0);
    await page.click('#timeline .lane[data-call-id="call_book"] .lane-label');
    const book = await detailsPayload(page);
    expect(book.approvals.map((a: { state: string; decidedBy: string | null }) => `${a.state}:${a.decidedBy}`)).toEqual(['pending:null', 'approved:api']);
    expect(book.args).toEqual({ city: 'Rome', nights: 2 });
    await page.locator('#events li[data-type="run_completed"]').last().click();
    expect(await page.locator('#details').getAttribute('data-kind')).toBe('event');
    expect(await detailsPayload(page)).toMatchObject({ type: 'run_completed', runId, output: run.output, usage: run.usage });
    await page.click('#chart [data-state-id="run.completed"]');
    expect(await detailsPayload(page)).toMatchObject({ id: 'run.completed', type: 'final', active: true });
    await page.click(`#tree li.actor.run[data-actor-id="${runId}/2.0"] > .actor-label`);
    expect(await detailsPayload(page)).toMatchObject({ actorId: `${runId}/2.0`, logic: 'run', status: 'done' });
    await shot(page, 'details', '#details-panel');

    // Timeline: groups by calling agent (the handoff starts a new group); zoom and pan change the visible range; idle gaps compressed.
    expect(await page.locator('#timeline .lane-group').evaluateAll((els) => els.map((el) => el.querySelector('.group-label')!.textContent))).toEqual(['Triage  ·  max 1 in flight', 'Travel specialist  ·  max 1 in flight', 'Travel specialist › Research  ·  max 3 in flight']);
    const range = async () => page.locator('#timeline svg.timeline').evaluate((el) => [Number(el.getAttribute('data-view-start')), Number(el.getAttribute('data-view-end'))]);
    const [start0, end0] = await range();
    expect(start0).toBe(0);
    await page.click('#tl-in');
    await expect.poll(async () => { const [a, b] = await range(); return b! - a!; }).toBeLessThan((end0! - start0!) * 0.75);
    const [start1] = await range();
    expect(start1).toBeGreaterThan(0);
    await page.click('#tl-left');
    await expect.poll(async () => (await range())[0]).toBeLessThan(start1!);
    await page.click('#tl-reset');
    await expect.poll(range).toEqual([start0, end0]);
    expect(await page.locator('#timeline svg.timeline').getAttribute('data-compressed')).toBe('true');
    const [parallel] = await spans(page, [`${lanes[2]} .lane-bar`]);
    const compressedWidth = parallel![1] - parallel![0];
    await shot(page, 'timeline', '#timeline-panel');
    await page.uncheck('#compress');
    await expect.poll(() => page.locator('#timeline svg.timeline').getAttribute('data-compressed')).toBe('false');
    const [linear] = await spans(page, [`${lanes[2]} .lane-bar`]);
    expect(compressedWidth).toBeGreaterThan((linear![1] - linear![0]) * 2);
    await page.check('#compress');

    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('asks for the token when the URL has none, and replays earlier runs', async () => {
    const res = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: JSON.stringify({ agent: 'demo', input: 'trip' }) });
    const runId = res.headers.get('x-run-id')!;
    void res.text();
    await expect.poll(() => server.run(runId)?.pendingApprovals().length ?? 0).toBe(1);
    expect(server.run(runId)!.decide(server.run(runId)!.pendingApprovals()[0]!.approvalId, false, 'not now')).toBe(true);
    await expect.poll(() => server.run(runId)?.status).toBe('completed');

    const page = await harness.browser.newPage();
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.type());
      void dialog.accept(server.token);
    });
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#conn[data-state="open"]');
    expect(asked).toEqual(['prompt']);
    await page.click(`#runs li.run[data-run="${runId}"][data-status="completed"]`);
    await page.waitForSelector('#chart [data-state-id="run.completed"].active.leaf');
    expect(await page.locator('#timeline .lane[data-call-id="call_book"]').getAttribute('data-status')).toBe('rejected');
    // Denied: the agent says the booking was not made.
    expect(await page.locator('#final-output .t-text').textContent()).toBe('Rome is 24 °C and clear and the 17:40 flight costs €64, but the hotel was not booked: the booking was denied (not now).');
    await page.close();
  }, 30_000);

  it('two sub-runs waiting on the same call id get two cards; each button decides only its own', async () => {
    const refunded: number[] = [];
    const twins = await createServer({ agents: { twins: twinRefundsFactory(refunded) }, inspect: 'always', inspectorDir: harness.pageDir });
    try {
      const { page, errors } = await openPage(harness.browser, twins.inspectorUrl);
      await page.waitForSelector('#agent option[value="twins"]', { state: 'attached' });
      await page.click('#run-button');
      await expect.poll(() => page.locator('#approvals li.approval[data-call-id="k1"]').count(), { timeout: 15_000 }).toBe(2);
      const runId = (await page.locator('#runs li.run').first().getAttribute('data-run'))!;
      const pending = twins.run(runId)!.pendingApprovals();
      const small = pending.find((p) => (p.args as { cents: number }).cents === 100)!;
      const large = pending.find((p) => (p.args as { cents: number }).cents === 999_999)!;
      const cardOf = (approvalId: string) => page.locator(`#approvals li.approval[data-approval-id="${approvalId}"]`);
      for (const approval of [small, large]) {
        const card = cardOf(approval.approvalId);
        expect(await card.locator('.approval-run').textContent()).toBe(`run ${approval.runId}`);
        expect(await card.locator('.approval-path').textContent()).toBe(`desk › ${approval.agent} · k1`);
        // The card names the root run and its agent too (sub-run ids alone do not say which request it is).
        expect(await card.locator('.approval-root').textContent()).toBe(`sub-run (in ${runId}, twins)`);
      }
      const lanes = () => page.locator('#timeline .lane').evaluateAll((els) => els.map((el) => `${el.getAttribute('data-run-id')}|${el.getAttribute('data-call-id')}|${el.getAttribute('data-tool')}`).sort());
      await expect.poll(lanes).toEqual([`${runId}|l1|ask_large`, `${runId}|s1|ask_small`, `${large.runId}|k1|refund`, `${small.runId}|k1|refund`].sort());
      await shot(page, 'two-approvals');

      await cardOf(small.approvalId).locator('button.approve').click();
      await expect.poll(() => refunded).toEqual([100]);
      await expect.poll(() => page.locator('#approvals li.approval').count()).toBe(1);
      await cardOf(large.approvalId).locator('button.deny').click();
      await page.waitForSelector(`#runs li.run[data-run="${runId}"][data-status="completed"]`, { timeout: 15_000 });
      expect(refunded).toEqual([100]);
      await expect.poll(() => page.locator(`#timeline .lane[data-run-id="${large.runId}"][data-call-id="k1"]`).getAttribute('data-status')).toBe('rejected');
      expect(await page.locator('#notice').textContent()).toBe(`Denied refund (k1 in ${large.runId}).`);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await twins.close();
    }
  }, 60_000);
});
