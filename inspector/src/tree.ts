import { h } from './dom.js';
import { callIdOf, type ActorInfo, type Store } from './store.js';

const ICON: Record<string, string> = { run: '▣', machine: '▣', executor: '⚙', toolCall: 'ƒ', promise: '◦', other: '·' };

/**
 * The actor tree of one root run: run → executor (`tools`) → tool-call actors → sub-runs…
 * Short-lived invoked actors (model turn, approval, checkpoint) are shown only while active.
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
    container.replaceChildren(h('p', { class: 'muted' }, info ? `Inspection was not attached while ${run} ran (${info.status}).` : 'No actors yet.'));
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
  if (actor.logic === 'run') {
    label.setAttribute('role', 'button');
    label.tabIndex = 0;
    label.title = 'Show this run\u2019s statechart';
    label.addEventListener('click', () => onSelect(actor.sessionId));
  }
  const children = actor.children.map((id) => store.actors.get(id)).filter((a): a is ActorInfo => a !== undefined);
  if (children.length) {
    const ul = h('ul');
    for (const child of children) {
      const item = node(child, store, selected, onSelect);
      if (item) ul.append(item);
    }
    if (ul.childElementCount) li.append(ul);
  }
  return li;
}
