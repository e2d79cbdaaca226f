/**
 * One run against another (core/run-comparison.ts), on worked examples: a bracket's delta is the
 * interval of the ratio [run.lo / with.hi, run.hi / with.lo], the order says whether the brackets are
 * apart, and the verdict is regression.ts's with the spec's limit, else 0. Expected values are worked
 * out by hand in the table, not by the code under test.
 */
import { describe, expect, it } from 'vitest';
import type { ComparedResult } from '../../lambdas/core/regression';
import { compareRuns, type FigureDelta } from '../../lambdas/core/run-comparison';

function result(p95: { lo: number; hi: number }, o: { requests?: number; failed?: number; durationMs?: number; mean?: number } = {}): ComparedResult {
  const requests = o.requests ?? 1200;
  const failed = o.failed ?? 0;
  return {
    requests,
    failedRequests: failed,
    errorRate: requests > 0 ? failed / requests : 0,
    durationMs: o.durationMs ?? 60_000,
    latency: { count: requests, sum: 0, min: 0, max: 0, mean: o.mean ?? 50, p90: p95, p95, p99: p95 },
  };
}

const figure = (list: FigureDelta[], name: string) => list.find((f) => f.figure === name)!;

describe('compareRuns', () => {
  it.each([
    // run p95, other p95, limits, delta, order, verdict
    [{ lo: 150, hi: 160 }, { lo: 100, hi: 125 }, {}, { lo: 1.2, hi: 1.6 }, 'higher', 'certain', 0, 'default'],
    // +30 %: 150 > 125 × 1.3 = 162.5? no; 160 > 100 × 1.3 = 130: possible
    [{ lo: 150, hi: 160 }, { lo: 100, hi: 125 }, { p95: '+30%' }, { lo: 1.2, hi: 1.6 }, 'higher', 'possible', 0.3, 'spec'],
    // overlapping: 100 > 130? no; 120 > 110: possible at 0
    [{ lo: 100, hi: 120 }, { lo: 110, hi: 130 }, {}, { lo: 100 / 130, hi: 120 / 110 }, 'overlapping', 'possible', 0, 'default'],
    [{ lo: 90, hi: 95 }, { lo: 100, hi: 110 }, {}, { lo: 90 / 110, hi: 0.95 }, 'lower', 'none', 0, 'default'],
    [{ lo: 100, hi: 100 }, { lo: 100, hi: 100 }, {}, { lo: 1, hi: 1 }, 'same', 'none', 0, 'default'],
  ] as const)('p95 %o against %o with %o: delta %o, %s, %s', (run, other, limits, delta, order, verdict, limit, limitFrom) => {
    const p95 = figure(compareRuns(result(run), result(other), limits), 'p95');
    expect(p95).toMatchObject({ run, with: other, order, verdict, limit, limitFrom });
    expect((p95.delta as { lo: number }).lo).toBeCloseTo(delta.lo, 12);
    expect((p95.delta as { hi: number }).hi).toBeCloseTo(delta.hi, 12);
  });

  it("the other's bracket at 0 ms: no ratio, verdict unknown with why", () => {
    expect(figure(compareRuns(result({ lo: 5, hi: 6 }), result({ lo: 0, hi: 1 })), 'p95')).toMatchObject({
      delta: null,
      order: 'higher',
      verdict: 'unknown',
      why: "the baseline's bracket starts at 0 ms",
    });
  });

  it('the error rate in points, the request rate and the duration as ratios; the duration not judged', () => {
    // 36 of 1200 = 3 % against 12 of 1200 = 1 %: +2 points; 600 over 60 s = 10/s against 1200 over 60 s = 20/s.
    const c = compareRuns(
      result({ lo: 1, hi: 1 }, { requests: 1200, failed: 36, durationMs: 60_000 }),
      result({ lo: 1, hi: 1 }, { requests: 1200, failed: 12, durationMs: 30_000 }),
    );
    const errorRate = figure(c, 'errorRate');
    expect(errorRate).toMatchObject({ run: 0.03, with: 0.01, order: 'higher', verdict: 'certain', limit: 0 });
    expect(errorRate.delta).toBeCloseTo(2, 12);
    expect(figure(c, 'errorRate').verdict).toBe('certain');
    expect(
      figure(compareRuns(result({ lo: 1, hi: 1 }, { failed: 36 }), result({ lo: 1, hi: 1 }, { failed: 12 }), { errorRate: '+2.5' }), 'errorRate').verdict,
    ).toBe('none');
    // 1200 over 60 s = 20/s against 1200 over 30 s = 40/s: ×0.5, fewer: certain at 0.
    expect(figure(c, 'requestRate')).toMatchObject({ run: 20, with: 40, delta: 0.5, order: 'lower', verdict: 'certain' });
    expect(figure(c, 'duration')).toEqual({ figure: 'duration', run: 60_000, with: 30_000, delta: 2, order: 'higher' });
  });

  it('a run without requests: its figures null, no delta, no order, verdicts unknown', () => {
    const c = compareRuns(result({ lo: 0, hi: 0 }, { requests: 0 }), result({ lo: 100, hi: 110 }));
    for (const name of ['p95', 'mean', 'errorRate', 'requestRate']) {
      expect(figure(c, name), name).toMatchObject({ run: null, delta: null, order: null, verdict: 'unknown' });
    }
  });
});
