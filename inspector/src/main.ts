import './style.css';
import { Api, ApiError } from './api.js';
import { byId, h, ms, short } from './dom.js';
import { chartFor, highlight } from './statechart.js';
import { Store, type ActorInfo } from './store.js';
import { renderTimeline } from './timeline.js';
import { renderTree } from './tree.js';

const TOKEN_KEY = 'troupe.inspector.token';

/** The token comes from the URL fragment (`#token=…`, never sent to the server), else storage, else a prompt. */
function readToken(): string {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    const token = decodeURIComponent(match[1]!);
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + location.search);
    return token;
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? askToken();
}

function askToken(): string {
  const token = (window.prompt('troupe server token (printed when the server started):') ?? '').trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  return token;
}

const store = new Store();
const api = new Api(readToken());

const ui = {
  conn: byId('conn'),
  notice: byId('notice'),
  form: byId<HTMLFormElement>('run-form'),
  agent: byId<HTMLSelectElement>('agent'),
  input: byId<HTMLInputElement>('input'),
  runs: byId('runs'),
  tree: byId('tree'),
  chart: byId('chart'),
  chartState: byId('chart-state'),
  machine: byId<HTMLSelectElement>('machine'),
  zoom: byId<HTMLButtonElement>('zoom'),
  timeline: byId('timeline'),
  approvals: byId('approvals'),
  events: byId('events'),
};

/** The root run shown; follows the newest run until the user picks one. */
let selectedRun: string | undefined;
let followLatest = true;
/** The run machine actor whose chart is shown (session id); undefined = the root run's. */
let selectedMachine: string | undefined;
let shownDefinition: string | undefined;
let chartEl: SVGSVGElement | undefined;
let frame = 0;
/** Fit the chart to the panel width (overview) or show it at actual size, scrolled to the active state. */
let fit = true;
let lastLeaf = '';
let animate: ReturnType<typeof setTimeout> | undefined;

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

function onRecord(record: Parameters<Store['apply']>[0]): void {
  store.apply(record);
  if (record.kind === 'run' && followLatest && record.status === 'running' && record.run !== selectedRun) {
    selectedRun = record.run;
    selectedMachine = undefined;
  }
  if (record.kind === 'sync' && !selectedRun) selectedRun = [...store.runs.keys()].at(-1);
  schedule();
}

function render(): void {
  const now = performance.timeOrigin + performance.now();
  renderRuns();
  renderTree(ui.tree, store, selectedRun, currentMachine()?.sessionId, (sessionId) => {
    selectedMachine = sessionId;
    schedule();
  });
  void renderChart();
  const running = renderTimeline(ui.timeline, store, selectedRun, now);
  renderApprovals(now);
  renderEvents();
  if (animate) clearTimeout(animate);
  animate = running || store.approvals.size > 0 ? setTimeout(schedule, 200) : undefined;
}

function renderRuns(): void {
  const runs = [...store.runs.values()].reverse();
  ui.runs.replaceChildren(
    ...runs.map((run) => {
      const li = h(
        'li',
        { class: `run ${run.status}${run.run === selectedRun ? ' selected' : ''}`, 'data-run': run.run, 'data-status': run.status, role: 'button', tabindex: 0 },
        h('span', { class: `status ${run.status}` }, run.status),
        h('span', { class: 'run-agent' }, run.agent),
        h('span', { class: 'run-id' }, run.run),
        h('span', { class: 'run-input', title: run.input }, short(run.input, 60)),
      );
      li.addEventListener('click', () => {
        selectedRun = run.run;
        selectedMachine = undefined;
        followLatest = run.run === [...store.runs.keys()].at(-1);
        schedule();
      });
      return li;
    }),
  );
  if (runs.length === 0) ui.runs.replaceChildren(h('li', { class: 'muted empty' }, 'No runs yet.'));
}

function currentMachine(): ActorInfo | undefined {
  if (!selectedRun) return undefined;
  const machines = store.runActors(selectedRun);
  return machines.find((a) => a.sessionId === selectedMachine) ?? machines[0];
}

async function renderChart(): Promise<void> {
  const machines = selectedRun ? store.runActors(selectedRun) : [];
  const current = currentMachine();
  // The run-actor picker
  const options = machines.map((a) => `${a.sessionId}|${a.runId ?? a.actorId}`).join(',');
  if (ui.machine.dataset.options !== options) {
    ui.machine.dataset.options = options;
    ui.machine.replaceChildren(...machines.map((a) => h('option', { value: a.sessionId }, a.runId ?? a.actorId)));
  }
  if (current) ui.machine.value = current.sessionId;
  if (!current || !current.definitionId) {
    chartEl = undefined;
    shownDefinition = undefined;
    ui.chartState.textContent = '';
    const run = selectedRun ? store.runs.get(selectedRun) : undefined;
    const text = run ? `Inspection was not attached while ${run.run} ran; start a run with the inspector open.` : 'Start a run to see its statechart.';
    if (ui.chart.textContent !== text) ui.chart.replaceChildren(h('p', { class: 'muted' }, text));
    return;
  }
  const definition = store.definitions.get(current.definitionId);
  if (!definition) return;
  if (shownDefinition !== definition.definitionId) {
    shownDefinition = definition.definitionId;
    ui.chart.replaceChildren(h('p', { class: 'muted' }, 'Laying out the statechart…'));
    try {
      chartEl = await chartFor(definition);
    } catch (error) {
      ui.chart.replaceChildren(h('p', { class: 'muted' }, `Layout failed: ${(error as Error).message}`));
      return;
    }
    if (shownDefinition !== definition.definitionId) return;
    ui.chart.replaceChildren(chartEl);
  }
  if (!chartEl) return;
  const finished = current.status !== 'active';
  highlight(chartEl, current.active, current.lastTransitions, finished);
  chartEl.classList.toggle('fit', fit);
  const leafId = current.active.at(-1) ?? '';
  if (!fit && leafId !== lastLeaf) chartEl.querySelector(`[data-state-id="${CSS.escape(leafId)}"]`)?.scrollIntoView({ block: 'center', inline: 'center' });
  lastLeaf = leafId;
  ui.chart.dataset.active = current.active.join(' ');
  ui.chart.dataset.runId = current.runId ?? '';
  const leaf = current.active.at(-1) ?? '';
  ui.chartState.textContent = `${current.runId ?? current.actorId}: ${leaf.replace(/^run\./, '')} (${current.status})`;
}

const deciding = new Set<string>();

function renderApprovals(now: number): void {
  const pending = [...store.approvals.values()];
  if (pending.length === 0) {
    if (!ui.approvals.querySelector('.empty')) ui.approvals.replaceChildren(h('li', { class: 'muted empty' }, 'None.'));
    return;
  }
  const existing = new Map([...ui.approvals.querySelectorAll<HTMLLIElement>('li[data-key]')].map((li) => [li.dataset.key!, li]));
  const items = pending.map((approval) => {
    const key = approval.approvalId;
    let li = existing.get(key);
    if (!li) {
      const approve = h('button', { class: 'approve', type: 'button' }, 'Approve');
      const deny = h('button', { class: 'deny', type: 'button' }, 'Deny');
      const decide = async (decision: 'approve' | 'deny'): Promise<void> => {
        deciding.add(key);
        approve.disabled = deny.disabled = true;
        try {
          await api.decide(approval.run, approval.approvalId, decision);
          notice(`${decision === 'approve' ? 'Approved' : 'Denied'} ${approval.tool} (${approval.callId} in ${approval.runId}).`);
        } catch (error) {
          notice(error instanceof ApiError ? error.message : String(error), 'error');
          approve.disabled = deny.disabled = false;
        } finally {
          deciding.delete(key);
        }
      };
      approve.addEventListener('click', () => void decide('approve'));
      deny.addEventListener('click', () => void decide('deny'));
      li = h(
        'li',
        { class: 'approval', 'data-key': key, 'data-approval-id': approval.approvalId, 'data-call-id': approval.callId, 'data-run-id': approval.runId },
        h('div', { class: 'approval-title' }, h('strong', {}, approval.tool), ' ', h('code', {}, short(approval.args, 160))),
        // Which run waits and who asked: two sub-runs may wait on the same call id.
        h('div', { class: 'approval-path muted' }, `${approval.path.join(' › ')} · ${approval.callId}`),
        h('div', { class: 'approval-run muted' }, `run ${approval.runId}`),
        h('div', { class: 'approval-wait muted' }),
        h('div', { class: 'approval-buttons' }, approve, deny),
      );
    }
    const waited = now - approval.since;
    const left = approval.deadline !== undefined ? ` · auto-deny in ${ms(Math.max(0, approval.deadline - now))}` : '';
    li.querySelector('.approval-wait')!.textContent = `waiting ${ms(waited)}${left}`;
    return li;
  });
  ui.approvals.replaceChildren(...items);
}

function renderEvents(): void {
  const run = selectedRun ? store.runs.get(selectedRun) : undefined;
  if (!run) {
    ui.events.replaceChildren();
    return;
  }
  const events = run.events.filter((e) => e.event.type !== 'text_delta' && e.event.type !== 'reasoning_delta').slice(-150);
  const t0 = run.events[0]?.ts ?? 0;
  const key = `${run.run}:${events.length}:${events.at(-1)?.ts ?? 0}`;
  if (ui.events.dataset.key === key) return;
  ui.events.dataset.key = key;
  ui.events.replaceChildren(
    ...events.map(({ ts, event }) => {
      const call = (event.call as { id?: string } | undefined)?.id;
      return h(
        'li',
        { class: `ev ${event.type}`, 'data-type': event.type },
        h('span', { class: 'ev-time' }, ms(ts - t0)),
        h('span', { class: 'ev-type' }, event.type),
        h('span', { class: 'ev-path muted' }, event.path.join(' › ')),
        call ? h('span', { class: 'ev-call' }, call) : undefined,
      );
    }),
  );
  ui.events.scrollTop = ui.events.scrollHeight;
}

// ── wiring ──────────────────────────────────────────────────────────────

ui.zoom.addEventListener('click', () => {
  fit = !fit;
  lastLeaf = '';
  ui.zoom.textContent = fit ? '1:1' : 'fit';
  schedule();
});

ui.machine.addEventListener('change', () => {
  selectedMachine = ui.machine.value;
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
    ui.agent.replaceChildren(...agents.map((name) => h('option', { value: name }, name)));
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) notice(`Could not list agents: ${(error as Error).message}`, 'error');
  }
}

window.addEventListener('resize', schedule);
connect();
void loadAgents();
