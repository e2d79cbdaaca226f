import { describe, expect, it } from 'vitest';
import { aggregateResults, storedRunResult, type RunResult } from '../../lambdas/core/aggregate';
import type { RunnerSummary } from '../../lambdas/core/summary';

type Latency = RunnerSummary['latency'];

/** k6's percentile of sorted samples (TrendSink.P): linear interpolation between neighbouring order statistics. */
function k6Percentile(sorted: number[], q: number): number {
  if (sorted.length === 1) return sorted[0]!;
  const i = q * (sorted.length - 1);
  const lower = Math.floor(i);
  const upper = Math.ceil(i);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (i - lower);
}

/** The levels loadplane asks k6 for, as k6 parses them: p(50)…p(99), p(99.5), p(99.9). */
const K6_LEVELS = [...Array.from({ length: 50 }, (_, k) => (50 + k) / 100), 99.5 / 100, 99.9 / 100];

/** A k6 runner's latency as k6 would report these samples, its percentile grid included. */
function k6Latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    sum: sorted.reduce((a, b) => a + b, 0),
    min: sorted[0]!,
    max: sorted.at(-1)!,
    p90: k6Percentile(sorted, 0.9),
    p95: k6Percentile(sorted, 0.95),
    p99: k6Percentile(sorted, 0.99),
    quantiles: K6_LEVELS.map((q) => ({ q, value: k6Percentile(sorted, q) })),
    relativeError: 0,
  };
}

/** `count` values evenly spread over [from, to]. */
function spread(count: number, from: number, to: number): number[] {
  return Array.from({ length: count }, (_, i) => from + ((to - from) * i) / Math.max(1, count - 1));
}

const LEVELS = { p90: 0.9, p95: 0.95, p99: 0.99 } as const;

function runner(index: number, overrides: Partial<Omit<RunnerSummary, 'latency'>> & { latency?: Partial<Latency> } = {}): RunnerSummary {
  const { latency, ...rest } = overrides;
  return {
    engine: 'k6',
    runner: index,
    exitCode: 0,
    simulated: false,
    durationMs: 30_000,
    requests: { count: 100, failed: 0 },
    iterations: 50,
    latency: { count: 100, sum: 10_000, min: 10, max: 400, p90: 150, p95: 200, p99: 300, quantiles: [], relativeError: 0, ...latency },
    dataReceivedBytes: 1000,
    dataSentBytes: 100,
    thresholds: [],
    ...rest,
  };
}

/** Every numeric value found under a key matching `key`, anywhere in `value`. */
function valuesUnder(value: unknown, key: RegExp): number[] {
  if (Array.isArray(value)) return value.flatMap((v) => valuesUnder(v, key));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => (key.test(k) && typeof v === 'number' ? [v] : valuesUnder(v, key)));
}

describe('aggregateResults', () => {
  it('never averages percentiles: each bracket holds the run’s exact percentile, tighter than the worst runner’s; per-runner values are kept', () => {
    // Runner 0: 1,000 samples over 1..1,000 ms; runner 1: 1,000 over 1,001..2,000 ms. Pooled: 1..2,000.
    const samples = [spread(1000, 1, 1000), spread(1000, 1001, 2000)];
    const result = aggregateResults(
      2,
      samples.map((s, i) => runner(i, { latency: k6Latency(s) })),
    );
    const pooled = samples.flat().sort((a, b) => a - b);
    for (const [key, q] of Object.entries(LEVELS)) {
      const exact = k6Percentile(pooled, q);
      const { lo, hi } = result.latency[key as keyof typeof LEVELS];
      expect(lo, key).toBeLessThanOrEqual(exact);
      expect(hi, key).toBeGreaterThanOrEqual(exact);
      expect(hi - lo, `${key} bracket [${lo}, ${hi}]`).toBeLessThan(exact / 200);
      const perRunner = result.runners.map((r) => r.latency[key as keyof typeof LEVELS]);
      // Neither the mean of the runners' percentiles nor the worst runner's is in it.
      const meanOfRunners = (perRunner[0]! + perRunner[1]!) / 2;
      expect(meanOfRunners < lo || meanOfRunners > hi, `${key}: mean ${meanOfRunners} outside [${lo}, ${hi}]`).toBe(true);
      expect(Math.max(...perRunner), key).toBeGreaterThan(hi);
    }
    expect(result.latency.p95.lo).toBeGreaterThan(1890); // the exact p95 is 1,900.05; the mean of the runners' 1,450
    expect(result.runners.map((r) => r.latency.p95)).toEqual([k6Percentile(samples[0]!, 0.95), k6Percentile(samples[1]!, 0.95)]);
    // No p95 number anywhere in the result is anything but a runner's own value: the run's is a bracket.
    expect(new Set(valuesUnder(result, /p95/i))).toEqual(new Set(result.runners.map((r) => r.latency.p95)));
    expect(Object.keys(result.latency.p95).sort()).toEqual(['hi', 'lo']);
  });

  it('one runner: each bracket is its own percentile, exactly', () => {
    const latency = k6Latency(spread(777, 3, 250));
    const result = aggregateResults(1, [runner(0, { latency })]);
    expect(result.latency.p90).toEqual({ lo: latency.p90, hi: latency.p90 });
    expect(result.latency.p95).toEqual({ lo: latency.p95, hi: latency.p95 });
    expect(result.latency.p99).toEqual({ lo: latency.p99, hi: latency.p99 });
  });

  it('runners without a percentile grid: the brackets come from count, min and max alone', () => {
    // Runner 0: 1,000 samples in [5, 50] ms; runner 1: 10 samples in [900, 1,200] ms. 1,010 samples, so
    // the run's p90..p99 (ranks 908..999) lie among runner 0's: between its min and max, whatever its grid.
    const samples = [spread(1000, 5, 50), spread(10, 900, 1200)];
    const bare = samples.map((s, i) => runner(i, { latency: { ...k6Latency(s), quantiles: [] } }));
    const result = aggregateResults(2, bare);
    const pooled = samples.flat().sort((a, b) => a - b);
    expect(result.latency.p90).toEqual({ lo: 5, hi: 50 });
    expect(result.latency.p95).toEqual({ lo: 5, hi: 50 });
    // p99 lies between the ranks 998 and 999 of 1,010: at most 999 samples are below 50 ms, so w[999] ≥ 50
    // and the interpolation 91 % of the way from w[998] ≥ 5 to it is at least 5 + 0.91 × 45.
    const f = 0.99 * 1009 - 998;
    expect(result.latency.p99.lo).toBeCloseTo(5 + 45 * f, 9);
    expect(result.latency.p99.hi).toBe(50);
    for (const [key, q] of Object.entries(LEVELS)) {
      const exact = k6Percentile(pooled, q);
      expect(result.latency[key as keyof typeof LEVELS].lo, key).toBeLessThanOrEqual(exact);
      expect(result.latency[key as keyof typeof LEVELS].hi, key).toBeGreaterThanOrEqual(exact);
    }
    // Runner 1's p95 (1,185 ms), the old "worst runner" bound, is far above the run's.
    expect(bare[1]!.latency.p95).toBeGreaterThan(1000);
    // With samples of every runner on both sides of the level, count, min and max say no more than [min, max].
    expect(aggregateResults(2, [runner(0), runner(1)]).latency.p95).toEqual({ lo: 10, hi: 400 });
    // A grid makes it tight.
    const gridded = aggregateResults(
      2,
      samples.map((s, i) => runner(i, { latency: k6Latency(s) })),
    );
    expect(gridded.latency.p95.hi - gridded.latency.p95.lo).toBeLessThan(1);
  });

  it('uses only the levels a runner’s grid holds: a p90 standing in for one Gatling did not print is not taken for it', () => {
    // Gatling prints p50, p75, p95, p99 (nearest-rank order statistics, with a relative error); its p90 field is max.
    const sorted = spread(1000, 1, 1000);
    const nearestRank = (q: number) => sorted[Math.ceil(q * sorted.length) - 1]!;
    const latency: Latency = {
      ...k6Latency(sorted),
      p90: 1000,
      quantiles: [0.5, 0.75, 0.95, 0.99].map((q) => ({ q, value: nearestRank(q) })),
      relativeError: 0.01,
    };
    const result = aggregateResults(1, [runner(0, { engine: 'gatling', latency })]);
    const exact = k6Percentile(sorted, 0.9);
    expect(result.latency.p90.lo).toBeLessThanOrEqual(exact);
    expect(result.latency.p90.hi).toBeGreaterThanOrEqual(exact);
    expect(result.latency.p90.hi).toBeLessThanOrEqual(nearestRank(0.95) * 1.01 + 1e-9);
    expect(result.latency.p90.hi).toBeLessThan(latency.p90);
  });

  it('weights the mean by sample count, which differs from the mean of means on uneven runners', () => {
    // Runner 0: 1,000 samples averaging 10 ms; runner 1: 10 samples averaging 1,000 ms.
    const result = aggregateResults(2, [
      runner(0, { latency: { count: 1000, sum: 10_000, min: 5, max: 50 } }),
      runner(1, { latency: { count: 10, sum: 10_000, min: 900, max: 1200 } }),
    ]);
    const meanOfMeans = (10 + 1000) / 2;
    expect(result.latency.mean).toBe(20_000 / 1010);
    expect(result.latency.mean).not.toBeCloseTo(meanOfMeans, 0);
    expect(result.latency.count).toBe(1010);
    expect(result.latency.sum).toBe(20_000);
    expect(result.latency.min).toBe(5);
    expect(result.latency.max).toBe(1200);
  });

  it.each([1, 4, 20, 200])('sums exactly over %i runners', (n) => {
    // Runner i: 1000 + i requests, i failed, 10 + i iterations, 3 × (i + 1) samples each i + 1 ms.
    const summaries = Array.from({ length: n }, (_, i) =>
      runner(i, {
        requests: { count: 1000 + i, failed: i },
        iterations: 10 + i,
        dataReceivedBytes: 4096 * (i + 1),
        dataSentBytes: 512 + i,
        durationMs: 60_000 + i,
        latency: { count: 3 * (i + 1), sum: 3 * (i + 1) * (i + 1), min: i + 1, max: 2 * (i + 1) },
      }),
    );
    const result = aggregateResults(n, summaries);
    const triangle = (n * (n - 1)) / 2; // 0 + 1 + … + (n - 1)
    expect(result.requests).toBe(1000 * n + triangle);
    expect(result.failedRequests).toBe(triangle);
    expect(result.iterations).toBe(10 * n + triangle);
    expect(result.dataReceivedBytes).toBe((4096 * n * (n + 1)) / 2);
    expect(result.dataSentBytes).toBe(512 * n + triangle);
    expect(result.durationMs).toBe(60_000 + n - 1);
    expect(result.errorRate).toBe(triangle / (1000 * n + triangle));
    const samples = (3 * n * (n + 1)) / 2;
    const sumOfSquares = (n * (n + 1) * (2 * n + 1)) / 6;
    expect(result.latency.count).toBe(samples);
    expect(result.latency.sum).toBe(3 * sumOfSquares);
    expect(result.latency.mean).toBe((3 * sumOfSquares) / samples);
    expect(result.latency.min).toBe(1);
    expect(result.latency.max).toBe(2 * n);
    expect(result.runners).toHaveLength(n);
    expect(result.missingRunners).toEqual([]);
  });

  it('names the runners that produced no result', () => {
    const result = aggregateResults(5, [runner(0), runner(2), runner(4)]);
    expect(result.missingRunners).toEqual([1, 3]);
    expect(result.requests).toBe(300);
  });

  it('keeps the last summary of a runner that reported twice and notes it', () => {
    const result = aggregateResults(2, [
      runner(1, { exitCode: 137, requests: { count: 5, failed: 5 } }),
      runner(0),
      runner(1, { requests: { count: 100, failed: 1 } }),
    ]);
    expect(result.duplicateRunners).toEqual([1]);
    expect(result.runners.map((r) => [r.runner, r.exitCode])).toEqual([
      [0, 0],
      [1, 0],
    ]);
    expect(result.requests).toBe(200);
    expect(result.failedRequests).toBe(1);
  });

  it('counts nothing from runners that were never launched, and lists them', () => {
    const result = aggregateResults(1, [runner(0), runner(3, { requests: { count: 999, failed: 0 } })]);
    expect(result.unexpectedRunners).toEqual([3]);
    expect(result.runners.map((r) => r.runner)).toEqual([0]);
    expect(result.requests).toBe(100);
  });

  it('a runner index is expected from 0 to expectedRunners − 1: the index expectedRunners is the first unexpected one', () => {
    const result = aggregateResults(3, [runner(0), runner(2), runner(3, { requests: { count: 7, failed: 7 } })]);
    expect(result.runners.map((r) => r.runner)).toEqual([0, 2]);
    expect(result.unexpectedRunners).toEqual([3]);
    expect(result.missingRunners).toEqual([1]);
    expect(result.requests).toBe(200);
    expect(result.failedRequests).toBe(0);
  });

  it('lists duplicate and unexpected indexes once each, in ascending order, whatever order they came in', () => {
    const result = aggregateResults(3, [runner(2), runner(9), runner(1), runner(4), runner(2), runner(1), runner(9), runner(1), runner(10)]);
    expect(result.duplicateRunners).toEqual([1, 2]);
    expect(result.unexpectedRunners).toEqual([4, 9, 10]);
    expect(result.runners.map((r) => r.runner)).toEqual([1, 2]);
    expect(result.missingRunners).toEqual([0]);
  });

  it('ignores runners without samples for min, max and percentiles', () => {
    const empty = runner(1, { requests: { count: 0, failed: 0 }, latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 } });
    const result = aggregateResults(2, [runner(0, { latency: { min: 12 } }), empty]);
    expect(result.latency.min).toBe(12);
    expect(result.latency.count).toBe(100);
    // The empty runner's zeros pull no bracket down: runner 0 alone decides.
    const latency = k6Latency(spread(100, 12, 400));
    const alone = aggregateResults(2, [runner(0, { latency }), empty]).latency;
    expect([alone.p90, alone.p95, alone.p99]).toEqual([latency.p90, latency.p95, latency.p99].map((v) => ({ lo: v, hi: v })));
  });

  it('reports zeros, not NaN, when nothing was requested', () => {
    const empty = runner(0, { requests: { count: 0, failed: 0 }, latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 } });
    const result = aggregateResults(1, [empty]);
    expect(result.errorRate).toBe(0);
    const zero = { lo: 0, hi: 0 };
    expect(result.latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, mean: 0, p90: zero, p95: zero, p99: zero });
    expect(aggregateResults(0, []).latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, mean: 0, p90: zero, p95: zero, p99: zero });
    expect(aggregateResults(2, []).missingRunners).toEqual([0, 1]);
  });

  it('marks the result simulated when any runner was', () => {
    expect(aggregateResults(2, [runner(0), runner(1)]).simulated).toBe(false);
    expect(aggregateResults(2, [runner(0), runner(1, { simulated: true })]).simulated).toBe(true);
  });
});

describe('storedRunResult', () => {
  it('reads a result recorded before brackets (the worst runner’s p90/p95/p99 as upper bounds) as [min, that bound]', () => {
    const current = aggregateResults(1, [runner(0, {})]);
    const { p90: _p90, p95: _p95, p99: _p99, ...rest } = current.latency;
    const legacy = { ...current, latency: { ...rest, p90UpperBound: 70, p95UpperBound: 90, p99UpperBound: 99 } } as unknown as RunResult;
    expect(storedRunResult(legacy).latency).toEqual({ ...rest, p90: { lo: rest.min, hi: 70 }, p95: { lo: rest.min, hi: 90 }, p99: { lo: rest.min, hi: 99 } });
    expect(storedRunResult(current)).toBe(current);
  });

  it('reads such a result of a run without samples (min, max and the bounds all 0, as it was written) as [0, 0]', () => {
    const empty = runner(0, { requests: { count: 0, failed: 0 }, latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 } });
    const { p90: _p90, p95: _p95, p99: _p99, ...rest } = aggregateResults(1, [empty]).latency;
    const legacy = { ...aggregateResults(1, [empty]), latency: { ...rest, p90UpperBound: 0, p95UpperBound: 0, p99UpperBound: 0 } } as unknown as RunResult;
    const zero = { lo: 0, hi: 0 };
    expect(storedRunResult(legacy).latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, mean: 0, p90: zero, p95: zero, p99: zero });
  });
});
