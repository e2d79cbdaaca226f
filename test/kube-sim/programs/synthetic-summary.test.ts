import { describe, expect, it } from 'vitest';
import { parseSummaryFromLog, formatSummaryLine, runnerSummarySchema } from '../../../lambdas/core/summary';
import { parseSegment } from '../../../local/kube-sim/programs/k6-argv';
import { syntheticSummary, type SyntheticRun } from '../../../local/kube-sim/programs/synthetic-summary';

function run(overrides: Partial<SyntheticRun> = {}): SyntheticRun {
  return {
    engine: 'k6',
    runId: 'run1',
    runner: 0,
    totalVUs: 30,
    segment: parseSegment('0:1')!,
    elapsedMs: 600_000,
    exitCode: 0,
    thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<500' }],
    ...overrides,
  };
}

describe('syntheticSummary', () => {
  it('is valid for the summary schema, marked simulated, and survives the log line round trip', () => {
    const summary = syntheticSummary(run());
    expect(runnerSummarySchema.parse(summary)).toEqual(summary);
    expect(summary.simulated).toBe(true);
    expect(parseSummaryFromLog(`noise\n${formatSummaryLine(summary)}\n`)).toEqual(summary);
  });

  it('is deterministic per (run id, runner) and differs across runs', () => {
    expect(syntheticSummary(run())).toEqual(syntheticSummary(run()));
    expect(syntheticSummary(run({ runId: 'run2' }))).not.toEqual(syntheticSummary(run()));
  });

  it('has requests proportional to VUs × duration (about one per VU-second)', () => {
    const base = syntheticSummary(run()).requests.count;
    expect(base).toBeGreaterThan(30 * 600 * 0.8 - 1);
    expect(base).toBeLessThan(30 * 600 * 1.2 + 1);
    expect(syntheticSummary(run({ totalVUs: 60 })).requests.count).toBeCloseTo(2 * base, -1);
    expect(syntheticSummary(run({ elapsedMs: 300_000 })).requests.count).toBeCloseTo(base / 2, -1);
  });

  it('orders the latency trend: min ≤ p90 ≤ p95 ≤ p99 ≤ max, mean within [min, max]', () => {
    for (let runner = 0; runner < 20; runner++) {
      const { latency } = syntheticSummary(run({ runner, runId: `r${runner}` }));
      expect(latency.min).toBeLessThanOrEqual(latency.p90);
      expect(latency.p90).toBeLessThanOrEqual(latency.p95);
      expect(latency.p95).toBeLessThanOrEqual(latency.p99);
      expect(latency.p99).toBeLessThanOrEqual(latency.max);
      const mean = latency.sum / latency.count;
      expect(mean).toBeGreaterThanOrEqual(latency.min);
      expect(mean).toBeLessThanOrEqual(latency.max);
    }
  });

  it('splits the whole across execution segments: 3 runners add up to the single-runner totals', () => {
    const whole = syntheticSummary(run());
    const parts = [0, 1, 2].map((i) => syntheticSummary(run({ runner: i, segment: parseSegment(`${i}/3:${i + 1}/3`)! })));
    expect(parts.reduce((n, p) => n + p.requests.count, 0)).toBe(whole.requests.count);
    expect(parts.reduce((n, p) => n + p.requests.failed, 0)).toBe(whole.requests.failed);
  });

  it('thresholds are ok unless the exit code is 99', () => {
    expect(syntheticSummary(run()).thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<500', ok: true }]);
    expect(syntheticSummary(run({ exitCode: 99 })).thresholds.every((t) => !t.ok)).toBe(true);
  });

  it('no time, no requests: an all-zero trend', () => {
    const summary = syntheticSummary(run({ elapsedMs: 0 }));
    expect(summary.requests).toEqual({ count: 0, failed: 0 });
    expect(summary.latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 });
  });
});
