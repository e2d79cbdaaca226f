/**
 * k6's `--summary-export` JSON (fixtures in k6's real shape: test/fixtures/k6-summary-export/README.md)
 * → RunnerSummary, and the LOADPLANE_RESULT line that carries it. Expected numbers are read off the
 * fixture files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULT_LINE_PREFIX } from '../../lambdas/core/runner-contract';
import { runnerSummarySchema, type RunnerSummary } from '../../lambdas/core/summary';
import {
  K6_SUMMARY_TREND_STATS,
  k6SummaryFlags,
  parseK6ResultLine,
  runnerSummaryFromK6Export,
  trendStatPercentile,
} from '../../lambdas/engines/k6/summary-export';

const DIR = join(import.meta.dirname, '../fixtures/k6-summary-export');
const text = (name: string) => readFileSync(join(DIR, name), 'utf8');
const load = (name: string) => JSON.parse(text(name)) as unknown;
/** durationMs 99_999: the export's own duration (count / rate of a counter) must win over it. */
const facts = { runner: 2, exitCode: 0, durationMs: 99_999, simulated: false };

function convert(name: string, overrides: Partial<typeof facts> = {}): RunnerSummary {
  const summary = runnerSummaryFromK6Export(load(name), { ...facts, ...overrides });
  expect(runnerSummarySchema.parse(summary)).toEqual(summary);
  return summary;
}

function expectSortedGrid(quantiles: { q: number; value: number }[]): void {
  for (let i = 1; i < quantiles.length; i++) {
    expect(quantiles[i]!.q).toBeGreaterThan(quantiles[i - 1]!.q);
    expect(quantiles[i]!.value).toBeGreaterThanOrEqual(quantiles[i - 1]!.value);
  }
}

describe('the flags loadplane adds to k6 run', () => {
  it('asks for avg, min, med, max, count and p(50)…p(99), p(99.5), p(99.9)', () => {
    const stats = K6_SUMMARY_TREND_STATS.split(',');
    expect(stats).toHaveLength(57);
    expect(stats.slice(0, 8)).toEqual(['avg', 'min', 'med', 'max', 'count', 'p(50)', 'p(51)', 'p(52)']);
    expect(stats.slice(-4)).toEqual(['p(98)', 'p(99)', 'p(99.5)', 'p(99.9)']);
    // every p(N) is one k6 accepts (metrics/sample.go parsePercentile)
    expect(stats.slice(5).map(trendStatPercentile)).toEqual([...Array.from({ length: 50 }, (_, i) => 50 + i), 99.5, 99.9]);
  });

  it('puts the export path and the trend stats in two --flag=value arguments', () => {
    expect(k6SummaryFlags('/tmp/loadplane-summary.json')).toEqual([
      '--summary-export=/tmp/loadplane-summary.json',
      `--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`,
    ]);
  });

  it.each([
    ['p(95)', 95],
    ['p(99.9)', 99.9],
    ['p(0)', 0],
    ['p(100)', 100],
    ['p(99.90)', 99.9],
    ['p(101)', undefined],
    ['p(-1)', undefined],
    ['p()', undefined],
    ['p(x)', undefined],
    ['med', undefined],
    ['count', undefined],
    // k6 reads the text between `p(` and `)` as a float (Go's ParseFloat): signs, a leading or
    // trailing dot, an exponent; then keeps 0..100.
    ['p(12.5)', 12.5],
    ['p(.5)', 0.5],
    ['p(.55)', 55 / 100],
    ['p(1e01)', 10],
    ['p(5.)', 5],
    ['p(+50)', 50],
    ['p(-0.5)', undefined],
    ['p(1e1)', 10],
    ['p(1E+1)', 10],
    ['p(5e-1)', 0.5],
    ['p(1e2)', 100],
    ['p(100.0001)', undefined],
    ['p(1e)', undefined],
    ['p(e1)', undefined],
    ['p(.)', undefined],
    ['p(1.2.3)', undefined],
    ['p(5 )', undefined],
    ['p( 5)', undefined],
    ['p(1e999)', undefined],
    ['p(Infinity)', undefined],
    ['xp(95)', undefined],
    ['p(95)x', undefined],
    ['P(95)', undefined],
    ['p(9)5)', undefined],
  ])('trend stat %s names percentile %s', (stat, p) => {
    expect(trendStatPercentile(stat)).toBe(p);
  });
});

describe('k6 1.x exports', () => {
  it('thresholds passed: counts, latency, percentile grid, thresholds, run duration', () => {
    const { latency, ...rest } = convert('k6-v1-thresholds-passed.json');
    expect(rest).toEqual({
      engine: 'k6',
      runner: 2,
      exitCode: 0,
      simulated: false,
      // http_reqs: 286 / 9.531899626012736 per s = 30004.5 ms
      durationMs: 30005,
      requests: { count: 286, failed: 0 },
      iterations: 286,
      // No dropped_iterations in the export: none dropped. vus_max {value 10, min 10, max 10}.
      droppedIterations: 0,
      vusMax: 10,
      dataReceivedBytes: 429407,
      dataSentBytes: 55156,
      thresholds: [
        { metric: 'checks', expression: 'rate>0.99', ok: true },
        { metric: 'http_req_duration', expression: 'p(95)<500', ok: true },
        { metric: 'http_req_duration', expression: 'p(99)<1000', ok: true },
        { metric: 'http_req_failed', expression: 'rate<0.01', ok: true },
      ],
    });
    const { quantiles, ...trend } = latency;
    expect(trend).toEqual({
      count: 286,
      sum: 40.195485629370644 * 286,
      min: 17.656553,
      max: 119.36872,
      p90: 58.8883175,
      p95: 67.17809824999999,
      p99: 81.36321399999989,
      relativeError: 0,
    });
    expect(quantiles).toHaveLength(52);
    expect(quantiles[0]).toEqual({ q: 0.5, value: 37.4184415 });
    expect(quantiles).toContainEqual({ q: 0.75, value: 47.272296 });
    expect(quantiles).toContainEqual({ q: 0.99, value: 81.36321399999989 });
    expect(quantiles.slice(-2)).toEqual([
      { q: 99.5 / 100, value: 85.809017 },
      { q: 99.9 / 100, value: 109.81017368500106 },
    ]);
    expectSortedGrid(quantiles);
  });

  it('thresholds failed: a submetric threshold, failures from http_req_failed.passes, the user’s own p(99.99)', () => {
    const summary = convert('k6-v1-thresholds-failed.json', { exitCode: 99 });
    expect(summary.exitCode).toBe(99);
    // data_received (the largest counter): 3030755 / 50511.00578707019 per s = 60001.9 ms
    expect(summary.durationMs).toBe(60002);
    expect(summary.requests).toEqual({ count: 2208, failed: 32 });
    expect(summary.iterations).toBe(1104);
    expect(summary.thresholds).toEqual([
      { metric: 'checks', expression: 'rate>0.95', ok: true },
      { metric: 'http_req_duration{status:200}', expression: 'p(99)<300', ok: false },
      { metric: 'http_req_failed', expression: 'rate<0.01', ok: false },
      { metric: 'http_reqs', expression: 'count>=100', ok: true },
    ]);
    const { quantiles, ...trend } = summary.latency;
    expect(trend).toEqual({
      count: 2208,
      sum: 91.66741685144912 * 2208,
      min: 2.245478,
      max: 653.467584,
      p90: 186.93631729999998,
      p95: 254.61164510000006,
      p99: 370.2891147899994,
      relativeError: 0,
    });
    expect(quantiles).toHaveLength(53);
    expect(quantiles[0]).toEqual({ q: 0.5, value: 60.811623499999996 });
    expect(quantiles.slice(-4)).toEqual([
      { q: 0.99, value: 370.2891147899994 },
      { q: 99.5 / 100, value: 425.58364730500034 },
      { q: 99.9 / 100, value: 570.1497524030035 },
      { q: 99.99 / 100, value: 646.2976975824901 },
    ]);
    expectSortedGrid(quantiles);
  });

  it('default trend stats (no count, no p(99)): count from http_reqs, p99 = max, grid from med, p(90), p(95)', () => {
    const summary = convert('k6-default-trend-stats.json');
    expect(summary.latency).toEqual({
      count: 10,
      sum: 19.470496 * 10,
      min: 14.274038,
      max: 25.474424,
      p90: 23.1293525,
      p95: 24.301888249999998,
      p99: 25.474424,
      quantiles: [
        { q: 0.5, value: 19.801918 },
        { q: 0.9, value: 23.1293525 },
        { q: 0.95, value: 24.301888249999998 },
      ],
      relativeError: 0,
    });
    expect(summary.requests).toEqual({ count: 10, failed: 0 });
    expect(summary.durationMs).toBe(10512); // 17839 / 1697.0121512418011 per s
    expect(summary.thresholds).toEqual([]);
  });

  it('no HTTP requests at all: zeros and no grid; the threshold on the empty trend passed', () => {
    expect(convert('k6-no-http.json')).toEqual({
      engine: 'k6',
      runner: 2,
      exitCode: 0,
      simulated: false,
      durationMs: 10004, // iterations: 40 / 3.998473782557198 per s
      requests: { count: 0, failed: 0 },
      iterations: 40,
      droppedIterations: 0,
      vusMax: 2,
      latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [], relativeError: 0 },
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<200', ok: true }],
    });
  });
});

describe('load fidelity figures', () => {
  it("dropped_iterations' count is the runner's dropped iterations; vus_max's max its most VUs", () => {
    // An arrival-rate run that ran out of VUs: k6 pushes dropped_iterations (a counter: {count, rate},
    // rate = count / the test-run seconds) and vus_max grew from preAllocatedVUs to maxVUs.
    const exported = load('k6-no-http.json') as { metrics: Record<string, unknown> };
    exported.metrics.dropped_iterations = { count: 37, rate: 3.6994 };
    exported.metrics.vus_max = { value: 50, min: 5, max: 50 };
    const summary = runnerSummaryFromK6Export(exported, facts);
    expect(summary.droppedIterations).toBe(37);
    expect(summary.vusMax).toBe(50);
    expect(summary.iterations).toBe(40);
  });
});

describe('k6 2.x exports (same format as 1.x)', () => {
  it('thresholds passed', () => {
    const summary = convert('k6-v2-thresholds-passed.json');
    expect(summary.durationMs).toBe(45001);
    expect(summary.requests).toEqual({ count: 512, failed: 13 });
    expect(summary.iterations).toBe(512);
    expect(summary.dataReceivedBytes).toBe(760104);
    expect(summary.dataSentBytes).toBe(101770);
    expect(summary.latency).toMatchObject({ count: 512, sum: 91.21351844921874 * 512, min: 2.611476, max: 331.842946 });
    expect(summary.latency).toMatchObject({ p90: 151.10106770000002, p95: 188.35656265, p99: 237.88015273999997 });
    expect(summary.latency.quantiles).toHaveLength(52);
    expect(summary.latency.quantiles).toContainEqual({ q: 0.5, value: 83.6467565 });
    expect(summary.latency.quantiles).toContainEqual({ q: 99.9 / 100, value: 307.4531204000015 });
    expectSortedGrid(summary.latency.quantiles);
    expect(summary.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'avg<400', ok: true },
      { metric: 'http_req_duration', expression: 'p(95)<800', ok: true },
      { metric: 'http_req_failed', expression: 'rate<0.05', ok: true },
      { metric: 'iteration_duration', expression: 'p(95)<3000', ok: true },
    ]);
  });

  it('thresholds failed (abortOnFail): the duration is the shortened run', () => {
    const summary = convert('k6-v2-thresholds-failed.json', { exitCode: 99 });
    expect(summary.durationMs).toBe(12308); // data_received: 441404 / 35864.21136402521 per s
    expect(summary.requests).toEqual({ count: 282, failed: 2 });
    expect(summary.iterations).toBe(141);
    expect(summary.latency).toMatchObject({ count: 282, min: 5.96503, max: 1721.733052, p90: 356.4955829, p95: 456.85130454999984 });
    expect(summary.latency.quantiles.at(-1)).toEqual({ q: 99.9 / 100, value: 1449.6168608180492 });
    expect(summary.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'p(95)<150', ok: false },
      { metric: 'http_req_duration{name:checkout}', expression: 'p(90)<250', ok: false },
    ]);
  });
});

describe('semantics on small exports', () => {
  it.each([
    ['true in the export means the threshold FAILED', true, false],
    ['false means it passed', false, true],
  ])('%s', (_, exported, ok) => {
    const summary = runnerSummaryFromK6Export({ metrics: { http_req_duration: { max: 1, thresholds: { 'p(95)<1': exported } } } }, facts);
    expect(summary.thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<1', ok }]);
  });

  it('prefers state.testRunDurationMs, then a counter, then the facts', () => {
    const counters = { http_reqs: { count: 30, rate: 3 } };
    expect(runnerSummaryFromK6Export({ metrics: counters, state: { testRunDurationMs: 9876.5 } }, facts).durationMs).toBe(9876.5);
    expect(runnerSummaryFromK6Export({ metrics: counters }, facts).durationMs).toBe(10_000);
    expect(runnerSummaryFromK6Export({ metrics: { http_reqs: { count: 0, rate: 0 } } }, facts).durationMs).toBe(99_999);
    expect(runnerSummaryFromK6Export({ metrics: {} }, { ...facts, durationMs: -5 }).durationMs).toBe(0);
  });

  it('state.testRunDurationMs of 0 is a duration of 0, not a missing one', () => {
    expect(runnerSummaryFromK6Export({ metrics: { http_reqs: { count: 30, rate: 3 } }, state: { testRunDurationMs: 0 } }, facts).durationMs).toBe(0);
  });

  it.each([
    // [counters, durationMs]: count / rate of the counter with the largest count; k6 writes rate 0 when
    // the test-run duration is 0, and a count of 0 says nothing of the duration: the facts' 99_999 then.
    [
      'the largest counter, whichever its place',
      { http_reqs: { count: 10, rate: 1 }, iterations: { count: 40, rate: 2 }, data_sent: { count: 20, rate: 4 } },
      20_000,
    ],
    ['the largest counter last', { http_reqs: { count: 10, rate: 1 }, data_received: { count: 90, rate: 30 } }, 3_000],
    ['the first of two equally large counters', { iterations: { count: 50, rate: 10 }, data_sent: { count: 50, rate: 20 } }, 5_000],
    ['data_sent alone', { data_sent: { count: 8, rate: 2 } }, 4_000],
    ['data_received alone', { data_received: { count: 9, rate: 3 } }, 3_000],
    ['a counter with a count but rate 0 (a test-run duration of 0)', { http_reqs: { count: 5, rate: 0 } }, 99_999],
    ['a counter with rate but count 0', { iterations: { count: 0, rate: 2 } }, 99_999],
    ['a zero counter beside one that has both', { http_reqs: { count: 0, rate: 0 }, iterations: { count: 12, rate: 4 } }, 3_000],
    ['a counter that is not a built-in one is not read', { my_counter: { count: 100, rate: 1 } }, 99_999],
    ['vus_max (a gauge) is not a counter', { vus_max: { value: 1, min: 1, max: 1 } }, 99_999],
    ['0.5 ms rounds up', { iterations: { count: 1, rate: 1 / 0.0125 } }, 13],
  ])('the run duration from %s', (_, metrics, durationMs) => {
    expect(runnerSummaryFromK6Export({ metrics }, facts).durationMs).toBe(durationMs);
  });

  it("thresholds are sorted by metric, then by expression, whatever the export's key order", () => {
    const exported = {
      metrics: {
        http_req_failed: { value: 0, passes: 0, fails: 1, thresholds: { 'rate<0.1': false } },
        http_req_duration: { max: 1, thresholds: { 'p(99)<1': true, 'avg<1': false, 'p(95)<1': false } },
        checks: { value: 1, passes: 1, fails: 0, thresholds: { 'rate>0.9': false } },
      },
    };
    expect(runnerSummaryFromK6Export(exported, facts).thresholds).toEqual([
      { metric: 'checks', expression: 'rate>0.9', ok: true },
      { metric: 'http_req_duration', expression: 'avg<1', ok: true },
      { metric: 'http_req_duration', expression: 'p(95)<1', ok: true },
      { metric: 'http_req_duration', expression: 'p(99)<1', ok: false },
      { metric: 'http_req_failed', expression: 'rate<0.1', ok: true },
    ]);
  });

  it("vusMax is vus_max's max, else its value; without vus_max there is none", () => {
    expect(runnerSummaryFromK6Export({ metrics: { vus_max: { value: 3, min: 1, max: 7 } } }, facts).vusMax).toBe(7);
    expect(runnerSummaryFromK6Export({ metrics: { vus_max: { value: 3 } } }, facts).vusMax).toBe(3);
    expect(runnerSummaryFromK6Export({ metrics: { vus_max: { value: 2.6 } } }, facts).vusMax).toBe(3);
    expect(runnerSummaryFromK6Export({ metrics: {} }, facts)).not.toHaveProperty('vusMax');
  });

  it.each([
    // [what the export has, the latency read]
    [
      'http_reqs but no http_req_duration: no latency at all',
      { http_reqs: { count: 10, rate: 1 } },
      { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [] },
    ],
    [
      'a trend whose count is 0: no samples, whatever else it says',
      { http_req_duration: { count: 0, avg: 3, min: 1, max: 5, 'p(90)': 4, 'p(95)': 4, 'p(99)': 5, 'p(50)': 2 } },
      { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [] },
    ],
    [
      'a trend without avg, min or percentiles: sum and min 0, the percentiles at max',
      { http_req_duration: { count: 4, max: 8 } },
      { count: 4, sum: 0, min: 0, max: 8, p90: 8, p95: 8, p99: 8, quantiles: [] },
    ],
    [
      'a trend without max: the percentiles it lacks are 0',
      { http_req_duration: { count: 4, avg: 2.5, min: 1, 'p(90)': 3 } },
      { count: 4, sum: 10, min: 1, max: 0, p90: 3, p95: 0, p99: 0, quantiles: [{ q: 0.9, value: 3 }] },
    ],
    [
      'a trend without count: http_reqs counts its samples',
      { http_reqs: { count: 4, rate: 1 }, http_req_duration: { avg: 2.5, min: 1, max: 4, med: 2 } },
      { count: 4, sum: 10, min: 1, max: 4, p90: 4, p95: 4, p99: 4, quantiles: [{ q: 0.5, value: 2 }] },
    ],
  ])('%s', (_, metrics, latency) => {
    expect(runnerSummaryFromK6Export({ metrics }, facts).latency).toEqual({ ...latency, relativeError: 0 });
  });

  it('med stands for q = 0.5 when p(50) is absent; p(50) wins when both are there', () => {
    const trend = { count: 4, avg: 2, min: 1, max: 4, med: 2.5, 'p(75)': 3.25 };
    expect(runnerSummaryFromK6Export({ metrics: { http_req_duration: trend } }, facts).latency.quantiles).toEqual([
      { q: 0.5, value: 2.5 },
      { q: 0.75, value: 3.25 },
    ]);
    const both = { ...trend, 'p(50)': 2.4 };
    expect(runnerSummaryFromK6Export({ metrics: { http_req_duration: both } }, facts).latency.quantiles[0]).toEqual({ q: 0.5, value: 2.4 });
  });

  it('failed requests from the rate when passes is absent is not k6: refused', () => {
    expect(() => runnerSummaryFromK6Export({ metrics: { http_reqs: { count: 200, rate: 2 }, http_req_failed: { value: 0.025 } } }, facts)).toThrow(
      /metrics\["http_req_failed"\] lacks passes, fails/,
    );
  });

  it('carries runner, exit code and simulated from the facts', () => {
    expect(runnerSummaryFromK6Export({ metrics: {} }, { runner: 7, exitCode: 108, durationMs: 5, simulated: true })).toMatchObject({
      runner: 7,
      exitCode: 108,
      simulated: true,
      durationMs: 5,
    });
  });
});

describe('not k6’s export: a clear error', () => {
  // The whole message: it is the runner's missing-result reason in the run's record (zod's own words after the path).
  it.each([
    ['null', null, "not k6's --summary-export JSON: (top level): Invalid input: expected object, received null"],
    ['a string', 'LOADPLANE_RESULT {}', "not k6's --summary-export JSON: (top level): Invalid input: expected object, received string"],
    ['a number', 42, "not k6's --summary-export JSON: (top level): Invalid input: expected object, received number"],
    ['an array', [], "not k6's --summary-export JSON: (top level): Invalid input: expected object, received array"],
    ['no metrics', { root_group: {} }, "not k6's --summary-export JSON: metrics: Invalid input: expected record, received undefined"],
    [
      'results without a version: not the machine-readable summary either',
      { results: {} },
      "not k6's --summary-export JSON: metrics: Invalid input: expected record, received undefined",
    ],
    ['a version without results', { version: '1.5.0' }, "not k6's --summary-export JSON: metrics: Invalid input: expected record, received undefined"],
    ['metrics not an object', { metrics: [] }, "not k6's --summary-export JSON: metrics: Invalid input: expected record, received array"],
    [
      'a metric that is a number',
      { metrics: { http_reqs: 5 } },
      'not k6\'s --summary-export JSON: metrics["http_reqs"]: Invalid input: expected object, received number',
    ],
    [
      'three bad metrics: all three named',
      { metrics: { a: 1, b: 2, c: 3 } },
      'not k6\'s --summary-export JSON: metrics["a"]: Invalid input: expected object, received number; metrics["b"]: Invalid input: expected object, received number; metrics["c"]: Invalid input: expected object, received number',
    ],
    [
      'four bad metrics: three named, the rest counted',
      { metrics: { a: 1, b: 2, c: 3, d: 4 } },
      'not k6\'s --summary-export JSON: metrics["a"]: Invalid input: expected object, received number; metrics["b"]: Invalid input: expected object, received number; metrics["c"]: Invalid input: expected object, received number (and 1 more)',
    ],
    [
      'null where a built-in counter needs its count (NaN after JSON.stringify)',
      { metrics: { http_reqs: { count: null, rate: 1 } } },
      'not k6\'s --summary-export JSON: metrics["http_reqs"] lacks count (k6 exports a counter as {count, rate})',
    ],
    [
      'a threshold that is not a boolean',
      { metrics: { checks: { value: 1, passes: 1, fails: 0, thresholds: { 'rate>0.9': 'ok' } } } },
      'not k6\'s --summary-export JSON: metrics["checks"]["thresholds"]["rate>0.9"]: Invalid input: expected boolean, received string',
    ],
    [
      'a counter without count',
      { metrics: { http_reqs: { rate: 3 } } },
      'not k6\'s --summary-export JSON: metrics["http_reqs"] lacks count (k6 exports a counter as {count, rate})',
    ],
    [
      'iterations without rate',
      { metrics: { iterations: { count: 3 } } },
      'not k6\'s --summary-export JSON: metrics["iterations"] lacks rate (k6 exports a counter as {count, rate})',
    ],
    [
      'data_received without either',
      { metrics: { data_received: {} } },
      'not k6\'s --summary-export JSON: metrics["data_received"] lacks count, rate (k6 exports a counter as {count, rate})',
    ],
    [
      'data_sent without count',
      { metrics: { data_sent: { rate: 1 } } },
      'not k6\'s --summary-export JSON: metrics["data_sent"] lacks count (k6 exports a counter as {count, rate})',
    ],
    [
      'http_req_failed with its share only',
      { metrics: { http_req_failed: { value: 0.025 } } },
      'not k6\'s --summary-export JSON: metrics["http_req_failed"] lacks passes, fails (k6 exports a rate as {value, passes, fails})',
    ],
    [
      'http_req_failed without its share',
      { metrics: { http_req_failed: { passes: 1, fails: 3 } } },
      'not k6\'s --summary-export JSON: metrics["http_req_failed"] lacks value (k6 exports a rate as {value, passes, fails})',
    ],
    [
      'a negative count',
      { metrics: { http_reqs: { count: -1, rate: 1 } } },
      'not k6\'s --summary-export JSON: it gives an impossible result (requests["count"]: Too small: expected number to be >=0)',
    ],
    [
      'a negative percentile: its place in the grid named',
      { metrics: { http_req_duration: { count: 2, max: 5, 'p(50)': -1 } } },
      'not k6\'s --summary-export JSON: it gives an impossible result (latency["quantiles"][0]["value"]: Too small: expected number to be >=0)',
    ],
    [
      'a negative state.testRunDurationMs',
      { metrics: {}, state: { testRunDurationMs: -1 } },
      'not k6\'s --summary-export JSON: state["testRunDurationMs"]: Too small: expected number to be >=0',
    ],
    [
      "k6's machine-readable summary",
      { version: '1.0.0', config: {}, metadata: {}, results: {} },
      "not k6's --summary-export JSON: this is k6's machine-readable summary (--new-machine-readable-summary / K6_NEW_MACHINE_READABLE_SUMMARY); loadplane reads the default (legacy) export shape",
    ],
  ])('%s', (_, exported, message) => {
    expect(() => runnerSummaryFromK6Export(exported, facts)).toThrow(new Error(message));
  });

  it('an export with metrics is read as one even beside results and version (a legacy export with extra keys)', () => {
    expect(runnerSummaryFromK6Export({ metrics: { http_reqs: { count: 4, rate: 2 } }, results: {}, version: '1' }, facts).requests.count).toBe(4);
  });

  it('a value that is no finite number (k6 writes null for a custom trend that saw Infinity) is dropped, not the whole result', () => {
    const exported = {
      metrics: {
        http_reqs: { count: 10, rate: 1 },
        my_custom_trend: { avg: null, min: 0, max: null, 'p(95)': Number.NaN },
        http_req_duration: { count: 10, avg: 5, min: 1, max: 9, 'p(95)': Number.POSITIVE_INFINITY, 'p(99)': 8 },
      },
    };
    const summary = runnerSummaryFromK6Export(exported, facts);
    expect(summary.requests.count).toBe(10);
    // p(95) unreadable: max, an honest upper bound; the grid keeps only the levels that were numbers.
    expect(summary.latency.p95).toBe(9);
    expect(summary.latency.quantiles).toEqual([{ q: 0.99, value: 8 }]);
  });
});

describe('parseK6ResultLine', () => {
  /** What the runner script prints: the prefix and the export file with CR/LF removed. */
  const resultLine = (file: string) => RESULT_LINE_PREFIX + text(file).replace(/[\r\n]/g, '');

  it('finds the line among k6 output and parses k6’s pretty-printed export squeezed onto it', () => {
    const log = [
      'time="2026-08-21T10:00:00Z" level=info msg="test started"',
      'running (0m30.0s), 00/10 VUs, 286 complete and 0 interrupted iterations',
      '     ✓ status is 200',
      '     http_req_duration..............: avg=40.19ms min=17.65ms med=37.41ms max=119.36ms',
      resultLine('k6-v1-thresholds-passed.json'),
      '',
    ].join('\n');
    const parsed = parseK6ResultLine(log);
    expect(parsed).toEqual(load('k6-v1-thresholds-passed.json'));
    expect(runnerSummaryFromK6Export(parsed, facts).requests.count).toBe(286);
  });

  it('reads a result line that is the log’s first line', () => {
    expect(parseK6ResultLine(`${RESULT_LINE_PREFIX}{"metrics":{},"n":1}\nk6 said more after it`)).toEqual({ metrics: {}, n: 1 });
  });

  it('takes the last of several result lines; CRLF line ends are fine', () => {
    const log = [`${RESULT_LINE_PREFIX}{"metrics":{},"n":1}`, 'noise', `${RESULT_LINE_PREFIX}{"metrics":{},"n":2}`, 'more noise'].join('\r\n');
    expect(parseK6ResultLine(log)).toEqual({ metrics: {}, n: 2 });
  });

  it('a truncated last line gives undefined (an older line does not stand in for it)', () => {
    const full = resultLine('k6-no-http.json');
    expect(parseK6ResultLine(`${RESULT_LINE_PREFIX}{"metrics":{}}\n${full.slice(0, full.length - 40)}\n`)).toBeUndefined();
  });

  it.each([
    ['an empty log', ''],
    ['no result line', 'level=error msg="GoError: something"\nexit status 107\n'],
    ['the prefix not at the start of the line', `2026-08-21T10:00:00Z ${RESULT_LINE_PREFIX}{"metrics":{}}`],
    ['a prefix with nothing after it', RESULT_LINE_PREFIX],
  ])('%s gives undefined', (_, log) => {
    expect(parseK6ResultLine(log)).toBeUndefined();
  });
});
