import { describe, expect, it } from 'vitest';
import { parseSegment } from '../../../local/kube-sim/programs/k6-argv';
import { syntheticSummary, type SyntheticRun } from '../../../local/kube-sim/programs/synthetic-summary';

function run(overrides: Partial<SyntheticRun> = {}): SyntheticRun {
  return {
    runId: 'run1',
    runner: 0,
    totalVUs: 30,
    segment: parseSegment('0:1')!,
    elapsedMs: 600_000,
    thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<500' }],
    ...overrides,
  };
}

describe('syntheticSummary', () => {
  it('has a latency quantile function through its own points: min at 0, median at 50, p95 at 95, max at 100, never decreasing', () => {
    const { latency } = syntheticSummary(run());
    expect([latency.quantile(0), latency.quantile(50), latency.quantile(95), latency.quantile(100)]).toEqual([
      latency.min,
      latency.median,
      latency.p95,
      latency.max,
    ]);
    const grid = Array.from({ length: 101 }, (_, p) => latency.quantile(p));
    expect(grid.every((v, i) => i === 0 || v >= grid[i - 1]!)).toBe(true);
  });

  it('is deterministic per (run id, runner) and differs across runs', () => {
    const numbers = (r: SyntheticRun) => JSON.stringify(syntheticSummary(r));
    expect(numbers(run())).toEqual(numbers(run()));
    expect(numbers(run({ runId: 'run2' }))).not.toEqual(numbers(run()));
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

  it('thresholds follow from the simulated numbers; a crossed one makes the exit code 99', () => {
    const passing = syntheticSummary(run());
    expect(passing.thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<500', ok: true }]);
    expect(passing.exitCode).toBe(0);

    const thresholds = [
      { metric: 'http_req_failed', expression: 'rate<0.01' },
      { metric: 'http_req_duration', expression: 'p(95)<500' },
      { metric: 'http_reqs', expression: 'count>1' },
    ];
    const failing = syntheticSummary(run({ failureRate: 0.024, thresholds }));
    expect(failing.requests.failed / failing.requests.count).toBeCloseTo(0.024, 3);
    expect(failing.thresholds.map((t) => t.ok)).toEqual([false, true, true]);
    expect(failing.exitCode).toBe(99);

    // Each aggregation and operator, against this runner's own numbers.
    const { latency, requests } = passing;
    const check = (metric: string, expression: string) => syntheticSummary(run({ thresholds: [{ metric, expression }] })).thresholds[0]!.ok;
    expect(check('http_req_duration', `p(95)<=${latency.p95}`)).toBe(true);
    expect(check('http_req_duration', `p(95) < ${latency.p95}`)).toBe(false);
    expect(check('http_req_duration', `max>=${latency.max}`)).toBe(true);
    expect(check('http_req_duration', `min>${latency.min}`)).toBe(false);
    expect(check('http_req_duration', `avg<${latency.sum / latency.count - 0.01}`)).toBe(false);
    expect(check('http_req_duration', `med<${latency.p90}`)).toBe(true);
    expect(check('http_req_duration', `p(99.9)<=${latency.max}`)).toBe(true);
    expect(check('http_reqs', `count==${requests.count}`)).toBe(true);
    expect(check('http_reqs', `count===${requests.count}`)).toBe(true);
    expect(check('http_reqs', `count!=${requests.count}`)).toBe(false);
    expect(check('http_reqs', `rate>${requests.count / 600 + 1}`)).toBe(false);
    expect(check('vus', 'value>0')).toBe(false); // no VUs given to this runner
    expect(check('my_custom_trend', 'p(95)<1')).toBe(true); // custom metrics are not simulated
  });

  it('an exit-code fault wins: 99 crosses every threshold, another code is kept as is', () => {
    expect(syntheticSummary(run({ forcedExitCode: 99 })).thresholds.every((t) => !t.ok)).toBe(true);
    expect(syntheticSummary(run({ forcedExitCode: 99 })).exitCode).toBe(99);
    expect(
      syntheticSummary(run({ forcedExitCode: 108, failureRate: 0.5, thresholds: [{ metric: 'http_req_failed', expression: 'rate<0.01' }] })).exitCode,
    ).toBe(108);
  });

  it('no time, no requests: an all-zero trend', () => {
    const summary = syntheticSummary(run({ elapsedMs: 0 }));
    expect(summary.requests).toEqual({ count: 0, failed: 0 });
    expect(summary.latency).toMatchObject({ count: 0, sum: 0, min: 0, median: 0, max: 0, p90: 0, p95: 0, p99: 0 });
    expect(summary.latency.quantile(99)).toBe(0);
  });
});
