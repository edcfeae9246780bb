import { byId, h } from './dom.js';

/**
 * The details panel: the full payload of whatever was clicked last (an event, a timeline bar,
 * an actor, a chart state, a transcript item), as indented JSON with every field.
 */
export function showDetails(kind: string, title: string, payload: unknown): void {
  const panel = byId('details');
  panel.dataset.kind = kind;
  panel.replaceChildren(h('h3', { class: 'details-title' }, title), h('pre', { class: 'details-json' }, pretty(payload)));
  byId('details-panel').scrollIntoView({ block: 'nearest' });
}

/** JSON with two-space indent; strings that hold JSON (tool arguments) are shown parsed beside the raw text. */
export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (v === undefined ? null : v), 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Makes `el` open the details of `payload()` on click and on Enter/Space (payload built only when asked). */
export function clickable(el: HTMLElement | SVGElement, kind: string, title: string, payload: () => unknown): void {
  el.setAttribute('tabindex', '0');
  el.setAttribute('role', 'button');
  el.classList.add('clickable');
  const open = (event: Event): void => {
    event.stopPropagation();
    showDetails(kind, title, payload());
  };
  el.addEventListener('click', open);
  el.addEventListener('keydown', (event) => {
    const key = (event as KeyboardEvent).key;
    if (key === 'Enter' || key === ' ') {
      event.preventDefault();
      open(event);
    }
  });
}
