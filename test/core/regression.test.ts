/**
 * A run against its baseline (core/regression.ts): worked examples with the values stated here, and
 * for percentiles a property over every pair of exact values the two brackets allow: `certain` only
 * when every pair is apart by more than the limit, `none` only when no pair is, `possible` otherwise.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  baselineComparison,
  comparableResult,
  compareToBaseline,
  describeChange,
  describeLimit,
  figureChange,
  requestRate,
  type ComparedResult,
} from '../../lambdas/core/regression';
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
    // At the limit, with +50 % (exact in binary): against [200, 210] certain needs lo > 210 × 1.5 = 315,
    // possible needs hi > 200 × 1.5 = 300.
    [{ lo: 316, hi: 330 }, { lo: 200, hi: 210 }, 0.5, 'certain'], // lo one over 315
    [{ lo: 315, hi: 330 }, { lo: 200, hi: 210 }, 0.5, 'possible'], // lo exactly 315: the pair (315, 210) is +50 %, not more
    [{ lo: 314, hi: 330 }, { lo: 200, hi: 210 }, 0.5, 'possible'], // lo one under 315
    [{ lo: 310, hi: 320 }, { lo: 200, hi: 210 }, 0.5, 'possible'], // the bracket straddles 315
    [{ lo: 250, hi: 301 }, { lo: 200, hi: 210 }, 0.5, 'possible'], // hi one over 300
    [{ lo: 250, hi: 300 }, { lo: 200, hi: 210 }, 0.5, 'none'], // hi exactly 300: the pair (300, 200) is +50 %, not more
    [{ lo: 250, hi: 299 }, { lo: 200, hi: 210 }, 0.5, 'none'], // hi one under 300
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
    const hundred = { lo: 100, hi: 100 };
    expect(compareToBaseline(result({ count: 0 }), result({}), { p95: 0.1 })).toEqual([
      { figure: 'p95', verdict: 'unknown', why: 'no latency samples', run: hundred, baseline: hundred, limit: 0.1 },
    ]);
    expect(compareToBaseline(result({}), result({ count: 0 }), { p95: 0.1 })).toEqual([
      { figure: 'p95', verdict: 'unknown', why: 'no latency samples', run: hundred, baseline: hundred, limit: 0.1 },
    ]);
    expect(compareToBaseline(result({ p95: { lo: 5, hi: 6 } }), result({ p95: { lo: 0, hi: 1 } }), { p95: 0.1 })).toEqual([
      { figure: 'p95', verdict: 'unknown', why: "the baseline's bracket starts at 0 ms", run: { lo: 5, hi: 6 }, baseline: { lo: 0, hi: 1 }, limit: 0.1 },
    ]);
    // A baseline bracket from just above 0 is a ratio like any other: 5 > 0.5 × 1.1.
    expect(p95Verdict({ lo: 5, hi: 6 }, { lo: 0.5, hi: 1 }, 0.1)).toBe('certain');
  });

  it('each percentile compares its own brackets: p90, p95 and p99 of the same runs judged apart', () => {
    const run = { ...result({}), latency: { ...result({}).latency, p90: { lo: 120, hi: 130 }, p95: { lo: 200, hi: 260 }, p99: { lo: 400, hi: 420 } } };
    const baseline = { ...result({}), latency: { ...result({}).latency, p90: { lo: 100, hi: 100 }, p95: { lo: 200, hi: 200 }, p99: { lo: 400, hi: 400 } } };
    // p90: 120 > 100 × 1.1 = 110 (certain); p95: 200 ≤ 220 < 260 (possible); p99: 420 ≤ 440 (none).
    expect(compareToBaseline(run, baseline, { p90: 0.1, p95: 0.1, p99: 0.1 }).map((c) => [c.figure, c.verdict, c.run, c.baseline])).toEqual([
      ['p90', 'certain', { lo: 120, hi: 130 }, { lo: 100, hi: 100 }],
      ['p95', 'possible', { lo: 200, hi: 260 }, { lo: 200, hi: 200 }],
      ['p99', 'none', { lo: 400, hi: 420 }, { lo: 400, hi: 400 }],
    ]);
  });
});

describe('exact figures', () => {
  it.each([
    [56, 50, 0.1, 'certain'], // 56 > 55
    [55, 50, 0.1, 'none'], // 55 is exactly +10 %
    [40, 50, 0.1, 'none'],
    [75.5, 50, 0.5, 'certain'], // +50 % (exact in binary) of 50 is 75: just over
    [75, 50, 0.5, 'none'], // exactly at the limit
    [74.5, 50, 0.5, 'none'], // just under
  ] as const)('mean %d ms against %d ms, limit %d: %s', (mean, baseline, limit, verdict) => {
    expect(compareToBaseline(result({ mean }), result({ mean: baseline }), { mean: limit })[0]!.verdict).toBe(verdict);
  });

  it('mean: unknown without samples on either side or with a baseline mean of 0 ms, saying why', () => {
    const unknownMean = (run: ComparedResult, baseline: ComparedResult) => compareToBaseline(run, baseline, { mean: 0.1 });
    expect(unknownMean(result({ count: 0, mean: 60 }), result({}))).toEqual([
      { figure: 'mean', verdict: 'unknown', why: 'no latency samples', run: 60, baseline: 50, limit: 0.1 },
    ]);
    expect(unknownMean(result({ mean: 60 }), result({ count: 0 }))).toEqual([
      { figure: 'mean', verdict: 'unknown', why: 'no latency samples', run: 60, baseline: 50, limit: 0.1 },
    ]);
    expect(unknownMean(result({ mean: 60 }), result({ mean: 0 }))).toEqual([
      { figure: 'mean', verdict: 'unknown', why: "the baseline's value is 0", run: 60, baseline: 0, limit: 0.1 },
    ]);
    // A judged mean carries both values and no why.
    expect(unknownMean(result({ mean: 56 }), result({}))).toEqual([{ figure: 'mean', verdict: 'certain', run: 56, baseline: 50, limit: 0.1 }]);
  });

  it.each([
    [16, 10, 0.5, 'certain'], // 1.6 % against 1.0 %: +0.6 points > 0.5
    [15, 10, 0.5, 'none'], // +0.5 points exactly
    [0, 10, 0.5, 'none'],
    // At the limit with shares exact in binary: 50 % against 25 %, limit +25 points.
    [501, 250, 25, 'certain'], // +25.1 points
    [500, 250, 25, 'none'], // +25 points exactly
    [499, 250, 25, 'none'], // +24.9 points
    [10, 250, 25, 'none'], // fewer errors: a fall is never a regression
  ] as const)('%d failed of 1,000 against %d, limit +%d points: %s', (failed, baselineFailed, limit, verdict) => {
    expect(compareToBaseline(result({ failed }), result({ failed: baselineFailed }), { errorRate: limit })[0]!.verdict).toBe(verdict);
  });

  it.each([
    [890, 1_000, 0.1, 'certain'], // 8.9 req/s against 10 req/s: more than 10 % fewer
    [900, 1_000, 0.1, 'none'], // 9.0: exactly 10 % fewer
    [1_500, 1_000, 0.1, 'none'], // more is never a regression
    // At the limit with -50 % (exact in binary): 10 req/s against 10 req/s × 0.5 = 5 req/s.
    [499, 1_000, 0.5, 'certain'], // 4.99 req/s
    [500, 1_000, 0.5, 'none'], // 5 req/s: exactly 50 % fewer
    [501, 1_000, 0.5, 'none'], // 5.01 req/s
  ] as const)('%d requests in 100 s against %d, limit -%d: %s', (requests, baseline, limit, verdict) => {
    const [c] = compareToBaseline(result({ requests }), result({ requests: baseline }), { requestRate: limit });
    expect(c!.verdict).toBe(verdict);
    expect(c!.run).toBe(requests / 100);
  });

  it('request rate: requests over the longest runner duration; none without requests or duration', () => {
    expect(requestRate(result({ requests: 600, durationMs: 60_000 }))).toBe(10);
    expect(requestRate(result({ requests: 0 }))).toBeUndefined();
    expect(requestRate(result({ durationMs: 0 }))).toBeUndefined();
    // 1,000 requests in 100 s: 10 req/s; the side without requests shows 0, its error rate 0.
    expect(compareToBaseline(result({ failed: 20 }), result({ requests: 0 }), { errorRate: 1, requestRate: 0.1 })).toEqual([
      { figure: 'errorRate', verdict: 'unknown', why: 'no requests', run: 0.02, baseline: 0, limit: 1 },
      { figure: 'requestRate', verdict: 'unknown', why: 'no requests', run: 10, baseline: 0, limit: 0.1 },
    ]);
    expect(compareToBaseline(result({ requests: 0 }), result({ failed: 20 }), { errorRate: 1, requestRate: 0.1 })).toEqual([
      { figure: 'errorRate', verdict: 'unknown', why: 'no requests', run: 0, baseline: 0.02, limit: 1 },
      { figure: 'requestRate', verdict: 'unknown', why: 'no requests', run: 0, baseline: 10, limit: 0.1 },
    ]);
    // Requests without a duration: no rate, so unknown too (the error rate is still judged).
    expect(compareToBaseline(result({ durationMs: 0 }), result({}), { errorRate: 1, requestRate: 0.1 })).toEqual([
      { figure: 'errorRate', verdict: 'none', run: 0, baseline: 0, limit: 1 },
      { figure: 'requestRate', verdict: 'unknown', why: 'no requests', run: 0, baseline: 10, limit: 0.1 },
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
    ['errorRate', 0.03, 0.02, { lo: 1, hi: 1 }], // 3 % against 2 %: one point (a ratio would say +50 %)
    ['p95', { lo: 220, hi: 250 }, 200, { lo: 0.1, hi: 0.25 }], // an exact value against a bracket is a bracket of width 0: 220/200 − 1 … 250/200 − 1
    ['p95', 250, { lo: 200, hi: 250 }, { lo: 0, hi: 0.25 }], // 250/250 − 1 … 250/200 − 1
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
    ['mean', { lo: -0.00001, hi: -0.00001 }, '0.0 %'], // -0.001 % rounds to -0.0: no sign on nothing
    ['errorRate', { lo: -0.004, hi: 0.004 }, '0.00 points'],
    ['errorRate', { lo: -1.5, hi: -1.5 }, '-1.50 points'],
    ['requestRate', { lo: -0.2, hi: 0.05 }, '-20.0 to +5.0 %'],
  ] as const)('%s %j: %s', (figure, change, text) => {
    expect(describeChange(figure, change)).toBe(text);
  });
});

describe('describeLimit: a limit as the spec writes it', () => {
  it.each([
    ['p95', 0.1, '+10 %'],
    ['p99', 0.125, '+12.5 %'], // +12.5%
    ['mean', 0.29, '+29 %'], // +29% (0.29 × 100 is 28.999… in binary: the spec's two decimals are kept, not the noise)
    ['p90', 0.0007, '+0.07 %'], // +0.07%
    ['p95', 10, '+1000 %'], // the largest
    ['requestRate', 0.1, '-10 %'], // fewer requests a second
    ['requestRate', 0.9999, '-99.99 %'],
    ['errorRate', 0.5, '+0.5 points'], // points as written
    ['errorRate', 100, '+100 points'],
  ] as const)('%s %d: %s', (figure, limit, text) => {
    expect(describeLimit(figure, limit)).toBe(text);
  });
});

describe('comparableResult: a stored summary that holds what a comparison reads', () => {
  const bracket = { lo: 90, hi: 110 };
  const stored = {
    requests: 1_000,
    failedRequests: 5,
    errorRate: 0.005,
    durationMs: 60_000,
    latency: { count: 1_000, sum: 100_000, min: 2, max: 900, mean: 100, p90: bracket, p95: bracket, p99: bracket },
    iterations: 500,
  };

  it('a summary with every figure is read as it is', () => {
    expect(comparableResult(stored)).toBe(stored);
  });

  it.each([
    ['no summary', undefined],
    ['requests missing', { ...stored, requests: undefined }],
    ['errorRate a string', { ...stored, errorRate: '0.5 %' }],
    ['durationMs missing', { ...stored, durationMs: undefined }],
    ['latency missing', { ...stored, latency: undefined }],
    ['latency.count missing', { ...stored, latency: { ...stored.latency, count: undefined } }],
    ['latency.mean missing', { ...stored, latency: { ...stored.latency, mean: undefined } }],
    ['p90 missing', { ...stored, latency: { ...stored.latency, p90: undefined } }],
    ['p90 a number (not a bracket)', { ...stored, latency: { ...stored.latency, p90: 100 } }],
    ['p95 without lo', { ...stored, latency: { ...stored.latency, p95: { hi: 110 } } }],
    ['p95 with a string hi', { ...stored, latency: { ...stored.latency, p95: { lo: 90, hi: '110' } } }],
    ['p99 null', { ...stored, latency: { ...stored.latency, p99: null } }],
    ['p99 without hi', { ...stored, latency: { ...stored.latency, p99: { lo: 90 } } }],
  ] as const)('%s: undefined', (_, summary) => {
    expect(comparableResult(summary as Record<string, unknown> | undefined)).toBeUndefined();
  });
});

describe('baselineComparison: as the webhook, Slack, the API and the CLI show it', () => {
  it('the baseline run, each figure with its change (null where it means nothing)', () => {
    expect(
      baselineComparison({
        baseline: '01JBASE',
        figures: [
          { figure: 'p95', verdict: 'certain', run: { lo: 300, hi: 330 }, baseline: { lo: 200, hi: 220 }, limit: 0.1 },
          { figure: 'errorRate', verdict: 'none', run: 0.02, baseline: 0.01, limit: 2 },
          { figure: 'mean', verdict: 'unknown', run: 60, baseline: 50, limit: 0.1, why: 'no latency samples' },
        ],
      }),
    ).toEqual({
      runId: '01JBASE',
      none: null,
      figures: [
        // 300/220 − 1 = 0.3636… to 330/200 − 1 = 0.65
        {
          figure: 'p95',
          verdict: 'certain',
          run: { lo: 300, hi: 330 },
          baseline: { lo: 200, hi: 220 },
          change: { lo: 300 / 220 - 1, hi: 330 / 200 - 1 },
          limit: 0.1,
        },
        { figure: 'errorRate', verdict: 'none', run: 0.02, baseline: 0.01, change: { lo: 1, hi: 1 }, limit: 2 },
        { figure: 'mean', verdict: 'unknown', run: 60, baseline: 50, change: null, limit: 0.1 },
      ],
    });
  });

  it('no usable baseline: runId null and why', () => {
    expect(baselineComparison({ figures: [], none: 'no earlier SUCCEEDED run named nightly' })).toEqual({
      runId: null,
      none: 'no earlier SUCCEEDED run named nightly',
      figures: [],
    });
  });
});
