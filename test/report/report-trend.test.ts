/**
 * The report's "Against its history" section (report-trend.ts, report-trend-html.ts), on hand-made
 * runs: the changes against the baseline worked out by hand (a bracket's as the interval its exact
 * change lies in, the error rate's in points), each verdict said in words; the trend's points oldest first with this run marked,
 * figures null for a run without a result; and what the page says when there is nothing to show.
 */
import { describe, expect, it } from 'vitest';
import type { RegressionRecord } from '../../lambdas/core/regression';
import type { RunFigures } from '../../lambdas/ledger/ledger';
import { chartLibrary } from '../../lambdas/report/chart-library';
import { escapeHtml } from '../../lambdas/report/html';
import { renderReportHtml } from '../../lambdas/report/report-html';
import { reportModel } from '../../lambdas/report/report-model';
import { runView, SAMPLES, T0 } from './report-fixtures';

function withRegression(record: RegressionRecord) {
  const view = runView();
  const collect = view.stages.Collect!;
  view.stages.Collect = { ...collect, output: { ...(collect.output as object), regression: record } };
  return view;
}

const figures = (runId: string, createdAt: string, summary?: Record<string, unknown>, outcome = 'SUCCEEDED'): RunFigures =>
  ({ runId, runName: 'checkout', status: outcome, outcome, trigger: { kind: 'api' }, createdAt, ...(summary ? { summary } : {}) }) as RunFigures;

const summary = (p95: { lo: number; hi: number }, requests: number, failed: number, durationMs: number) => ({
  requests,
  failedRequests: failed,
  errorRate: failed / requests,
  durationMs,
  latency: { count: requests, mean: 50, p90: p95, p95, p99: p95 },
});

const RECORD: RegressionRecord = {
  baseline: 'r0',
  figures: [
    { figure: 'p95', verdict: 'certain', run: { lo: 150, hi: 160 }, baseline: { lo: 100, hi: 125 }, limit: 0.1 },
    { figure: 'errorRate', verdict: 'none', run: 0.012, baseline: 0.01, limit: 0.5 },
    { figure: 'p99', verdict: 'possible', run: { lo: 200, hi: 300 }, baseline: { lo: 200, hi: 250 }, limit: 0.2 },
  ],
};

describe("the report's history section", () => {
  it('the changes against the baseline: [150/125 − 1, 160/100 − 1] = +20 % to +60 %; the error rate +0.20 points; each verdict in words', () => {
    const page = renderReportHtml(reportModel(withRegression(RECORD), SAMPLES, T0 + 70_000, []), chartLibrary());
    expect(page).toContain('<span class="id" id="baseline-run">r0</span>');
    expect(page).toContain(
      '<tr><td>p95</td><td>150 ms – 160 ms</td><td>100 ms – 125 ms</td><td>+20.0 to +60.0 %</td><td>+10 %</td><td class="certain">regressed</td></tr>',
    );
    expect(page).toContain(
      '<tr><td>errorRate</td><td>1.2 %</td><td>1 %</td><td>+0.20 points</td><td>+0.5 points</td><td class="none">within the limit</td></tr>',
    );
    // [200/250 − 1, 300/200 − 1] = [−20 %, +50 %]
    expect(page).toContain(
      '<tr><td>p99</td><td>200 ms – 300 ms</td><td>200 ms – 250 ms</td><td>-20.0 to +50.0 %</td><td>+20 %</td><td class="possible">may have regressed (the brackets leave it open)</td></tr>',
    );
  });

  it('no baseline said with why; a run not compared says so', () => {
    const none = renderReportHtml(
      reportModel(withRegression({ figures: [], none: 'no earlier SUCCEEDED run named checkout' }), SAMPLES, T0, []),
      chartLibrary(),
    );
    expect(none).toContain('<p class="empty" id="baseline-none">No baseline: no earlier SUCCEEDED run named checkout.</p>');
    const notCompared = renderReportHtml(reportModel(runView(), SAMPLES, T0), chartLibrary());
    expect(notCompared).toContain('id="baseline-none">Not compared with a baseline');
    // Without a history read there is no trend block at all.
    expect(notCompared).not.toContain('id="chart-trend"');
  });

  it("the trend: the history's runs oldest first, this run marked, figures null for a run without a result; its data in the page", () => {
    const history = [
      figures('r1', '2025-03-01T09:29:00.000Z', summary({ lo: 120, hi: 130 }, 1000, 10, 60_000)),
      figures('r-running', '2025-03-01T09:20:00.000Z', undefined, 'RUNNING'),
      figures('r0', '2025-03-01T08:00:00.000Z', summary({ lo: 100, hi: 110 }, 3000, 0, 60_000)),
    ];
    const model = reportModel(runView(), SAMPLES, T0, history);
    expect(model.trend).toEqual({
      name: 'checkout',
      currentOutside: false,
      points: [
        {
          runId: 'r0',
          createdAt: '2025-03-01T08:00:00.000Z',
          outcome: 'SUCCEEDED',
          p95: { lo: 100, hi: 110 },
          errorRatePercent: 0,
          requestRate: 50,
          current: false,
        },
        { runId: 'r-running', createdAt: '2025-03-01T09:20:00.000Z', outcome: 'RUNNING', p95: null, errorRatePercent: null, requestRate: null, current: false },
        {
          runId: 'r1',
          createdAt: '2025-03-01T09:29:00.000Z',
          outcome: 'SUCCEEDED',
          p95: { lo: 120, hi: 130 },
          errorRatePercent: 1,
          requestRate: 1000 / 60,
          current: true,
        },
      ],
    });
    const page = renderReportHtml(model, chartLibrary());
    expect(page).toContain(
      '<figcaption>The last 3 runs of checkout, oldest first: p95 (its bracket, as a band), error rate, requests per second; this run is #3</figcaption>',
    );
    const data = JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(page)![1]!) as { trend: unknown };
    expect(data.trend).toEqual(JSON.parse(JSON.stringify(model.trend)));
  });

  it('an older run’s report says the chart shows the newest runs; a hostile name is escaped', () => {
    const name = 'x</figcaption><script>alert(1)</script>';
    const model = reportModel(runView(), SAMPLES, T0, [figures('r9', '2025-03-02T00:00:00.000Z', summary({ lo: 1, hi: 2 }, 10, 0, 1000))]);
    const page = renderReportHtml({ ...model, trend: { ...model.trend!, name } }, chartLibrary());
    expect(page).toContain('id="trend-outside"');
    expect(page).toContain(`runs of ${escapeHtml(name)}, oldest first`);
    expect(page).not.toContain('<script>alert(1)</script>');
  });
});
