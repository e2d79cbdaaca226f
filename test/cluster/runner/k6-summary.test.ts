import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runnerSummarySchema } from '../../../lambdas/core/summary';
import { k6SummaryFlags, k6SummaryToRunnerSummary } from '../../../runner/k6-summary';

const fixture = JSON.parse(readFileSync(join(__dirname, '../fixtures/k6-summary-export.json'), 'utf8')) as unknown;
const facts = { runner: 1, exitCode: 0, durationMs: 1234 };

describe('k6 summary export → RunnerSummary', () => {
  it('converts a full export; the result satisfies the summary schema', () => {
    const summary = k6SummaryToRunnerSummary(fixture, facts);
    expect(runnerSummarySchema.parse(summary)).toEqual(summary);
    expect(summary).toEqual({
      engine: 'k6',
      runner: 1,
      exitCode: 0,
      simulated: false,
      durationMs: 1234,
      requests: { count: 1200, failed: 20 },
      iterations: 1200,
      latency: { count: 1200, sum: 63000, min: 12.25, max: 640.75, p90: 88.5, p95: 120.25, p99: 310.5 },
      dataReceivedBytes: 4843200,
      dataSentBytes: 103200,
      thresholds: [
        { metric: 'http_req_duration', expression: 'p(95)<100', ok: false },
        { metric: 'http_req_duration', expression: 'p(99)<500', ok: true },
        { metric: 'http_req_failed', expression: 'rate<0.05', ok: true },
      ],
    });
  });

  it.each([
    ['true in the export means the threshold failed', { 'p(95)<1': true }, false],
    ['false in the export means it passed', { 'p(95)<1': false }, true],
  ])('%s', (_, thresholds, ok) => {
    const summary = k6SummaryToRunnerSummary({ metrics: { http_req_duration: { max: 1, thresholds } } }, facts);
    expect(summary.thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<1', ok }]);
  });

  it.each([
    ['no HTTP at all: zeros', { iterations: { count: 5 } }, { requests: { count: 0, failed: 0 }, iterations: 5 }],
    [
      'failed count from the rate when passes is missing',
      { http_reqs: { count: 200 }, http_req_failed: { value: 0.025 } },
      { requests: { count: 200, failed: 5 } },
    ],
    [
      'latency count from http_reqs when the trend has no count; p99 falls back to max (an upper bound)',
      { http_reqs: { count: 10 }, http_req_duration: { avg: 2, min: 1, max: 9, 'p(90)': 5, 'p(95)': 6 } },
      { latency: { count: 10, sum: 20, min: 1, max: 9, p90: 5, p95: 6, p99: 9 } },
    ],
  ])('%s', (_, metrics, expected) => {
    expect(k6SummaryToRunnerSummary({ metrics }, facts)).toMatchObject(expected);
  });

  it.each([null, {}, { metrics: [] }, { metrics: { http_reqs: 5 } }])('rejects %j (not a summary export)', (exported) => {
    expect(() => k6SummaryToRunnerSummary(exported, facts)).toThrow();
  });

  it('asks k6 for count and p(99) in trends', () => {
    expect(k6SummaryFlags('/tmp/x/summary.json')).toEqual([
      '--summary-export=/tmp/x/summary.json',
      '--summary-trend-stats=avg,min,med,max,p(90),p(95),p(99),count',
    ]);
  });
});
