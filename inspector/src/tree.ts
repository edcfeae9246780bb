import type { RunTranscript } from '../../src/inspect/transcript.js';
import { clickable, showDetails } from './details.js';
import { h } from './dom.js';
import { callIdOf, type ActorInfo, type Store } from './store.js';

const MAX_CHILDREN = 60;
const ICON: Record<string, string> = { run: '▣', machine: '▣', wait: '⏸', executor: '⚙', toolCall: 'ƒ', promise: '◦', other: '·' };

/**
 * The actor tree of one root run: run → executor (`tools`, made with the run's first call) → tool-call actors → sub-runs…
 * Short-lived invoked actors (approval, checkpoint) are shown only while active.
 */
export function renderTree(container: HTMLElement, store: Store, run: string | undefined, selected: string | undefined, onSelect: (sessionId: string) => void): void {
  if (!run) {
    container.replaceChildren(h('p', { class: 'muted' }, 'No run selected.'));
    return;
  }
  const info = store.runs.get(run);
  const ids = info?.actors ?? [];
  const roots = ids.map((id) => store.actors.get(id)!).filter((a) => a && (!a.parent || !store.actors.has(a.parent)));
  if (roots.length === 0) {
    const transcript = info?.transcript.root;
    if (transcript) {
      container.replaceChildren(h('p', { class: 'muted note' }, 'Built from the run\u2019s events (XState inspection was not attached).'), eventTree(transcript));
      return;
    }
    container.replaceChildren(h('p', { class: 'muted' }, 'No actors yet.'));
    return;
  }
  const list = h('ul', { class: 'tree' });
  for (const actor of roots) {
    const item = node(actor, store, selected, onSelect);
    if (item) list.append(item);
  }
  container.replaceChildren(list);
}

function node(actor: ActorInfo, store: Store, selected: string | undefined, onSelect: (sessionId: string) => void): HTMLLIElement | undefined {
  if (actor.logic === 'promise' && actor.status !== 'active') return undefined;
  const ctx = (actor.context ?? {}) as Record<string, unknown>;
  let detail = '';
  if (actor.logic === 'run') {
    const core = (ctx.run ?? {}) as { agent?: string; turn?: number };
    detail = [core.agent, core.turn ? `turn ${core.turn}` : undefined, actor.active.at(-1)?.replace(/^run\./, '')].filter(Boolean).join(' · ');
  } else if (actor.logic === 'executor') {
    // The executor keeps no state of its own; its run's summary counts the calls in flight.
    const run = actor.parent ? store.actors.get(actor.parent) : undefined;
    const inFlight = ((run?.context ?? {}) as { run?: { inFlight?: number } }).run?.inFlight;
    detail = inFlight !== undefined ? `${inFlight} in flight` : '';
  } else if (actor.logic === 'toolCall') {
    // Actor ids are `<turn>.<index>`; the model's call id says which call it is.
    detail = [ctx.tool, callIdOf(actor)].filter((part) => typeof part === 'string' && part !== '').join(' · ');
  } else if (actor.src) {
    detail = actor.src;
  }
  const label = h(
    'span',
    { class: 'actor-label' },
    h('span', { class: 'icon' }, ICON[actor.logic] ?? '·'),
    h('span', { class: 'actor-id' }, actor.actorId),
    detail ? h('span', { class: 'actor-detail' }, detail) : undefined,
    h('span', { class: `status ${actor.status}` }, actor.status),
  );
  const li = h('li', {
    class: `actor ${actor.logic}${actor.sessionId === selected ? ' selected' : ''}`,
    'data-session': actor.sessionId,
    'data-actor-id': actor.actorId,
    'data-call-id': actor.logic === 'toolCall' ? callIdOf(actor) : undefined,
    'data-logic': actor.logic,
    'data-status': actor.status,
  }, label);
  label.setAttribute('role', 'button');
  label.tabIndex = 0;
  label.title = actor.logic === 'run' ? 'Show this run\u2019s statechart and details' : 'Show details';
  label.addEventListener('click', () => {
    if (actor.logic === 'run') onSelect(actor.sessionId);
    showDetails('actor', `actor ${actor.actorId} (${actor.logic})`, { sessionId: actor.sessionId, actorId: actor.actorId, logic: actor.logic, src: actor.src, runId: actor.runId, status: actor.status, active: actor.active, context: actor.context, createdTs: actor.createdTs, endedTs: actor.endedTs });
  });
  const all = actor.children.map((id) => store.actors.get(id)).filter((a): a is ActorInfo => a !== undefined);
  // A batch of hundreds of calls lists its newest ones; the rest are counted (the timeline has every call).
  const children = all.length > MAX_CHILDREN ? all.slice(-MAX_CHILDREN) : all;
  if (children.length) {
    const ul = h('ul');
    if (all.length > children.length) ul.append(h('li', { class: 'muted more' }, `… ${all.length - children.length} earlier actors`));
    for (const child of children) {
      const item = node(child, store, selected, onSelect);
      if (item) ul.append(item);
    }
    if (ul.childElementCount) li.append(ul);
  }
  return li;
}

/**
 * The run tree from events alone: run → tool calls → sub-runs (for runs XState inspection was
 * not attached to). Same classes and data attributes as the live tree.
 */
export function eventTree(run: RunTranscript): HTMLUListElement {
  const list = h('ul', { class: 'tree derived' });
  list.append(runNode(run));
  return list;
}

function runNode(run: RunTranscript): HTMLLIElement {
  const status = run.status === 'running' ? 'active' : run.status === 'completed' ? 'done' : run.status === 'failed' ? 'error' : 'stopped';
  const label = h('span', { class: 'actor-label' }, h('span', { class: 'icon' }, '▣'), h('span', { class: 'actor-id' }, run.runId), h('span', { class: 'actor-detail' }, run.agent), h('span', { class: `status ${status}` }, status));
  clickable(label, 'actor', `run ${run.runId}`, () => ({ runId: run.runId, agent: run.agent, path: run.path, status: run.status, items: run.items.length }));
  const li = h('li', { class: 'actor run', 'data-actor-id': run.runId, 'data-logic': 'run', 'data-status': status }, label);
  const calls = run.items.filter((i) => i.kind === 'tool');
  if (calls.length > 0) {
    const ul = h('ul');
    for (const call of calls) {
      if (call.kind !== 'tool') continue;
      const callStatus = call.status === 'done' ? 'done' : call.status === 'error' || call.status === 'rejected' ? 'error' : 'active';
      const callLabel = h('span', { class: 'actor-label' }, h('span', { class: 'icon' }, 'ƒ'), h('span', { class: 'actor-detail' }, `${call.tool} · ${call.callId}`), h('span', { class: `status ${callStatus}` }, callStatus));
      clickable(callLabel, 'call', `${call.tool} ${call.callId}`, () => ({ ...call, subRun: call.subRun?.runId }));
      const item = h('li', { class: 'actor toolCall', 'data-call-id': call.callId, 'data-logic': 'toolCall', 'data-status': callStatus }, callLabel);
      if (call.subRun) item.append(h('ul', {}, runNode(call.subRun)));
      ul.append(item);
    }
    li.append(ul);
  }
  return li;
}
