/**
 * k6's `--summary-export` JSON → the RunnerSummary line (lambdas/core/summary.ts).
 *
 * The export is k6's legacy format (k6 `internal/js/summary-wrapper.js`, `oldJSONSummary`): each metric
 * is its flat `values` object; rate metrics have `passes`, `fails` and `value` (the rate); and a
 * metric's `thresholds` map each expression to `!threshold.ok`, so there `true` means the threshold
 * FAILED. For `http_req_failed`, `passes` counts failed requests (the rate counts non-zero samples).
 */
import { z } from 'zod';
import type { RunnerSummary } from '../lambdas/core/summary';

/** Added to `k6 run` so the export has what the summary needs (count, p99); last, so it wins over user flags. */
export const K6_SUMMARY_TREND_STATS = 'avg,min,med,max,p(90),p(95),p(99),count';

const metricValues = z.record(z.string(), z.unknown());
const summaryExport = z.object({ metrics: z.record(z.string(), metricValues) });

export function k6SummaryFlags(exportPath: string): string[] {
  return [`--summary-export=${exportPath}`, `--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`];
}

export interface RunFacts {
  runner: number;
  exitCode: number;
  durationMs: number;
}

/** Throws when the export is not k6's summary shape; the wrapper then prints no summary line. */
export function k6SummaryToRunnerSummary(exported: unknown, facts: RunFacts): RunnerSummary {
  const { metrics } = summaryExport.parse(exported);
  const num = (metric: string, field: string): number | undefined => {
    const v = metrics[metric]?.[field];
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };

  const requests = num('http_reqs', 'count') ?? 0;
  const failedRate = num('http_req_failed', 'value');
  const failed = num('http_req_failed', 'passes') ?? (failedRate === undefined ? 0 : Math.round(failedRate * requests));
  const latencyCount = num('http_req_duration', 'count') ?? requests;
  const max = num('http_req_duration', 'max') ?? 0;

  return {
    engine: 'k6',
    runner: facts.runner,
    exitCode: facts.exitCode,
    simulated: false,
    durationMs: Math.max(0, facts.durationMs),
    requests: { count: requests, failed },
    iterations: num('iterations', 'count') ?? 0,
    latency: {
      count: latencyCount,
      sum: (num('http_req_duration', 'avg') ?? 0) * latencyCount,
      min: num('http_req_duration', 'min') ?? 0,
      max,
      p90: num('http_req_duration', 'p(90)') ?? max,
      p95: num('http_req_duration', 'p(95)') ?? max,
      // Missing only if k6 ignored our trend stats; max is then the honest upper bound.
      p99: num('http_req_duration', 'p(99)') ?? max,
    },
    dataReceivedBytes: num('data_received', 'count') ?? 0,
    dataSentBytes: num('data_sent', 'count') ?? 0,
    thresholds: Object.entries(metrics).flatMap(([metric, values]) => {
      const t = values.thresholds;
      if (typeof t !== 'object' || t === null) return [];
      return Object.entries(t as Record<string, unknown>).map(([expression, failed]) => ({
        metric,
        expression,
        ok: failed !== true,
      }));
    }),
  };
}
