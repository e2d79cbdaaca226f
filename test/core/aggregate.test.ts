import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import type { RunnerSummary } from '../../lambdas/core/summary';

type Latency = RunnerSummary['latency'];

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
    latency: { count: 100, sum: 10_000, min: 10, max: 400, p90: 150, p95: 200, p99: 300, ...latency },
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
  it('never averages percentiles: the worst runner is the upper bound, per-runner values are kept', () => {
    const result = aggregateResults(2, [
      runner(0, { latency: { p90: 80, p95: 100, p99: 150 } }),
      runner(1, { latency: { p90: 700, p95: 900, p99: 990 } }),
    ]);
    expect(result.latency.p95UpperBound).toBe(900);
    expect(result.latency.p90UpperBound).toBe(700);
    expect(result.latency.p99UpperBound).toBe(990);
    expect(result.runners.map((r) => r.latency.p95)).toEqual([100, 900]);
    // No p95 anywhere in the result is anything but a runner's own value (the average would be 500).
    expect(new Set(valuesUnder(result, /p95/i))).toEqual(new Set([100, 900]));
    expect(Object.keys(result.latency)).not.toContain('p95');
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

  it('ignores runners without samples for min, max and percentiles', () => {
    const empty = runner(1, { requests: { count: 0, failed: 0 }, latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 } });
    const result = aggregateResults(2, [runner(0, { latency: { min: 12 } }), empty]);
    expect(result.latency.min).toBe(12);
    expect(result.latency.count).toBe(100);
  });

  it('reports zeros, not NaN, when nothing was requested', () => {
    const empty = runner(0, { requests: { count: 0, failed: 0 }, latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 } });
    const result = aggregateResults(1, [empty]);
    expect(result.errorRate).toBe(0);
    expect(result.latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, mean: 0, p90UpperBound: 0, p95UpperBound: 0, p99UpperBound: 0 });
    expect(aggregateResults(2, []).missingRunners).toEqual([0, 1]);
  });

  it('marks the result simulated when any runner was', () => {
    expect(aggregateResults(2, [runner(0), runner(1)]).simulated).toBe(false);
    expect(aggregateResults(2, [runner(0), runner(1, { simulated: true })]).simulated).toBe(true);
  });
});
