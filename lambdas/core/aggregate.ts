/**
 * Collect's arithmetic (architecture §3.7): one RunResult from the runners' results.
 * Counts and totals are summed, min/max are exact, the mean is weighted by sample count. Percentiles
 * cannot be combined from per-runner percentiles, so they are never averaged (the mistake of DLT):
 * each runner keeps its own, and the run reports, for p90, p95 and p99, a bracket [lo, hi] computed
 * from every runner's count, min, max and grid of percentiles (percentile-bracket.ts): for k6's exact
 * percentiles it always holds the run's exact one (the one of all samples pooled); for Gatling's
 * rounded t-digest estimates (relativeError > 0) it is an estimate. Neither the worst
 * runner's value nor the range of the runners' values is such a bound under k6's interpolated
 * percentiles (two runners {0, 10} both report p90 = 9; pooled, p90 is 10).
 */
import { percentileBracketer, type Bracket } from './percentile-bracket';
import type { RunnerSummary } from './summary';

export interface LatencyTotals {
  /** Samples over all runners. */
  count: number;
  /** Sum of all samples (ms). */
  sum: number;
  /** Exact: the smallest runner min and the largest runner max (runners without samples do not count). */
  min: number;
  max: number;
  /** sum / count: each runner weighs by its sample count, never a mean of means. 0 without samples. */
  mean: number;
  /** Where the run's exact percentile lies; [0, 0] without samples. */
  p90: Bracket;
  p95: Bracket;
  p99: Bracket;
}

export interface RunResult {
  expectedRunners: number;
  /** One summary per runner index that reported, sorted by index: per-runner percentiles, exit codes and thresholds. */
  runners: RunnerSummary[];
  /** Indexes 0..expectedRunners-1 with no summary: those runners died before they printed one. */
  missingRunners: number[];
  /**
   * Indexes given more than once. Collect reads each runner's newest pod only, so this stays empty from
   * it; for any other caller, the last summary given for an index wins.
   */
  duplicateRunners: number[];
  /** Summaries whose index is outside 0..expectedRunners-1: not counted in any total; the run fails on them. */
  unexpectedRunners: number[];
  requests: number;
  failedRequests: number;
  /** failedRequests / requests, 0 when there were no requests. */
  errorRate: number;
  iterations: number;
  dataReceivedBytes: number;
  dataSentBytes: number;
  latency: LatencyTotals;
  /** The longest runner's duration: runners run concurrently. */
  durationMs: number;
  /** True when any runner's numbers are synthetic (kube-sim): they must be shown as such. */
  simulated: boolean;
}

export function aggregateResults(expectedRunners: number, summaries: RunnerSummary[]): RunResult {
  const byIndex = new Map<number, RunnerSummary>();
  const duplicates = new Set<number>();
  const unexpected = new Set<number>();
  for (const summary of summaries) {
    if (summary.runner >= expectedRunners) {
      unexpected.add(summary.runner);
      continue;
    }
    if (byIndex.has(summary.runner)) duplicates.add(summary.runner);
    byIndex.set(summary.runner, summary);
  }
  const runners = [...byIndex.values()].sort((a, b) => a.runner - b.runner);
  const missingRunners = Array.from({ length: expectedRunners }, (_, i) => i).filter((i) => !byIndex.has(i));

  const requests = sum(runners, (r) => r.requests.count);
  const failedRequests = sum(runners, (r) => r.requests.failed);
  return {
    expectedRunners,
    runners,
    missingRunners,
    duplicateRunners: sorted(duplicates),
    unexpectedRunners: sorted(unexpected),
    requests,
    failedRequests,
    errorRate: requests === 0 ? 0 : failedRequests / requests,
    iterations: sum(runners, (r) => r.iterations),
    dataReceivedBytes: sum(runners, (r) => r.dataReceivedBytes),
    dataSentBytes: sum(runners, (r) => r.dataSentBytes),
    latency: latencyTotals(runners),
    durationMs: Math.max(0, ...runners.map((r) => r.durationMs)),
    simulated: runners.some((r) => r.simulated),
  };
}

function latencyTotals(runners: RunnerSummary[]): LatencyTotals {
  // A runner without samples reports zeros that are not measurements; they must not become the min.
  const sampled = runners.map((r) => r.latency).filter((l) => l.count > 0);
  const count = sum(sampled, (l) => l.count);
  const total = sum(sampled, (l) => l.sum);
  // The runners' own grids only: a field standing in for a level the engine did not print (Gatling's
  // p90) is no order statistic of that level, and would break the bracket's guarantee.
  const bracketer = percentileBracketer(sampled);
  const at = (q: number): Bracket => bracketer?.(q) ?? { lo: 0, hi: 0 };
  return {
    count,
    sum: total,
    min: sampled.length === 0 ? 0 : Math.min(...sampled.map((l) => l.min)),
    max: Math.max(0, ...sampled.map((l) => l.max)),
    mean: count === 0 ? 0 : total / count,
    p90: at(0.9),
    p95: at(0.95),
    p99: at(0.99),
  };
}

/**
 * A RunResult read back from the ledger. One recorded before percentiles were bracketed carries the
 * worst runner's value as `p90UpperBound`…: it reads as the bracket [min, that value], which is what it claimed.
 */
export function storedRunResult(stored: RunResult): RunResult {
  const latency = stored.latency as LatencyTotals & Partial<Record<'p90UpperBound' | 'p95UpperBound' | 'p99UpperBound', number>>;
  if (latency.p95 !== undefined) return stored;
  // Every version that wrote these bounds wrote min 0 for a run without samples: min is the bracket's lo either way.
  const legacy = (bound: number | undefined): Bracket => ({ lo: latency.min, hi: bound ?? latency.max });
  const { p90UpperBound, p95UpperBound, p99UpperBound, ...rest } = latency;
  return { ...stored, latency: { ...rest, p90: legacy(p90UpperBound), p95: legacy(p95UpperBound), p99: legacy(p99UpperBound) } };
}

function sum<T>(items: T[], pick: (item: T) => number): number {
  return items.reduce((acc, item) => acc + pick(item), 0);
}

function sorted(indexes: Set<number>): number[] {
  return [...indexes].sort((a, b) => a - b);
}
