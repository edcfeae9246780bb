import { panWindow, zoomWindow } from '../../src/inspect/time-scale.js';
import { byId } from './dom.js';
import type { TimelineView } from './timeline.js';

/** Zoom (−/+, wheel), pan (◀ ▶, Shift+wheel), reset and the "compress idle" switch of the timeline. */
export function timelineControls(timeline: HTMLElement, timelineView: TimelineView, schedule: () => void): void {
  const zoomTimeline = (factor: number): void => {
    const current = timelineView.window ?? { u0: 0, u1: timelineView.total };
    timelineView.window = zoomWindow(current, timelineView.total, factor);
    schedule();
  };
  const panTimeline = (fraction: number): void => {
    const current = timelineView.window ?? { u0: 0, u1: timelineView.total };
    timelineView.window = panWindow(current, timelineView.total, (current.u1 - current.u0) * fraction);
    schedule();
  };
  byId('tl-in').addEventListener('click', () => zoomTimeline(0.5));
  byId('tl-out').addEventListener('click', () => zoomTimeline(2));
  byId('tl-left').addEventListener('click', () => panTimeline(-0.4));
  byId('tl-right').addEventListener('click', () => panTimeline(0.4));
  byId('tl-reset').addEventListener('click', () => {
    timelineView.window = undefined;
    schedule();
  });
  byId<HTMLInputElement>('compress').addEventListener('change', (event) => {
    timelineView.compress = (event.target as HTMLInputElement).checked;
    timelineView.window = undefined;
    schedule();
  });
  // Wheel over the timeline zooms around the pointer; with Shift it pans.
  timeline.addEventListener('wheel', (event) => {
    const svgEl = timeline.querySelector('svg');
    if (!svgEl || timelineView.total <= 0) return;
    event.preventDefault();
    const current = timelineView.window ?? { u0: 0, u1: timelineView.total };
    if (event.shiftKey) return panTimeline(Math.sign(event.deltaY || event.deltaX) * 0.2);
    const box = svgEl.getBoundingClientRect();
    const centre = Math.min(1, Math.max(0, (event.clientX - box.left - 250) / Math.max(1, box.width - 266)));
    timelineView.window = zoomWindow(current, timelineView.total, event.deltaY < 0 ? 0.8 : 1.25, centre);
    schedule();
  }, { passive: false });
}
