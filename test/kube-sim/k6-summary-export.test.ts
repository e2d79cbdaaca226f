/**
 * kube-sim's simulated k6 summary export: the same keys and value types as a real k6 export (compared
 * with a fixture in k6's shape), and Collect's converter reads it back to the synthetic numbers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULT_LINE_PREFIX } from '../../lambdas/core/runner-contract';
import { runnerSummarySchema } from '../../lambdas/core/summary';
import { k6SummaryFlags, parseK6ResultLine, runnerSummaryFromK6Export } from '../../lambdas/engines/k6/summary-export';
import {
  interpolatedQuantile,
  K6_DEFAULT_TREND_STATS,
  simulatedK6Export,
  trendStatsFromArgv,
  trendStatsProblem,
  type SimulatedK6Metrics,
} from '../../local/kube-sim/programs/k6-summary-export';

const quantile = interpolatedQuantile([
  [0, 12.25],
  [50, 48],
  [90, 88.5],
  [95, 120.25],
  [99, 310.5],
  [100, 640.75],
]);

const input: SimulatedK6Metrics = {
  requests: 1200,
  failedRequests: 20,
  iterations: 600,
  dataReceivedBytes: 4_843_200,
  dataSentBytes: 103_200,
  vus: 20,
  latencyCount: 1200,
  latencySum: 63_000,
  latencyQuantile: quantile,
  checks: { passes: 1180, fails: 20 },
};

const RUN_ARGV = ['k6', 'run', '/loadplane/scripts/test.js', '--paused', ...k6SummaryFlags('/tmp/loadplane-summary.json')];
const thresholds = [
  { metric: 'http_req_duration', expression: 'p(95)<100', ok: false },
  { metric: 'http_req_failed', expression: 'rate<0.05', ok: true },
  { metric: 'http_req_duration{status:200}', expression: 'p(99)<500', ok: true },
];
const facts = { runner: 1, exitCode: 99, durationMs: 1, simulated: true };

/** What the runner script prints: the export file (k6 pretty-prints it) with CR/LF removed. */
function resultLine(exported: object): string {
  return RESULT_LINE_PREFIX + JSON.stringify(exported, null, 4).replace(/[\r\n]/g, '');
}

describe('trend stats from the k6 argv', () => {
  it("k6's default when the flag is absent", () => {
    expect(trendStatsFromArgv(['k6', 'run', 'test.js'])).toEqual(['avg', 'min', 'med', 'max', 'p(90)', 'p(95)']);
    expect(K6_DEFAULT_TREND_STATS).toEqual(['avg', 'min', 'med', 'max', 'p(90)', 'p(95)']);
  });

  it("loadplane's list; a user's earlier flag is kept and ours appended (pflag StringSlice)", () => {
    const ours = trendStatsFromArgv(RUN_ARGV);
    expect(ours).toHaveLength(57);
    expect(ours.slice(0, 6)).toEqual(['avg', 'min', 'med', 'max', 'count', 'p(50)']);
    expect(trendStatsFromArgv(['k6', 'run', '--summary-trend-stats', 'avg,p(99.99)', ...RUN_ARGV.slice(2)])).toEqual(['avg', 'p(99.99)', ...ours]);
    expect(trendStatsFromArgv(['k6', 'run', '--summary-trend-stats='])).toEqual([]);
  });

  it("k6's refusals", () => {
    expect(trendStatsProblem(trendStatsFromArgv(RUN_ARGV))).toBeUndefined();
    expect(trendStatsProblem(['avg', ' p(95)'])).toBe("invalid trend stat ' p(95)', unknown format");
    expect(trendStatsProblem(['p(101)'])).toBe("invalid percentile trend stat value 'p(101)', provide a number between 0 and 100");
    expect(() => simulatedK6Export(input, ['avg', 'mean'], [], 30_000)).toThrow("invalid trend stat 'mean', unknown format");
  });
});

describe('simulatedK6Export', () => {
  const exported = simulatedK6Export(input, trendStatsFromArgv(RUN_ARGV), thresholds, 30_000);

  it('round-trips through the result line and Collect’s converter', () => {
    const parsed = parseK6ResultLine(`some k6 output\n${resultLine(exported)}\n`);
    expect(parsed).toEqual(exported);
    const summary = runnerSummaryFromK6Export(parsed, facts);
    expect(runnerSummarySchema.parse(summary)).toEqual(summary);
    const { latency, ...rest } = summary;
    expect(rest).toEqual({
      engine: 'k6',
      runner: 1,
      exitCode: 99,
      simulated: true,
      durationMs: 30_000, // from the counters' rates
      requests: { count: 1200, failed: 20 },
      iterations: 600,
      droppedIterations: 0, // no dropped_iterations metric: k6 adds it only when an iteration is dropped
      vusMax: 20, // vus_max, as the input's 20 VUs
      dataReceivedBytes: 4_843_200,
      dataSentBytes: 103_200,
      thresholds: [
        { metric: 'http_req_duration', expression: 'p(95)<100', ok: false },
        { metric: 'http_req_duration{status:200}', expression: 'p(99)<500', ok: true },
        { metric: 'http_req_failed', expression: 'rate<0.05', ok: true },
      ],
    });
    expect(latency).toMatchObject({ count: 1200, min: 12.25, max: 640.75, p90: 88.5, p95: 120.25, p99: 310.5, relativeError: 0 });
    expect(latency.sum).toBeCloseTo(63_000, 9);
  });

  it('a quantile grid p50…p99, p99.5, p99.9 from the quantile function, monotonic', () => {
    const { quantiles } = runnerSummaryFromK6Export(exported, facts).latency;
    expect(quantiles).toHaveLength(52);
    expect(quantiles[0]).toEqual({ q: 0.5, value: 48 });
    expect(quantiles).toContainEqual({ q: 0.95, value: 120.25 });
    expect(quantiles.at(-1)).toEqual({ q: 99.9 / 100, value: quantile(99.9) });
    for (let i = 1; i < quantiles.length; i++) {
      expect(quantiles[i]!.q).toBeGreaterThan(quantiles[i - 1]!.q);
      expect(quantiles[i]!.value).toBeGreaterThanOrEqual(quantiles[i - 1]!.value);
    }
  });

  it('has the keys and value types of a real k6 export of the same kind of run', () => {
    const real = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/k6-summary-export/k6-v1-thresholds-failed.json'), 'utf8')) as {
      root_group: object;
      metrics: Record<string, Record<string, unknown>>;
    };
    const sim = simulatedK6Export(
      input,
      trendStatsFromArgv(['k6', 'run', '--summary-trend-stats=avg,p(99.99)', ...RUN_ARGV.slice(2)]),
      [
        { metric: 'http_req_duration{status:200}', expression: 'p(99)<300', ok: false },
        { metric: 'http_req_failed', expression: 'rate<0.01', ok: false },
        { metric: 'http_reqs', expression: 'count>=100', ok: true },
        { metric: 'checks', expression: 'rate>0.95', ok: true },
      ],
      60_000,
    );
    const shape = (e: { root_group: object; metrics: Record<string, Record<string, unknown>> }) => ({
      top: Object.keys(e).sort(),
      rootGroup: Object.keys(e.root_group).sort(),
      metrics: Object.fromEntries(
        Object.entries(e.metrics).map(([name, values]) => [
          name,
          Object.entries(values)
            .map(([k, v]) => `${k}:${k === 'thresholds' ? JSON.stringify(Object.keys(v as object).sort()) : typeof v}`)
            .sort(),
        ]),
      ),
    });
    expect(shape(sim)).toEqual(shape(real));
    expect(sim.metrics.http_reqs!.thresholds).toEqual({ 'count>=100': false });
    expect(sim.metrics['http_req_duration{status:200}']!.thresholds).toEqual({ 'p(99)<300': true });
  });

  it("k6's default trend stats: no count, no p(99); Collect falls back to http_reqs and max", () => {
    const plain = simulatedK6Export(input, trendStatsFromArgv(['k6', 'run', 'test.js']), [], 30_000);
    expect(Object.keys(plain.metrics.http_req_duration!)).toEqual(['avg', 'min', 'med', 'max', 'p(90)', 'p(95)']);
    expect(plain.metrics.http_req_duration).toEqual({ avg: 52.5, min: 12.25, med: 48, max: 640.75, 'p(90)': 88.5, 'p(95)': 120.25 });
    expect(runnerSummaryFromK6Export(plain, facts).latency).toEqual({
      count: 1200,
      sum: 63_000,
      min: 12.25,
      max: 640.75,
      p90: 88.5,
      p95: 120.25,
      p99: 640.75,
      quantiles: [
        { q: 0.5, value: 48 },
        { q: 0.9, value: 88.5 },
        { q: 0.95, value: 120.25 },
      ],
      relativeError: 0,
    });
  });

  it('no requests: no http_* metric but the threshold’s (empty, zeros); Collect reads zeros', () => {
    const idle: SimulatedK6Metrics = {
      ...input,
      requests: 0,
      failedRequests: 0,
      latencyCount: 0,
      latencySum: 0,
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      checks: undefined,
    };
    const e = simulatedK6Export(idle, trendStatsFromArgv(RUN_ARGV), [{ metric: 'http_req_duration', expression: 'p(95)<200', ok: true }], 10_000);
    expect(Object.keys(e.metrics)).toEqual(['http_req_duration', 'iteration_duration', 'iterations', 'vus', 'vus_max']);
    expect(Object.values(e.metrics.http_req_duration!).filter((v) => typeof v === 'number' && v !== 0)).toEqual([]);
    expect(e.metrics.http_req_duration!.thresholds).toEqual({ 'p(95)<200': false });
    const summary = runnerSummaryFromK6Export(e, facts);
    expect(summary.requests).toEqual({ count: 0, failed: 0 });
    expect(summary.latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [], relativeError: 0 });
    expect(summary.durationMs).toBe(10_000);
    expect(summary.thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<200', ok: true }]);
  });

  it('a threshold on a custom metric without samples gets an empty metric of the type its aggregation implies', () => {
    const e = simulatedK6Export(
      input,
      ['avg', 'p(95)'],
      [
        { metric: 'orders_created', expression: 'count>10', ok: false },
        { metric: 'cart_latency', expression: 'p(95)<300', ok: true },
        { metric: 'queue_depth', expression: 'value<100', ok: true },
      ],
      30_000,
    );
    expect(e.metrics.orders_created).toEqual({ count: 0, rate: 0, thresholds: { 'count>10': true } });
    expect(e.metrics.cart_latency).toEqual({ avg: 0, 'p(95)': 0, thresholds: { 'p(95)<300': false } });
    expect(e.metrics.queue_depth).toEqual({ value: 0, min: 0, max: 0, thresholds: { 'value<100': false } });
  });
});
