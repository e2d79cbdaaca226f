import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { outcomeFromRunners } from '../../lambdas/core/outcome-rules';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { Outcome } from '../../lambdas/core/status';
import { formatResultTable, SIMULATED_NOTICE } from '../../local/cli/result-table';

type Latency = RunnerSummary['latency'];

/** A latency whose percentile grid holds its p90, p95 and p99 (k6 reports p50…p99.9; three levels keep the numbers readable). */
function latency(count: number, sum: number, min: number, max: number, p90: number, p95: number, p99: number): Latency {
  return {
    count,
    sum,
    min,
    max,
    p90,
    p95,
    p99,
    quantiles: [
      { q: 0.9, value: p90 },
      { q: 0.95, value: p95 },
      { q: 0.99, value: p99 },
    ],
    relativeError: 0,
  };
}

function runner(index: number, overrides: Partial<RunnerSummary> = {}): RunnerSummary {
  return {
    engine: 'k6',
    runner: index,
    exitCode: 0,
    simulated: false,
    durationMs: 30_000,
    requests: { count: 1200, failed: 3 },
    iterations: 600,
    latency: latency(1200, 120_000, 12, 980, 210, 340, 720),
    dataReceivedBytes: 1_048_576,
    dataSentBytes: 90_000,
    thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<800', ok: true }],
    ...overrides,
  };
}

function table(expected: number, runners: RunnerSummary[]): string {
  const result = aggregateResults(expected, runners);
  const { outcome, reason } = outcomeFromRunners(result);
  return formatResultTable(result, outcome, reason);
}

function lineStarting(text: string, start: string): string {
  const line = text.split('\n').find((l) => l.startsWith(start));
  expect(line, `a line starting with ${JSON.stringify(start)} in:\n${text}`).toBeDefined();
  return line!;
}

describe('formatResultTable', () => {
  const runners = [
    runner(0),
    runner(1, {
      exitCode: 99,
      requests: { count: 800, failed: 40 },
      latency: latency(800, 400_000, 20, 4000, 1500, 2100, 3900),
      thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<800', ok: false }],
    }),
  ];
  const text = table(2, runners);

  it('shows one row per runner with its exit code and meaning, counts, percentiles and thresholds', () => {
    const first = lineStarting(text, '0 ');
    expect(first).toMatch(/0 ok/);
    expect(first).toMatch(/1,200/);
    expect(first).toMatch(/340\.0 ms/);
    expect(first).toMatch(/720\.0 ms/);
    expect(first).toMatch(/1 passed/);
    const second = lineStarting(text, '1 ');
    expect(second).toMatch(/99 thresholds failed/);
    expect(second).toMatch(/2,100\.0 ms|2100\.0 ms/);
    expect(second).toMatch(/failed: http_req_duration p\(95\)<800/);
  });

  it('shows totals: summed counts and the weighted mean, never an averaged percentile', () => {
    const total = lineStarting(text, 'total');
    expect(total).toMatch(/2\/2 reported/);
    expect(total).toMatch(/2,000/); // 1,200 + 800 requests
    expect(total).toMatch(/43 \(2\.15 %\)/); // 3 + 40 failed
    expect(total).toMatch(/260\.0 ms \(weighted\)/); // (120,000 + 400,000) / 2,000, not (100 + 500) / 2
    expect(text).not.toMatch(/1220/); // the averaged p95 appears nowhere
    expect(text).not.toMatch(/2310/); // nor the averaged p99
    expect(text).not.toMatch(/worst runner|≤/); // no runner's value stands for the run's
    expect(text).toMatch(/never averaged/);
    expect(text).toMatch(/iterations 1,200/);
    expect(text).toMatch(/data received 2\.0 MiB/);
  });

  it('shows the run’s p95 and p99 in the total row, and its p90 below, as brackets [lo, hi] ms', () => {
    const { latency: totals } = aggregateResults(2, runners);
    // The brackets of these two runners' grids (test/core/aggregate.test.ts checks the arithmetic).
    expect([totals.p90, totals.p95, totals.p99]).toEqual([
      { lo: 210, hi: 1500 },
      { lo: 340, hi: 1500 },
      { lo: 2100, hi: 3900 },
    ]);
    const total = lineStarting(text, 'total');
    expect(total).toContain('[340.0, 1500.0] ms');
    expect(total).toContain('[2100.0, 3900.0] ms');
    expect(total.indexOf('[340.0, 1500.0] ms')).toBeLessThan(total.indexOf('[2100.0, 3900.0] ms')); // p95, then p99
    expect(lineStarting(text, 'latency:')).toBe(
      "latency: min 12.0 ms, max 4000.0 ms, p90 [210.0, 1500.0] ms; the run's percentiles lie in these brackets (from every runner's, never averaged)",
    );
  });

  it('a bracket whose ends print the same shows one value (one runner: its own percentiles)', () => {
    const one = table(1, [runner(0)]);
    const total = lineStarting(one, 'total');
    expect(total).toMatch(/ 340\.0 ms {2}720\.0 ms$/);
    expect(one).not.toContain('[');
    expect(lineStarting(one, 'latency:')).toMatch(/p90 210\.0 ms;/);
  });

  it('ends with the outcome and its reason', () => {
    expect(text.trimEnd().split('\n').at(-1)).toBe('outcome: THRESHOLDS_FAILED - threshold http_req_duration p(95)<800 failed on runner 1');
  });

  it('shows the load fidelity lines after the start skew, escaped, before the outcome', () => {
    const result = aggregateResults(2, [runner(0), runner(1)]);
    const lines = formatResultTable(result, 'SUCCEEDED', 'ok', {
      startSkew: 'start skew 3 ms',
      fidelity: ['load: 900 of 1,000 planned iterations delivered (100 dropped: 10.0 %; runner 1 dropped 100)', 'CPU: runner 1 starved\u001b[31m'],
    })
      .trimEnd()
      .split('\n');
    expect(lines.slice(-4)).toEqual([
      'start skew 3 ms',
      'load: 900 of 1,000 planned iterations delivered (100 dropped: 10.0 %; runner 1 dropped 100)',
      'CPU: runner 1 starved\\u001b[31m',
      'outcome: SUCCEEDED - ok',
    ]);
  });

  it('marks synthetic numbers if and only if a runner was simulated', () => {
    expect(text).not.toContain(SIMULATED_NOTICE);
    expect(text).not.toMatch(/simulated/);
    const simulated = table(2, [runner(0, { simulated: true }), runner(1)]);
    expect(simulated).toContain('simulated metrics (kube-sim)');
  });

  it('shows runners without a result, and the shortfall in the total', () => {
    const short = table(3, [runner(0), runner(2)]);
    expect(lineStarting(short, '1 ')).toMatch(/no result/);
    expect(lineStarting(short, 'total')).toMatch(/2\/3 reported/);
    expect(short).toMatch(/outcome: FAILED - runner 1 produced no result/);
  });

  it('notes duplicated and never-launched runners', () => {
    const odd = table(1, [runner(0, { exitCode: 137 }), runner(0), runner(4)]);
    expect(odd).toMatch(/reported twice \(last result kept\): 0/);
    expect(odd).toMatch(/never launched \(not counted\): 4/);
  });

  it('a run without thresholds: the column says "none" and the outcome "no thresholds defined", never "every threshold passed"', () => {
    const none = table(2, [runner(0, { thresholds: [] }), runner(1, { thresholds: [] })]);
    expect(lineStarting(none, '0 ')).toMatch(/ {2}none$/);
    expect(lineStarting(none, '1 ')).toMatch(/ {2}none$/);
    expect(none.trimEnd().split('\n').at(-1)).toBe('outcome: SUCCEEDED - both runners exited 0 (no thresholds defined)');
    expect(none).not.toMatch(/every threshold passed/);
  });

  it('names a Gatling exit code by the Gatling table', () => {
    const gatling = table(1, [runner(0, { engine: 'gatling', exitCode: 2, thresholds: [] })]);
    expect(lineStarting(gatling, '0 ')).toMatch(/2 assertions failed/);
    expect(lineStarting(gatling, '0 ')).toMatch(/failed \(not named\)$/);
  });

  it('says a simulated duration is simulated', () => {
    expect(table(1, [runner(0, { simulated: true })])).toMatch(/duration 30\.0 s \(simulated\)/);
  });

  it('prints a threshold named in a runner’s log with its control characters escaped', () => {
    const evil = runner(0, { exitCode: 99, thresholds: [{ metric: 'x\u001b]0;pwned\u0007', expression: 'rate<0.01\u001b[2J', ok: false }] });
    const text = table(1, [evil]);
    expect(text.replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
    expect(lineStarting(text, '0 ')).toContain('failed: x\\u001b]0;pwned\\u0007 rate<0.01\\u001b[2J');
  });

  it('shows dashes, not NaN, when no request was made', () => {
    const idle = table(1, [
      runner(0, {
        requests: { count: 0, failed: 0 },
        latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [], relativeError: 0 },
        thresholds: [],
      }),
    ]);
    expect(idle).not.toMatch(/NaN/);
    expect(lineStarting(idle, 'total')).toMatch(/0 \(0\.00 %\) +- +- +-$/);
    expect(lineStarting(idle, 'latency:')).toMatch(/^latency: min -, max -, p90 -;/);
  });
});

describe('formatResultTable: the run against its baseline', () => {
  const result = aggregateResults(1, [runner(0)]);
  it('one row per limited figure: both values, the change, the limit and the verdict in words', () => {
    const text = formatResultTable(result, Outcome.REGRESSED, 'p95 regressed', {
      baseline: {
        runId: 'nightly-1',
        none: null,
        figures: [
          { figure: 'p95', verdict: 'certain', run: { lo: 231, hi: 240 }, baseline: { lo: 200, hi: 210 }, change: { lo: 0.1, hi: 0.2 }, limit: 0.1 },
          { figure: 'errorRate', verdict: 'none', run: 0.01, baseline: 0.012, change: { lo: -0.2, hi: -0.2 }, limit: 0.5 },
          { figure: 'mean', verdict: 'unknown', run: 0, baseline: 0, change: null, limit: 0.05 },
        ],
      },
    });
    const lines = text.split('\n');
    const at = lines.indexOf('against baseline nightly-1:');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 5)).toEqual([
      '  figure     run                baseline           change            limit        verdict',
      '  p95        [231.0, 240.0] ms  [200.0, 210.0] ms  +10.0 to +20.0 %  +10.0 %      regressed',
      '  errorRate  1.00 %             1.20 %             -0.20 points      +0.5 points  within the limit',
      '  mean       0.0 ms             0.0 ms             -                 +5.0 %       cannot tell',
    ]);
    // Before the outcome, which stays the last line.
    expect(lines.filter(Boolean).at(-1)).toBe('outcome: REGRESSED - p95 regressed');
  });

  it('no usable baseline: one line saying why; no baseline at all: nothing', () => {
    const none = formatResultTable(result, Outcome.SUCCEEDED, 'ok', { baseline: { runId: null, none: 'no earlier SUCCEEDED run named x', figures: [] } });
    expect(lineStarting(none, 'baseline:')).toBe('baseline: none (no earlier SUCCEEDED run named x)');
    expect(formatResultTable(result, Outcome.SUCCEEDED, 'ok')).not.toMatch(/baseline/);
  });
});
