import './style.css';
import { replayAt } from '../../src/inspect/replay.js';
import { summarizeUsage } from '../../src/inspect/usage.js';
import type { AgentGraph, WireRecord, WireRunEvent } from '../../src/inspect/wire.js';
import { Api, ApiError, type RunDetail, type RunRow } from './api.js';
import { approvalCards } from './approval-cards.js';
import { ChartPanel } from './chart-panel.js';
import { activeAgentsOf, chartSource, pickMachine } from './chart-source.js';
import { coverageSwitch } from './coverage-switch.js';
import { byId, h } from './dom.js';
import { listKeys, mergeRuns, renderRunList } from './runs-list.js';
import { failurePlace, renderRunHead, renderUsage, type RunFacts } from './run-summary.js';
import { Store, type Lane } from './store.js';
import { renderTimeline, type TimelineView } from './timeline.js';
import { renderTopology } from './topology-view.js';
import { renderReplayItems, renderTranscript } from './transcript-view.js';
import { renderTree } from './tree.js';
import { askToken, readToken, TOKEN_KEY } from './token.js';
import { timelineControls } from './timeline-controls.js';
import { renderEvents } from './events-list.js';
import { approvalsOf as approvalsOfStore, openLane as openLaneOf } from './lane-details.js';

const store = new Store();
const api = new Api(readToken());
const chart = new ChartPanel(byId('chart'), () => store.runDefinition());
const timelineView: TimelineView = { window: undefined, compress: true, total: 0 };

const ui = {
  conn: byId('conn'),
  notice: byId('notice'),
  form: byId<HTMLFormElement>('run-form'),
  agent: byId<HTMLSelectElement>('agent'),
  input: byId<HTMLInputElement>('input'),
  runs: byId('runs'),
  runStatus: byId<HTMLSelectElement>('run-status'),
  runSearch: byId<HTMLInputElement>('run-search'),
  tree: byId('tree'),
  runHead: byId('run-head'),
  usage: byId('usage'),
  transcript: byId('transcript'),
  topology: byId('topology'),
  activeAgent: byId('active-agent'),
  machine: byId<HTMLSelectElement>('machine'),
  timeline: byId('timeline'),
  replayPanel: byId('replay-panel'),
  replayStep: byId<HTMLInputElement>('replay-step'),
  replayLabel: byId('replay-label'),
  replay: byId('replay'),
  approvals: byId('approvals'),
  events: byId('events'),
};

/** The root run shown; follows the newest run until the user picks one. */
let selectedRun: string | undefined;
let followLatest = true;
/** The run (root or sub-run id) whose chart is shown; undefined = the root run. */
let selectedMachine: string | undefined;
let rows: RunRow[] = [];
let agentNames: string[] = [];
const details = new Map<string, RunDetail | 'loading'>();
const graphs = new Map<string, AgentGraph | 'loading'>();
/** Replay step per run (absent = the end of the log). */
const replaySteps = new Map<string, number>();
let frame = 0;
/** Transcript items drawn per run level (the newest); "show earlier" raises it. */
let transcriptLimit = 120;
/** Rows of the run list drawn (the newest); "show all" raises it. */
let runsLimit = 50;
/** Whether the transcript was scrolled to its end before this batch (then it follows new items). */
let stickTranscript = true;
let animate: ReturnType<typeof setTimeout> | undefined;
const drawn = { transcript: '', events: '', topology: '', usage: '', replay: '', list: '', tree: '', timeline: '', timelineLive: false };
/** Tokens per run for the list, recomputed only when the run's events grew. */
const tokenCache = new Map<string, { events: number; tokens: number | undefined }>();
function tokensOf(id: string): number | undefined {
  const info = store.runs.get(id);
  if (!info || info.events.length === 0) return undefined;
  const cached = tokenCache.get(id);
  if (cached && cached.events === info.events.length) return cached.tokens;
  const tokens = summarizeUsage(info.events.map((e) => e.event)).total.totalTokens;
  tokenCache.set(id, { events: info.events.length, tokens });
  return tokens;
}

function notice(text: string, kind: 'info' | 'error' = 'info'): void {
  ui.notice.textContent = text;
  ui.notice.dataset.kind = kind;
}

function schedule(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

function select(runId: string): void {
  if (selectedRun !== runId) {
    selectedRun = runId;
    selectedMachine = undefined;
    timelineView.window = undefined;
  }
  followLatest = false;
  void loadDetail(runId);
  schedule();
}

function onRecord(record: WireRecord): void {
  store.apply(record);
  if (record.kind === 'run' && followLatest && record.status === 'running' && record.run !== selectedRun) {
    selectedRun = record.run;
    selectedMachine = undefined;
    timelineView.window = undefined;
  }
  if (record.kind === 'run' && record.status !== 'running') {
    // Finished: its stored log (for replay) and the list's tokens are final now.
    details.delete(record.run);
    if (record.run === selectedRun) void loadDetail(record.run);
    refreshRows();
  }
  if (record.kind === 'sync') {
    if (!selectedRun) selectedRun = [...store.runs.keys()].at(-1);
    refreshRows();
  }
  schedule();
}

let rowsTimer: ReturnType<typeof setTimeout> | undefined;
function refreshRows(): void {
  clearTimeout(rowsTimer);
  rowsTimer = setTimeout(() => {
    api
      .runs(ui.runStatus.value, ui.runSearch.value.trim())
      .then((result) => {
        rows = result.runs;
        if (!selectedRun && rows[0]) select(rows[0].runId);
        schedule();
      })
      .catch((error: unknown) => notice(`Could not list runs: ${(error as Error).message}`, 'error'));
  }, 150);
}

async function loadDetail(runId: string): Promise<void> {
  if (details.has(runId)) return;
  details.set(runId, 'loading');
  try {
    details.set(runId, await api.run(runId));
  } catch (error) {
    details.delete(runId);
    if (!(error instanceof ApiError && error.status === 404)) notice(`Could not load ${runId}: ${(error as Error).message}`, 'error');
  }
  schedule();
}

function loadedDetail(runId: string | undefined): RunDetail | undefined {
  const d = runId ? details.get(runId) : undefined;
  return d && d !== 'loading' ? d : undefined;
}

function graphFor(agent: string): AgentGraph | undefined {
  const direct = graphs.get(agent);
  if (direct && direct !== 'loading') return direct;
  if (!direct && agentNames.includes(agent)) {
    graphs.set(agent, 'loading');
    api.graph(agent).then((r) => graphs.set(agent, r.graph), () => graphs.delete(agent)).finally(schedule);
  }
  // A stored run names the agent that ran (e.g. after a handoff): find the registered graph that has it.
  for (const g of graphs.values()) if (g !== 'loading' && g.agents.some((a) => a.name === agent)) return g;
  return undefined;
}

function render(): void {
  // One measure per update batch (devtools' timeline and bench/inspector-page.ts read it).
  const started = performance.now();
  try {
    draw();
  } finally {
    performance.measure('troupe.render', { start: started, end: performance.now() });
    if (++measures % 1_000 === 0) performance.clearMeasures('troupe.render');
  }
}
let measures = 0;

function draw(): void {
  const now = performance.timeOrigin + performance.now();
  // Layout reads first, before this batch changes the DOM (reading after would force a layout).
  const viewport = { top: ui.timeline.scrollTop, height: ui.timeline.clientHeight || window.innerHeight, width: ui.timeline.clientWidth };
  stickTranscript = ui.transcript.scrollTop + ui.transcript.clientHeight >= ui.transcript.scrollHeight - 8;
  const run = selectedRun ? store.runs.get(selectedRun) : undefined;
  const detail = loadedDetail(selectedRun);
  const listed = mergeRuns(rows, store.runs.values(), ui.runStatus.value, ui.runSearch.value.trim(), tokensOf, now);
  // Durations of running runs tick once a second; otherwise the list redraws only when a row changes.
  const listKey = `${selectedRun}|${runsLimit}|${listed.map((r) => `${r.runId}:${r.status}:${r.tokens}:${r.status === 'running' ? Math.floor((r.durationMs ?? 0) / 1000) : r.durationMs}`).join(',')}`;
  if (drawn.list !== listKey) {
    drawn.list = listKey;
    renderRunList(ui.runs, listed, selectedRun, (id) => select(id), runsLimit);
  }
  const runVersion = selectedRun ? (store.runVersions.get(selectedRun) ?? 0) : 0;
  const treeKey = `${selectedRun}:${runVersion}:${currentSession()}`;
  if (drawn.tree !== treeKey) {
    drawn.tree = treeKey;
    const t0 = performance.now();
    renderTree(ui.tree, store, selectedRun, currentSession(), (sessionId) => {
      selectedMachine = store.actors.get(sessionId)?.runId;
      schedule();
    });
    performance.measure('troupe.render.tree', { start: t0, end: performance.now() });
  }
  const t1 = performance.now();
  renderRun(now, run, detail);
  performance.measure('troupe.render.run', { start: t1, end: performance.now() });
  // The timeline redraws when its run changed, the view changed, or bars are growing (running calls, waiting approvals).
  const timelineKey = `${selectedRun}:${runVersion}:${timelineView.compress}:${timelineView.window?.u0}:${timelineView.window?.u1}:${viewport.width}:${Math.floor(viewport.top / 200)}:${viewport.height}`;
  let running = false;
  if (selectedRun && run && (drawn.timeline !== timelineKey || drawn.timelineLive)) {
    drawn.timeline = timelineKey;
    const t0 = performance.now();
    running = renderTimeline(ui.timeline, store, selectedRun, now, timelineView, openLane, viewport);
    performance.measure('troupe.render.timeline', { start: t0, end: performance.now() });
    drawn.timelineLive = running || [...store.approvals.values()].some((a) => a.run === selectedRun);
  }
  if (selectedRun && !run) ui.timeline.replaceChildren(h('p', { class: 'muted' }, 'No timing is stored for this run: the timeline covers runs this server ran while it was up.'));
  approvalCards(ui.approvals, store, api, now, notice, (runId) => store.runs.get(runId)?.agent);
  drawn.events = renderEvents(ui.events, run, drawn.events);
  if (animate) clearTimeout(animate);
  animate = running || drawn.timelineLive || store.approvals.size > 0 || run?.status === 'running' ? setTimeout(schedule, 250) : undefined;
}

function currentSession(): string | undefined {
  if (!selectedRun) return undefined;
  const actors = store.runActors(selectedRun);
  return (actors.find((a) => a.runId === selectedMachine) ?? actors[0])?.sessionId;
}

function renderRun(now: number, run: ReturnType<typeof store.runs.get>, detail: RunDetail | undefined): void {
  if (!selectedRun || (!run && !detail)) {
    void chart.show(undefined, 'Start a run to see its statechart.');
    return;
  }
  const events = run ? run.events.map((e) => e.event) : detail!.eventLog;
  const root = run?.transcript.root;
  const entries = detail?.log?.entries ?? [];
  const facts: RunFacts = run
    ? { runId: run.run, agent: run.agent, status: run.status, source: 'live', startedAt: run.startedAt, endedAt: run.endedAt, output: run.output, error: run.error, where: run.error ? failurePlace(events) : undefined }
    : { runId: detail!.runId, agent: detail!.agent, status: detail!.status, source: detail!.source, startedAt: detail!.startedAt ?? Date.now(), endedAt: detail!.endedAt, output: detail!.output, error: detail!.error, where: detail!.error ? `${detail!.agent}, turn ${detail!.turns ?? '?'} (from the stored head)` : undefined };
  renderRunHead(ui.runHead, facts, now, { cancel: () => cancelRun(facts.runId), resume: () => resumeRun(facts.runId) });

  const usage = summarizeUsage(events);
  const usageKey = `${selectedRun}:${events.length}:${facts.status}:${detail ? 1 : 0}`;
  if (drawn.usage !== usageKey) {
    drawn.usage = usageKey;
    const elapsed = (facts.endedAt ?? now) - facts.startedAt;
    if (events.length > 0) renderUsage(ui.usage, usage, detail?.budget, elapsed, detail?.usage);
    else if (detail?.usage) ui.usage.replaceChildren(h('div', { class: 'usage-total', id: 'usage-total' }, h('strong', {}, `${detail.usage.totalTokens} tokens`), ` (${detail.usage.inputTokens} in, ${detail.usage.outputTokens} out) in ${detail.usage.requests} model requests (stored head)`));
    else ui.usage.replaceChildren();
  }

  // Replay over the stored log.
  const total = entries.length;
  const step = Math.min(replaySteps.get(selectedRun) ?? total, total);
  const replaying = total > 0 && step < total;
  const replay = total > 0 ? replayAt(entries, step, detail!.log!.head.status) : undefined;
  ui.replayPanel.hidden = total === 0;
  if (total > 0) {
    ui.replayStep.max = String(total);
    if (document.activeElement !== ui.replayStep) ui.replayStep.value = String(step);
    const last = replay!.items.at(-1);
    ui.replayLabel.textContent = `step ${step} of ${total}${last ? ` · ${last.kind === 'other' ? last.entryKind : last.kind}` : ''} · ${replay!.active.at(-1)?.replace(/^run\./, '')}${detail!.log!.unknownEntries ? ` · ${detail!.log!.unknownEntries} entries of kinds this page does not know` : ''}`;
    const replayKey = `${selectedRun}:${step}:${total}`;
    if (drawn.replay !== replayKey) {
      drawn.replay = replayKey;
      ui.replay.replaceChildren(renderReplayItems(replay!.items));
      ui.replay.dataset.step = String(step);
    }
  }

  // Transcript: live events, else the stored log.
  const graph = graphFor(facts.source === 'live' && run ? run.agent : facts.agent);
  const system = (agent: string): string | undefined => graph?.agents.find((a) => a.name === agent)?.instructions;
  const transcriptKey = `${selectedRun}:${events.length}:${facts.status}:${total}:${graph ? 1 : 0}`;
  if (drawn.transcript !== transcriptKey) {
    drawn.transcript = transcriptKey;
    const t0 = performance.now();
    if (root) ui.transcript.replaceChildren(renderTranscript(root, system, { call: (call) => ({ approvals: approvalsOf(call.runId, call.callId) }), usage: (runId, turn) => usage.turns.find((t) => t.runId === runId && t.turn === turn) }, transcriptLimit));
    else if (total > 0) ui.transcript.replaceChildren(h('p', { class: 'muted note' }, 'From the stored log (this server did not run it since it started).'), renderReplayItems(replayAt(entries, total, detail!.log!.head.status).items));
    else ui.transcript.replaceChildren(h('p', { class: 'muted' }, 'Nothing in this run yet.'));
    if (stickTranscript) ui.transcript.scrollTop = ui.transcript.scrollHeight;
    performance.measure('troupe.render.transcript', { start: t0, end: performance.now() });
  }

  // Agents: the topology with the active agent highlighted.
  const activeAgents = activeAgentsOf(run?.transcript, replaying || !run ? replay?.agent : undefined);
  ui.activeAgent.textContent = activeAgents.size ? `active: ${[...activeAgents].join(', ')}` : '';
  const topoKey = `${graph ? JSON.stringify(graph.edges.length) : 'none'}:${[...activeAgents].join('|')}:${selectedRun}`;
  if (drawn.topology !== topoKey) {
    drawn.topology = topoKey;
    ui.topology.replaceChildren(graph ? renderTopology(graph, activeAgents) : h('p', { class: 'muted' }, 'No agent graph for this run (its agent is not registered here).'));
  }

  const target = pickMachine(ui.machine, run ? [...run.transcript.runs.keys()] : [selectedRun], selectedMachine, selectedRun);
  void chart.show(chartSource(store, selectedRun, target, events, replay, replaying), 'No statechart for this run.');
}


const approvalsOf = (runId: string, callId: string): unknown[] => approvalsOfStore(store, runId, callId);
const openLane = (lane: Lane): void => openLaneOf(store, selectedRun, lane);

function cancelRun(runId: string): void {
  api.cancel(runId).then(() => notice(`Cancelling ${runId}.`), (error: unknown) => notice(error instanceof ApiError ? error.message : String(error), 'error'));
}

function resumeRun(runId: string): void {
  api.resume(runId).then(
    () => notice(`Resuming ${runId}.`),
    (error: unknown) => notice(error instanceof ApiError ? (error.status === 404 ? `Resume is not available: ${error.message}` : error.message) : String(error), 'error'),
  );
}

// ── wiring ──────────────────────────────────────────────────────────────

listKeys(ui.runs, (id) => select(id));
ui.runs.addEventListener('runs-more', () => {
  runsLimit = Infinity;
  schedule();
});
ui.transcript.addEventListener('transcript-more', () => {
  transcriptLimit = Infinity;
  drawn.transcript = '';
  schedule();
});
ui.runStatus.addEventListener('change', refreshRows);
ui.runSearch.addEventListener('input', refreshRows);
ui.machine.addEventListener('change', () => {
  selectedMachine = ui.machine.value;
  schedule();
});
ui.replayStep.addEventListener('input', () => {
  if (!selectedRun) return;
  replaySteps.set(selectedRun, Number(ui.replayStep.value));
  schedule();
});
byId('replay-live').addEventListener('click', () => {
  if (selectedRun) replaySteps.delete(selectedRun);
  schedule();
});

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  const agent = ui.agent.value;
  if (!agent) return notice('No agent registered on this server.', 'error');
  const button = byId<HTMLButtonElement>('run-button');
  button.disabled = true;
  followLatest = true;
  api
    .startRun(agent, ui.input.value)
    .then((runId) => notice(`Started ${runId}.`))
    .catch((error: unknown) => notice(error instanceof ApiError ? error.message : String(error), 'error'))
    .finally(() => {
      button.disabled = false;
    });
});

let stop: (() => void) | undefined;

function connect(): void {
  stop?.();
  stop = api.follow(
    onRecord,
    (state, detail) => {
      ui.conn.dataset.state = state;
      ui.conn.textContent = state === 'open' ? 'live' : state === 'unauthorized' ? 'bad token' : 'reconnecting…';
      if (state === 'unauthorized') {
        sessionStorage.removeItem(TOKEN_KEY);
        notice('The server refused the token.', 'error');
        const token = askToken();
        if (token) {
          api.setToken(token);
          setTimeout(connect, 0);
          void loadAgents();
          void coverageSwitch(api, chart, schedule);
        }
      } else if (detail) {
        notice(`Feed: ${detail}`, 'error');
      }
    },
    () => store.lastSeq,
  );
}

async function loadAgents(): Promise<void> {
  try {
    const { agents } = await api.agents();
    agentNames = agents;
    ui.agent.replaceChildren(...agents.map((name) => h('option', { value: name }, name)));
    // The demo's prompt only where the demo's agent is served (troupe start / serve without --agents).
    if (agents[0] === 'demo' && ui.input.value === '') ui.input.value = 'Plan a weekend in Paris or Rome and book the hotel.';
    for (const name of agents) graphFor(name);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) notice(`Could not list agents: ${(error as Error).message}`, 'error');
  }
}

timelineControls(ui.timeline, timelineView, schedule);
window.addEventListener('resize', schedule);
ui.timeline.addEventListener('scroll', schedule, { passive: true });
connect();
void loadAgents();
void coverageSwitch(api, chart, schedule);
