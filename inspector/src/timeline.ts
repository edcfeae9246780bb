import { buildSegments, defaultGapOptions, fromU, toU, type ScaleSegment, type TimeInterval, type ViewWindow } from '../../src/inspect/time-scale.js';
import { ms, short, svg } from './dom.js';
import type { Band, Lane, Store } from './store.js';

const LABEL_W = 250;
const ROW_H = 22;
const GROUP_H = 22;
const AXIS_H = 24;
const RIGHT_PAD = 16;

/** Zoom/pan state of the timeline, kept by the page across redraws. */
export interface TimelineView {
  /** Shown window in compressed coordinates; undefined = everything. */
  window: ViewWindow | undefined;
  /** Compress idle gaps (default on). */
  compress: boolean;
  /** Compressed length of the whole run after the last draw (zoom limits). */
  total: number;
}

/**
 * Tool calls of one root run (and its sub-runs): one lane per call, grouped by the run and
 * the agent that made the call (a handoff starts a new group). Bars span tool_call_started →
 * tool_call_completed; a hatched segment before a bar is the approval wait, a diamond its
 * decision; shaded bands are barrier phases. Idle stretches are compressed (drawn as a
 * zig-zag with their real length) unless `view.compress` is off; `view.window` zooms.
 * Returns whether something is still running (the caller keeps animating).
 */
export function renderTimeline(container: HTMLElement, store: Store, run: string | undefined, now: number, view: TimelineView, onLane: (lane: Lane) => void, viewport: { top: number; height: number; width: number } = { top: 0, height: Infinity, width: container.clientWidth }): boolean {
  const lanes = [...store.lanes.values()].filter((lane) => lane.run === run).sort((a, b) => a.order - b.order);
  if (!run || lanes.length === 0) {
    if (!container.querySelector('p.muted')) container.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'No tool calls yet.' }));
    return false;
  }
  const info = store.runs.get(run);
  const groups = new Map<string, Lane[]>();
  for (const lane of lanes) {
    const key = `${lane.runId}|${lane.agent}`;
    const list = groups.get(key) ?? [];
    list.push(lane);
    groups.set(key, list);
  }
  const runIds = new Set(lanes.map((l) => l.runId));
  const bands = [...runIds].flatMap((runId) => store.bands.get(runId) ?? []);
  const running = info?.status === 'running' && lanes.some((l) => l.end === undefined);
  const times = lanes.flatMap((l) => [l.start, l.end, l.approvalStart, l.approvalEnd, ...l.failures]).filter((t): t is number => t !== undefined);
  const t0 = Math.min(...times, ...bands.map((b) => b.start));
  const t1 = Math.max(...times, ...bands.map((b) => b.end ?? b.start), running || store.approvals.size > 0 ? now : -Infinity, t0 + 1);
  // Only calls running count as activity: an approval wait is idle time, so it can be compressed.
  const busy: TimeInterval[] = lanes.flatMap((l) => (l.start !== undefined ? [{ start: l.start, end: l.end ?? now }] : l.end !== undefined ? [{ start: l.end, end: l.end }] : []));
  const segments = buildSegments(t0, t1, busy, defaultGapOptions(busy), view.compress);
  const total = segments.at(-1)!.u1;
  view.total = total;
  const win = view.window && view.window.u1 <= total + 1e-6 ? view.window : { u0: 0, u1: total };
  const width = Math.max(640, viewport.width - 4);
  const plotW = width - LABEL_W - RIGHT_PAD;
  const xu = (u: number): number => LABEL_W + ((u - win.u0) / Math.max(1e-9, win.u1 - win.u0)) * plotW;
  const x = (t: number): number => xu(toU(segments, t));
  const height = AXIS_H + [...groups.values()].reduce((h, list) => h + GROUP_H + list.length * ROW_H, 0) + 6;

  const root = svg('svg', {
    class: 'timeline', width, height, viewBox: `0 0 ${width} ${height}`,
    'data-view-start': (fromU(segments, win.u0) - t0).toFixed(2),
    'data-view-end': (fromU(segments, win.u1) - t0).toFixed(2),
    'data-compressed': String(view.compress && segments.some((s) => s.gap)),
  });
  const defs = svg('defs');
  const hatch = svg('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
  hatch.append(svg('rect', { width: 6, height: 6, class: 'hatch-bg' }), svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line' }));
  const clip = svg('clipPath', { id: 'plot-clip' });
  clip.append(svg('rect', { x: LABEL_W, y: 0, width: plotW + RIGHT_PAD, height }));
  defs.append(hatch, clip);
  root.append(defs);
  root.append(axis(segments, win, t0, xu, plotW, height));
  const plot = svg('g', { class: 'plot', 'clip-path': 'url(#plot-clip)' });
  const labels = svg('g', { class: 'lanes' });
  let y = AXIS_H;
  for (const [key, list] of groups) {
    const runId = list[0]!.runId;
    const groupTop = y;
    const g = svg('g', { class: 'lane-group', 'data-run-id': runId, 'data-agent': list[0]!.agent, 'data-group': key });
    for (const band of store.bands.get(runId) ?? []) plot.append(bandRect(band, x, t1, groupTop + GROUP_H, list.length * ROW_H));
    const header = svg('text', { x: 6, y: y + 15, class: 'group-label' });
    header.textContent = `${list[0]!.path.join(' › ') || runId}  ·  max ${maxConcurrency(list, now)} in flight`;
    g.append(header);
    y += GROUP_H;
    for (const lane of list) {
      // Only rows near the scrolled-to part are drawn: a run of 1,000 calls stays cheap to redraw.
      if (y + ROW_H >= viewport.top - 400 && y <= viewport.top + viewport.height + 400) {
        const row = laneRow(lane, list, x, y, now);
        row.addEventListener('click', () => onLane(lane));
        g.append(row);
      }
      y += ROW_H;
    }
    labels.append(g);
  }
  root.append(plot, labels);
  container.replaceChildren(root);
  return running;
}

function axis(segments: ScaleSegment[], win: ViewWindow, t0: number, xu: (u: number) => number, plotW: number, height: number): SVGGElement {
  const g = svg('g', { class: 'axis' });
  const span = win.u1 - win.u0;
  const step = niceStep(span / Math.max(2, Math.floor(plotW / 90)));
  for (let u = Math.ceil(win.u0 / step) * step; u <= win.u1 + 1e-9; u += step) {
    const px = xu(u);
    g.append(svg('line', { x1: px, x2: px, y1: AXIS_H - 6, y2: height, class: 'tick' }));
    const label = svg('text', { x: px + 2, y: AXIS_H - 9 });
    label.textContent = ms(fromU(segments, u) - t0);
    g.append(label);
  }
  for (const s of segments) {
    if (!s.gap || s.u1 < win.u0 || s.u0 > win.u1) continue;
    const a = xu(s.u0);
    const b = xu(s.u1);
    const gap = svg('g', { class: 'gap-mark' });
    gap.append(svg('rect', { x: a, y: AXIS_H - 4, width: Math.max(2, b - a), height: height - AXIS_H + 4 }));
    const t = svg('title');
    t.textContent = `${ms(s.t1 - s.t0)} idle (compressed)`;
    gap.append(t);
    const label = svg('text', { x: (a + b) / 2, y: AXIS_H + 10, 'text-anchor': 'middle', class: 'gap-label' });
    label.textContent = `⋯ ${ms(s.t1 - s.t0)}`;
    gap.append(label);
    g.append(gap);
  }
  return g;
}

function bandRect(band: Band, x: (t: number) => number, t1: number, top: number, height: number): SVGGElement {
  const g = svg('g', { class: `barrier-band ${band.kind}` });
  const x0 = x(band.start);
  const x1 = Math.max(x0 + 2, x(band.end ?? t1));
  g.append(svg('rect', { x: x0, y: top, width: x1 - x0, height }));
  const title = svg('title');
  title.textContent = band.kind === 'runningAlone' ? 'barrier: running one call alone' : 'barrier: waiting for in-flight calls to settle';
  g.append(title);
  return g;
}

function laneRow(lane: Lane, siblings: Lane[], x: (t: number) => number, y: number, now: number): SVGGElement {
  const start = lane.start;
  const end = lane.end ?? (start !== undefined ? now : undefined);
  const overlap = start !== undefined && siblings.some((o) => o !== lane && o.start !== undefined && o.start < (end ?? now) && start < (o.end ?? now));
  const status = lane.rejected ? 'rejected' : lane.end === undefined ? (start === undefined ? 'waiting' : 'running') : lane.isError ? 'error' : 'ok';
  const g = svg('g', {
    class: `lane ${status}${lane.alone ? ' alone' : ''}`,
    'data-call-id': lane.callId,
    'data-run-id': lane.runId,
    'data-tool': lane.tool,
    'data-status': status,
    'data-overlap': String(overlap),
    ...(start !== undefined ? { 'data-start': start.toFixed(2) } : {}),
    ...(lane.end !== undefined ? { 'data-end': lane.end.toFixed(2) } : {}),
  });
  g.append(svg('rect', { class: 'row-bg', x: 0, y, width: '100%', height: ROW_H }));
  const label = svg('text', { x: 14, y: y + 15, class: 'lane-label' });
  label.textContent = short(`${lane.tool} · ${lane.callId}`, lane.alone ? 30 : 36);
  g.append(label);
  if (lane.alone) {
    const badge = svg('text', { x: LABEL_W - 8, y: y + 15, class: 'alone-badge', 'text-anchor': 'end' });
    badge.textContent = 'alone';
    g.append(badge);
  }
  // Bars are clipped to the plot area, so a zoomed-in view does not draw over the labels.
  const marks = svg('g', { class: 'lane-marks', 'clip-path': 'url(#plot-clip)' });
  if (lane.approvalStart !== undefined) {
    const a0 = x(lane.approvalStart);
    const a1 = Math.max(a0 + 3, x(lane.approvalEnd ?? lane.start ?? now));
    const appr = svg('rect', { class: `approval-wait ${lane.approvalState ?? 'pending'}`, x: a0, y: y + 4, width: a1 - a0, height: ROW_H - 8, fill: 'url(#hatch)' });
    const t = svg('title');
    t.textContent = `approval ${lane.approvalState ?? 'pending'} (${ms((lane.approvalEnd ?? now) - lane.approvalStart)})`;
    appr.append(t);
    marks.append(appr);
    if (lane.approvalEnd !== undefined) {
      const px = x(lane.approvalEnd);
      marks.append(svg('path', { class: `approval-mark ${lane.approvalState ?? ''}`, d: `M ${px} ${y + 3} l 5 8 l -5 8 l -5 -8 z` }));
    }
  }
  if (start !== undefined && end !== undefined) {
    const b0 = x(start);
    const bar = svg('rect', { class: 'lane-bar', x: b0, y: y + 5, width: Math.max(2, x(end) - b0), height: ROW_H - 10, rx: 3 });
    const t = svg('title');
    t.textContent = `${lane.tool} ${lane.callId}: ${ms(end - start)}${lane.end === undefined ? ' (running)' : ''}${lane.output ? `\n→ ${short(lane.output, 300)}` : ''}`;
    bar.append(t);
    marks.append(bar);
  } else if (lane.rejected && lane.end !== undefined) {
    const px = x(lane.end);
    const mark = svg('path', { class: 'rejected-mark', d: `M ${px} ${y + 4} l 6 7 l -6 7 l -6 -7 z` });
    const t = svg('title');
    t.textContent = `${lane.tool} ${lane.callId}: not run — ${short(lane.output ?? '', 300)}`;
    mark.append(t);
    marks.append(mark);
  }
  for (const failure of lane.failures) marks.append(svg('line', { class: 'failure-tick', x1: x(failure), x2: x(failure), y1: y + 2, y2: y + ROW_H - 2 }));
  g.append(marks);
  return g;
}

function maxConcurrency(lanes: Lane[], now: number): number {
  const points: Array<[number, number]> = [];
  for (const lane of lanes) {
    if (lane.start === undefined) continue;
    points.push([lane.start, 1], [lane.end ?? now, -1]);
  }
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, delta] of points) {
    current += delta;
    max = Math.max(max, current);
  }
  return max;
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}
