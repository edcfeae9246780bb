import { ms, short, svg } from './dom.js';
import type { Band, Lane, Store } from './store.js';

const LABEL_W = 250;
const ROW_H = 22;
const GROUP_H = 22;
const AXIS_H = 24;
const RIGHT_PAD = 16;

/**
 * Tool calls of one root run (and its sub-runs): one lane per call, grouped by run.
 * Bars span tool_call_started → tool_call_completed (or the call actor's life, whichever
 * is earlier); a hatched segment before a bar is the approval wait; shaded bands are the
 * run's barrier phases (waiting for in-flight calls, then running one call alone).
 * Returns whether something is still running (the caller keeps animating).
 */
export function renderTimeline(container: HTMLElement, store: Store, run: string | undefined, now: number): boolean {
  const lanes = [...store.lanes.values()].filter((lane) => lane.run === run).sort((a, b) => a.order - b.order);
  if (!run || lanes.length === 0) {
    if (!container.querySelector('p.muted')) container.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'No tool calls yet.' }));
    return false;
  }
  const info = store.runs.get(run);
  const groups = new Map<string, Lane[]>();
  for (const lane of lanes) {
    const list = groups.get(lane.runId) ?? [];
    list.push(lane);
    groups.set(lane.runId, list);
  }
  const bands = [...groups.keys()].flatMap((runId) => store.bands.get(runId) ?? []);
  const times = lanes.flatMap((l) => [l.start, l.end, l.approvalStart, l.approvalEnd]).filter((t): t is number => t !== undefined);
  const running = info?.status === 'running' && lanes.some((l) => l.end === undefined);
  const t0 = Math.min(...times, ...bands.map((b) => b.start));
  const t1 = Math.max(...times, ...bands.map((b) => b.end ?? b.start), running ? now : -Infinity, t0 + 1);
  const width = Math.max(640, container.clientWidth - 4);
  const plotW = width - LABEL_W - RIGHT_PAD;
  const x = (t: number): number => LABEL_W + ((t - t0) / (t1 - t0)) * plotW;
  const height = AXIS_H + [...groups.values()].reduce((h, list) => h + GROUP_H + list.length * ROW_H, 0) + 6;

  const root = svg('svg', { class: 'timeline', width, height, viewBox: `0 0 ${width} ${height}` });
  const defs = svg('defs');
  const hatch = svg('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
  hatch.append(svg('rect', { width: 6, height: 6, class: 'hatch-bg' }), svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line' }));
  defs.append(hatch);
  root.append(defs);

  // Axis
  const axis = svg('g', { class: 'axis' });
  const step = niceStep((t1 - t0) / Math.max(2, Math.floor(plotW / 90)));
  for (let t = 0; t <= t1 - t0 + 1e-9; t += step) {
    const px = x(t0 + t);
    axis.append(svg('line', { x1: px, x2: px, y1: AXIS_H - 6, y2: height, class: 'tick' }));
    const label = svg('text', { x: px + 2, y: AXIS_H - 9 });
    label.textContent = ms(t);
    axis.append(label);
  }
  root.append(axis);

  let y = AXIS_H;
  for (const [runId, list] of groups) {
    const groupTop = y;
    const groupHeight = GROUP_H + list.length * ROW_H;
    const g = svg('g', { class: 'lane-group', 'data-run-id': runId });
    // Barrier bands behind the lanes
    for (const band of store.bands.get(runId) ?? []) g.append(bandRect(band, x, t1, groupTop + GROUP_H, list.length * ROW_H));
    const header = svg('text', { x: 6, y: y + 15, class: 'group-label' });
    const path = list[0]?.path ?? [];
    header.textContent = `${path.join(' › ') || runId}  ·  max ${maxConcurrency(list, now)} in flight`;
    g.append(header);
    y += GROUP_H;
    for (const lane of list) {
      g.append(laneRow(lane, list, x, y, now));
      y += ROW_H;
    }
    root.append(g);
  }
  container.replaceChildren(root);
  return running;
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
  if (lane.approvalStart !== undefined) {
    const a0 = x(lane.approvalStart);
    const a1 = Math.max(a0 + 3, x(lane.approvalEnd ?? lane.start ?? now));
    const appr = svg('rect', { class: `approval-wait ${lane.approvalState ?? 'pending'}`, x: a0, y: y + 4, width: a1 - a0, height: ROW_H - 8, fill: 'url(#hatch)' });
    const t = svg('title');
    t.textContent = `approval ${lane.approvalState ?? 'pending'} (${ms((lane.approvalEnd ?? now) - lane.approvalStart)})`;
    appr.append(t);
    g.append(appr);
  }
  if (start !== undefined && end !== undefined) {
    const b0 = x(start);
    const bar = svg('rect', { class: 'lane-bar', x: b0, y: y + 5, width: Math.max(2, x(end) - b0), height: ROW_H - 10, rx: 3 });
    const t = svg('title');
    t.textContent = `${lane.tool} ${lane.callId}: ${ms(end - start)}${lane.end === undefined ? ' (running)' : ''}${lane.output ? `\n→ ${short(lane.output, 300)}` : ''}`;
    bar.append(t);
    g.append(bar);
  } else if (lane.rejected && lane.end !== undefined) {
    const px = x(lane.end);
    const mark = svg('path', { class: 'rejected-mark', d: `M ${px} ${y + 4} l 6 7 l -6 7 l -6 -7 z` });
    const t = svg('title');
    t.textContent = `${lane.tool} ${lane.callId}: not run — ${short(lane.output ?? '', 300)}`;
    mark.append(t);
    g.append(mark);
  }
  for (const failure of lane.failures) g.append(svg('line', { class: 'failure-tick', x1: x(failure), x2: x(failure), y1: y + 2, y2: y + ROW_H - 2 }));
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
