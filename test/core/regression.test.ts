/**
 * A run against its baseline (core/regression.ts): worked examples with the values stated here, and
 * for percentiles a property over every pair of exact values the two brackets allow: `certain` only
 * when every pair is apart by more than the limit, `none` only when no pair is, `possible` otherwise.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareToBaseline, describeChange, figureChange, requestRate, type ComparedResult } from '../../lambdas/core/regression';
import type { Bracket } from '../../lambdas/core/percentile-bracket';

/** A result with these figures (latency brackets in ms; 1,000 samples unless `count` says otherwise). */
function result(figures: { p95?: Bracket; mean?: number; requests?: number; failed?: number; durationMs?: number; count?: number }): ComparedResult {
  const requests = figures.requests ?? 1_000;
  const failed = figures.failed ?? 0;
  const p95 = figures.p95 ?? { lo: 100, hi: 100 };
  return {
    requests,
    failedRequests: failed,
    errorRate: requests > 0 ? failed / requests : 0,
    durationMs: figures.durationMs ?? 100_000,
    latency: { count: figures.count ?? 1_000, sum: 0, min: 1, max: 900, mean: figures.mean ?? 50, p90: p95, p95, p99: p95 },
  };
}

const p95Verdict = (run: Bracket, baseline: Bracket, limit: number) =>
  compareToBaseline(result({ p95: run }), result({ p95: baseline }), { p95: limit })[0]!.verdict;

describe('percentiles: by their brackets', () => {
  it.each([
    // run bracket, baseline bracket, limit: verdict, and why in numbers
    [{ lo: 231, hi: 240 }, { lo: 200, hi: 209 }, 0.1, 'certain'], // 231 > 209 × 1.1 = 229.9: every exact pair is over 10 % apart
    [{ lo: 229, hi: 240 }, { lo: 200, hi: 209 }, 0.1, 'possible'], // 229 ≤ 229.9 (not certain), 240 > 200 × 1.1 = 220 (may be)
    [{ lo: 200, hi: 220 }, { lo: 200, hi: 209 }, 0.1, 'none'], // 220 ≤ 220: no exact pair is more than 10 % apart
    [{ lo: 150, hi: 400 }, { lo: 200, hi: 209 }, 0.1, 'possible'], // a wide bracket alone: never certain
    [{ lo: 100, hi: 110 }, { lo: 200, hi: 209 }, 0.1, 'none'], // faster
    [{ lo: 301, hi: 301 }, { lo: 200, hi: 200 }, 0.5, 'certain'], // exact (one runner): 301 > 300
    [{ lo: 300, hi: 300 }, { lo: 200, hi: 200 }, 0.5, 'none'], // exactly +50 % is within a +50 % limit
  ] as const)('%j against %j, limit %d: %s', (run, baseline, limit, verdict) => {
    expect(p95Verdict(run, baseline, limit)).toBe(verdict);
  });

  it('certain only when every exact pair exceeds the limit, none only when none does (fast-check, 3,000 cases)', () => {
    const bracket = fc
      .tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 5_000 }))
      .map(([lo, width]) => ({ lo: lo / 10, hi: (lo + width) / 10 }));
    fc.assert(
      fc.property(bracket, bracket, fc.integer({ min: 0, max: 100 }), (run, baseline, percent) => {
        const limit = percent / 100;
        const over = (x: number, y: number) => x > y * (1 + limit);
        // The extreme pairs decide: the run's lo against the baseline's hi is the least apart, hi against lo the most.
        const everyPairOver = over(run.lo, baseline.hi);
        const somePairOver = over(run.hi, baseline.lo);
        const verdict = p95Verdict(run, baseline, limit);
        expect(verdict).toBe(everyPairOver ? 'certain' : somePairOver ? 'possible' : 'none');
        // And on sampled interior pairs: certain ⇒ each pair over; none ⇒ no pair over.
        for (const f of [0, 0.3, 0.7, 1]) {
          const x = run.lo + f * (run.hi - run.lo);
          const y = baseline.hi - f * (baseline.hi - baseline.lo);
          if (verdict === 'certain') expect(over(x, y)).toBe(true);
          if (verdict === 'none') expect(over(x, y)).toBe(false);
        }
      }),
      { numRuns: 3_000, seed: 30_31 },
    );
  });

  it('a run or baseline without samples, or a baseline bracket at 0 ms: unknown, saying why', () => {
    const [noSamples] = compareToBaseline(result({ count: 0 }), result({}), { p95: 0.1 });
    expect(noSamples).toMatchObject({ verdict: 'unknown', why: 'no latency samples' });
    const [zero] = compareToBaseline(result({ p95: { lo: 5, hi: 6 } }), result({ p95: { lo: 0, hi: 1 } }), { p95: 0.1 });
    expect(zero).toMatchObject({ verdict: 'unknown', why: "the baseline's bracket starts at 0 ms" });
  });
});

describe('exact figures', () => {
  it.each([
    [56, 50, 0.1, 'certain'], // 56 > 55
    [55, 50, 0.1, 'none'], // 55 is exactly +10 %
    [40, 50, 0.1, 'none'],
  ] as const)('mean %d ms against %d ms, limit %d: %s', (mean, baseline, limit, verdict) => {
    expect(compareToBaseline(result({ mean }), result({ mean: baseline }), { mean: limit })[0]!.verdict).toBe(verdict);
  });

  it.each([
    [16, 10, 0.5, 'certain'], // 1.6 % against 1.0 %: +0.6 points > 0.5
    [15, 10, 0.5, 'none'], // +0.5 points exactly
    [0, 10, 0.5, 'none'],
  ] as const)('%d failed of 1,000 against %d, limit +%d points: %s', (failed, baselineFailed, limit, verdict) => {
    expect(compareToBaseline(result({ failed }), result({ failed: baselineFailed }), { errorRate: limit })[0]!.verdict).toBe(verdict);
  });

  it.each([
    [890, 1_000, 0.1, 'certain'], // 8.9 req/s against 10 req/s: more than 10 % fewer
    [900, 1_000, 0.1, 'none'], // 9.0: exactly 10 % fewer
    [1_500, 1_000, 0.1, 'none'], // more is never a regression
  ] as const)('%d requests in 100 s against %d, limit -%d: %s', (requests, baseline, limit, verdict) => {
    const [c] = compareToBaseline(result({ requests }), result({ requests: baseline }), { requestRate: limit });
    expect(c!.verdict).toBe(verdict);
    expect(c!.run).toBe(requests / 100);
  });

  it('request rate: requests over the longest runner duration; none without requests or duration', () => {
    expect(requestRate(result({ requests: 600, durationMs: 60_000 }))).toBe(10);
    expect(requestRate(result({ requests: 0 }))).toBeUndefined();
    expect(requestRate(result({ durationMs: 0 }))).toBeUndefined();
    expect(compareToBaseline(result({}), result({ requests: 0 }), { errorRate: 1, requestRate: 0.1 }).map((c) => [c.figure, c.verdict, c.why])).toEqual([
      ['errorRate', 'unknown', 'no requests'],
      ['requestRate', 'unknown', 'no requests'],
    ]);
  });
});

it('only the limited figures are compared, in a fixed order whatever the limits object says', () => {
  const limits = { requestRate: 0.1, p99: 0.2, errorRate: 1 };
  expect(compareToBaseline(result({}), result({}), limits).map((c) => [c.figure, c.verdict])).toEqual([
    ['p99', 'none'],
    ['errorRate', 'none'],
    ['requestRate', 'none'],
  ]);
  expect(compareToBaseline(result({}), result({}), {})).toEqual([]);
});

describe('figureChange: how far a figure moved, in its limit’s terms', () => {
  it.each([
    // figure, run, baseline: change, and why in numbers
    ['p95', { lo: 231, hi: 240 }, { lo: 200, hi: 210 }, { lo: 0.1, hi: 0.2 }], // 231/210 − 1 = 0.1 … 240/200 − 1 = 0.2
    ['p95', { lo: 150, hi: 400 }, { lo: 200, hi: 250 }, { lo: -0.4, hi: 1 }], // 150/250 − 1 … 400/200 − 1: it may have gone either way
    ['mean', 60, 50, { lo: 0.2, hi: 0.2 }], // exact: 20 % higher
    ['requestRate', 90, 100, { lo: -0.1, hi: -0.1 }], // 10 % fewer requests a second
    ['errorRate', 0.015, 0.01, { lo: 0.5, hi: 0.5 }], // 1.5 % against 1 %: half a point
  ] as const)('%s %j against %j: %j', (figure, run, baseline, change) => {
    const got = figureChange({ figure, verdict: 'none', run, baseline })!;
    expect(got.lo).toBeCloseTo(change.lo, 12);
    expect(got.hi).toBeCloseTo(change.hi, 12);
  });

  it('no change where it means nothing: an unknown figure, a baseline at 0', () => {
    expect(figureChange({ figure: 'p95', verdict: 'unknown', run: { lo: 1, hi: 2 }, baseline: { lo: 1, hi: 2 } })).toBeUndefined();
    expect(figureChange({ figure: 'p95', verdict: 'none', run: { lo: 1, hi: 2 }, baseline: { lo: 0, hi: 2 } })).toBeUndefined();
    expect(figureChange({ figure: 'mean', verdict: 'none', run: 3, baseline: 0 })).toBeUndefined();
    // A zero error rate is a baseline too: points are a difference, not a ratio.
    expect(figureChange({ figure: 'errorRate', verdict: 'certain', run: 0.02, baseline: 0 })).toEqual({ lo: 2, hi: 2 });
  });

  it('a certain regression’s change is wholly over its limit; a possible one’s straddles it (fast-check, 2,000 cases)', () => {
    const bracket = fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 2_000 })).map(([lo, w]) => ({ lo, hi: lo + w }));
    fc.assert(
      fc.property(bracket, bracket, fc.integer({ min: 1, max: 100 }), (run, baseline, percent) => {
        const limit = percent / 100;
        const compared = compareToBaseline(result({ p95: run }), result({ p95: baseline }), { p95: limit })[0]!;
        const change = figureChange(compared)!;
        if (compared.verdict === 'certain') expect(change.lo).toBeGreaterThan(limit - 1e-9);
        if (compared.verdict === 'possible') expect(change.lo <= limit + 1e-9 && change.hi > limit - 1e-9).toBe(true);
        if (compared.verdict === 'none') expect(change.hi).toBeLessThanOrEqual(limit + 1e-9);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('describeChange', () => {
  it.each([
    ['p95', { lo: 0.1, hi: 0.2 }, '+10.0 to +20.0 %'],
    ['p95', { lo: -0.031, hi: 0.14 }, '-3.1 to +14.0 %'],
    ['mean', { lo: 0.125, hi: 0.125 }, '+12.5 %'],
    ['requestRate', { lo: -0.1, hi: -0.1 }, '-10.0 %'],
    ['errorRate', { lo: 0.5, hi: 0.5 }, '+0.50 points'],
    ['mean', { lo: -0.00001, hi: 0.00001 }, '0.0 %'], // both round to nothing: one value, no sign
  ] as const)('%s %j: %s', (figure, change, text) => {
    expect(describeChange(figure, change)).toBe(text);
  });
});
