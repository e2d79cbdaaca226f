/**
 * The report page against the run's history: the trend of the last TREND_RUNS runs of its
 * name (each run's p95 bracket, error rate and request rate, oldest first, this run marked) and this
 * run's deltas against its baseline, from Collect's comparison (CollectRecord.regression). Pure: the
 * history is read by run-report.ts (ledger/run-figures.ts), the markup is report-trend-html.ts's.
 */
import type { Bracket } from '../core/percentile-bracket';
import { baselineComparison, comparableResult, requestRate, type BaselineComparison, type RegressionRecord } from '../core/regression';
import { Stage } from '../core/status';
import type { RunFigures, RunView } from '../ledger/ledger';
import type { CollectRecord } from '../stages/collect';
import { outputOf } from '../stages/run-context';

/** Runs of the name the trend chart shows: the newest ones. */
export const TREND_RUNS = 20;

export interface TrendPoint {
  runId: string;
  createdAt: string;
  /** The outcome, or the status while the run is in flight. */
  outcome: string;
  /** Null before a result was collected (or without samples / requests). */
  p95: Bracket | null;
  errorRatePercent: number | null;
  requestRate: number | null;
  /** The run the report is of. */
  current: boolean;
}

export interface ReportTrend {
  name: string;
  /** Oldest first. */
  points: TrendPoint[];
  /** The report's run is not among the newest TREND_RUNS (an older run's report). */
  currentOutside: boolean;
}

/** The run against its baseline as every surface shows it (core/regression.ts): each figure's change in its limit's terms. */
export type ReportBaseline = BaselineComparison;
export type BaselineDelta = BaselineComparison['figures'][number];

/** The history as the chart draws it: newest-first runs (ledger) → oldest first, this run marked. */
export function reportTrend(name: string, history: readonly RunFigures[], runId: string): ReportTrend {
  const points = [...history].reverse().map((run): TrendPoint => {
    const result = comparableResult(run.summary);
    const requested = result !== undefined && result.requests > 0;
    return {
      runId: run.runId,
      createdAt: run.createdAt,
      outcome: run.outcome ?? run.status,
      p95: result && result.latency.count > 0 ? { lo: result.latency.p95.lo, hi: result.latency.p95.hi } : null,
      errorRatePercent: requested ? result.errorRate * 100 : null,
      requestRate: result ? (requestRate(result) ?? null) : null,
      current: run.runId === runId,
    };
  });
  return { name, points, currentOutside: !points.some((p) => p.current) };
}

/** Collect's comparison with the baseline, each figure with its change; undefined when the run was not compared. */
export function reportBaseline(view: RunView): ReportBaseline | undefined {
  const record: RegressionRecord | undefined = outputOf<CollectRecord>(view, Stage.Collect)?.regression;
  return record ? baselineComparison(record) : undefined;
}
