/**
 * A timeline scale that compresses idle gaps: long stretches with no tool activity (an
 * approval wait, a slow model turn) are drawn with a fixed small width, so 200 ms of
 * parallel calls is not flattened by a 45 s wait beside it. Dependency-free: the inspector
 * page imports it.
 *
 * Time `t` (epoch ms) maps to a compressed coordinate `u` (ms of "shown time"); a view window
 * `[u0, u1]` (zoom and pan) maps `u` linearly onto pixels.
 */

export interface TimeInterval {
  readonly start: number;
  readonly end: number;
}

/** One piece of the scale: `[t0, t1]` is drawn as `[u0, u1]`. `gap` pieces are compressed. */
export interface ScaleSegment {
  readonly t0: number;
  readonly t1: number;
  readonly u0: number;
  readonly u1: number;
  readonly gap: boolean;
}

export interface GapOptions {
  /** Idle stretches longer than this are compressed (ms). */
  readonly minGapMs: number;
  /** Width a compressed gap is drawn with (in `u`, i.e. shown ms). */
  readonly gapWidth: number;
}

/**
 * Gap threshold for a set of busy intervals: a quarter of the busy time, at least 50 ms, so a
 * gap is compressed only when it is long next to what happens around it.
 */
export function defaultGapOptions(busy: readonly TimeInterval[]): GapOptions {
  const merged = mergeIntervals(busy);
  const busyMs = merged.reduce((sum, i) => sum + (i.end - i.start), 0);
  const minGapMs = Math.max(50, busyMs * 0.25);
  return { minGapMs, gapWidth: Math.max(10, Math.min(minGapMs, busyMs * 0.08 || 10)) };
}

/** Sorted union of intervals (touching ones joined; an end before its start is treated as a point). */
export function mergeIntervals(intervals: readonly TimeInterval[]): TimeInterval[] {
  const sorted = intervals
    .map((i) => ({ start: i.start, end: Math.max(i.start, i.end) }))
    .filter((i) => Number.isFinite(i.start) && Number.isFinite(i.end))
    .sort((a, b) => a.start - b.start);
  const out: Array<{ start: number; end: number }> = [];
  for (const interval of sorted) {
    const last = out.at(-1);
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else out.push({ ...interval });
  }
  return out;
}

/**
 * Segments covering `[from, to]`: busy stretches and short gaps keep their length; every idle
 * stretch longer than `minGapMs` becomes a `gap` segment of width `gapWidth`. With `compress`
 * false the whole range is one linear segment.
 */
export function buildSegments(from: number, to: number, busy: readonly TimeInterval[], options: GapOptions, compress = true): ScaleSegment[] {
  const end = Math.max(to, from);
  if (!compress) return [{ t0: from, t1: end, u0: 0, u1: end - from, gap: false }];
  const merged = mergeIntervals(busy)
    .map((i) => ({ start: Math.max(from, i.start), end: Math.min(end, i.end) }))
    .filter((i) => i.end >= i.start);
  const segments: ScaleSegment[] = [];
  let u = 0;
  let t = from;
  const push = (t1: number, gap: boolean): void => {
    if (t1 <= t && segments.length > 0) return;
    const width = gap ? options.gapWidth : t1 - t;
    segments.push({ t0: t, t1, u0: u, u1: u + width, gap });
    u += width;
    t = t1;
  };
  for (const interval of merged) {
    if (interval.start > t) push(interval.start, interval.start - t > options.minGapMs);
    if (interval.end > t) push(interval.end, false);
  }
  if (end > t || segments.length === 0) push(end, end - t > options.minGapMs);
  return segments;
}

/** Compressed coordinate of time `t` (clamped to the segments' range). */
export function toU(segments: readonly ScaleSegment[], t: number): number {
  if (segments.length === 0) return 0;
  if (t <= segments[0]!.t0) return segments[0]!.u0;
  for (const s of segments) {
    if (t <= s.t1) return s.t1 === s.t0 ? s.u0 : s.u0 + ((t - s.t0) / (s.t1 - s.t0)) * (s.u1 - s.u0);
  }
  return segments.at(-1)!.u1;
}

/** Time at compressed coordinate `u` (inverse of `toU`). */
export function fromU(segments: readonly ScaleSegment[], u: number): number {
  if (segments.length === 0) return 0;
  if (u <= 0) return segments[0]!.t0;
  for (const s of segments) {
    if (u <= s.u1) return s.u1 === s.u0 ? s.t0 : s.t0 + ((u - s.u0) / (s.u1 - s.u0)) * (s.t1 - s.t0);
  }
  return segments.at(-1)!.t1;
}

/** A zoom/pan window over `[0, total]` in `u`. */
export interface ViewWindow {
  readonly u0: number;
  readonly u1: number;
}

/** Zooms by `factor` (< 1 zooms in) around `centre` (a fraction 0..1 of the window), kept inside `[0, total]`. */
export function zoomWindow(view: ViewWindow, total: number, factor: number, centre = 0.5): ViewWindow {
  const width = Math.min(total, Math.max(total / 1_000, (view.u1 - view.u0) * factor));
  const anchor = view.u0 + (view.u1 - view.u0) * centre;
  return clampWindow({ u0: anchor - width * centre, u1: anchor - width * centre + width }, total);
}

/** Moves the window by `delta` (in `u`), kept inside `[0, total]`. */
export function panWindow(view: ViewWindow, total: number, delta: number): ViewWindow {
  return clampWindow({ u0: view.u0 + delta, u1: view.u1 + delta }, total);
}

function clampWindow(view: ViewWindow, total: number): ViewWindow {
  const width = Math.min(total, view.u1 - view.u0);
  let u0 = Math.max(0, Math.min(view.u0, total - width));
  if (!Number.isFinite(u0)) u0 = 0;
  return { u0, u1: u0 + width };
}
