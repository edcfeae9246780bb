import { showDetails } from './details.js';
import { h, ms } from './dom.js';
import type { RunInfo } from './store.js';

/**
 * The newest 200 events of a run (text and reasoning deltas left out); each opens its payload
 * in the details panel. Redraws only when the run has new events: returns the key drawn.
 */
export function renderEvents(container: HTMLElement, run: RunInfo | undefined, drawnKey: string): string {
  if (!run) {
    container.replaceChildren();
    return '';
  }
  const all = run.events.filter((e) => e.event.type !== 'text_delta' && e.event.type !== 'reasoning_delta');
  const key = `${run.run}:${all.length}`;
  if (drawnKey === key) return key;
  const t0 = run.events[0]?.ts ?? 0;
  container.replaceChildren(
    ...all.slice(-200).map(({ ts, event }) => {
      const call = (event.call as { id?: string } | undefined)?.id;
      const li = h(
        'li',
        { class: `ev ${event.type}`, 'data-type': event.type, tabindex: 0, role: 'button' },
        h('span', { class: 'ev-time' }, ms(ts - t0)),
        h('span', { class: 'ev-type' }, event.type),
        h('span', { class: 'ev-path muted' }, event.path.join(' › ')),
        call ? h('span', { class: 'ev-call' }, call) : undefined,
      );
      const open = (): void => showDetails('event', `${event.type}${call ? ` ${call}` : ''} at ${ms(ts - t0)}`, event);
      li.addEventListener('click', open);
      li.addEventListener('keydown', (e) => e.key === 'Enter' && open());
      return li;
    }),
  );
  container.scrollTop = container.scrollHeight;
  return key;
}
