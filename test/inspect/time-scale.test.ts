import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSegments, defaultGapOptions, fromU, mergeIntervals, panWindow, toU, zoomWindow } from '../../src/inspect/time-scale.js';

describe('timeline scale with compressed idle gaps', () => {
  it('draws a 45 s approval wait as a short gap next to 200 ms of parallel calls', () => {
    // Three parallel calls in 0..200 ms, then the gated call 45 s later for 5 ms.
    const busy = [{ start: 0, end: 200 }, { start: 20, end: 150 }, { start: 40, end: 180 }, { start: 45_200, end: 45_205 }];
    const options = defaultGapOptions(busy);
    expect(options).toEqual({ minGapMs: 51.25, gapWidth: 16.4 });
    const segments = buildSegments(0, 45_205, busy, options);
    expect(segments).toEqual([
      { t0: 0, t1: 200, u0: 0, u1: 200, gap: false },
      { t0: 200, t1: 45_200, u0: 200, u1: 216.4, gap: true },
      { t0: 45_200, t1: 45_205, u0: 216.4, u1: 221.4, gap: false },
    ]);
    // The parallel phase takes 200 / 221.4 of the width instead of 200 / 45,205.
    expect(toU(segments, 200) / toU(segments, 45_205)).toBeCloseTo(0.903, 3);
    expect(toU(segments, 22_700)).toBeCloseTo(208.2, 6);
  });

  it('keeps short gaps at their length and can be switched off', () => {
    const busy = [{ start: 0, end: 100 }, { start: 120, end: 200 }];
    expect(buildSegments(0, 200, busy, { minGapMs: 50, gapWidth: 10 }).map((s) => [s.t0, s.t1, s.gap])).toEqual([[0, 100, false], [100, 120, false], [120, 200, false]]);
    expect(buildSegments(0, 45_000, busy, { minGapMs: 50, gapWidth: 10 }, false)).toEqual([{ t0: 0, t1: 45_000, u0: 0, u1: 45_000, gap: false }]);
  });

  it('merges overlapping and touching intervals', () => {
    expect(mergeIntervals([{ start: 5, end: 9 }, { start: 0, end: 5 }, { start: 20, end: 10 }])).toEqual([{ start: 0, end: 9 }, { start: 20, end: 20 }]);
  });

  it('toU is monotonic and fromU inverts it outside gaps (property)', () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 5_000 })).map(([start, len]) => ({ start, end: start + len }));
    fc.assert(
      fc.property(fc.array(interval, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 110_000 }), fc.integer({ min: 0, max: 110_000 }), (busy, a, b) => {
        const segments = buildSegments(0, 110_000, busy, defaultGapOptions(busy));
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(toU(segments, lo)).toBeLessThanOrEqual(toU(segments, hi) + 1e-9);
        const inBusy = mergeIntervals(busy).some((i) => lo >= i.start && lo <= i.end);
        if (inBusy) expect(fromU(segments, toU(segments, lo))).toBeCloseTo(lo, 6);
      }),
      { seed: 11, numRuns: 200 },
    );
  });

  it('zooms around a point and pans inside the range', () => {
    expect(zoomWindow({ u0: 0, u1: 100 }, 100, 0.5)).toEqual({ u0: 25, u1: 75 });
    expect(zoomWindow({ u0: 0, u1: 100 }, 100, 0.5, 0)).toEqual({ u0: 0, u1: 50 });
    expect(zoomWindow({ u0: 25, u1: 75 }, 100, 4)).toEqual({ u0: 0, u1: 100 });
    expect(panWindow({ u0: 25, u1: 75 }, 100, 40)).toEqual({ u0: 50, u1: 100 });
    expect(panWindow({ u0: 25, u1: 75 }, 100, -40)).toEqual({ u0: 0, u1: 50 });
  });
});
