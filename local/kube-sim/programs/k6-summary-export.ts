/**
 * What a simulated k6 runner leaves in its `--summary-export` file: k6 1.x's export shape (also 2.x's:
 * the format did not change, see lambdas/engines/k6/summary-export.ts for the source references),
 * rendered from kube-sim's synthetic numbers. The runner prints it on the LOADPLANE_RESULT line, so
 * Collect parses exactly what it parses from a real k6.
 *
 * Shape, as k6's `oldJSONSummary` writes it: `{ root_group, metrics }`; each metric flattened to its
 * values — counter `{count, rate}`, gauge `{value, min, max}`, rate `{passes, fails, value}`, trend one
 * key per `--summary-trend-stats` entry — plus `thresholds: { expression: failed }` where a threshold
 * is set. Only observed metrics appear: no `http_*` without requests; a threshold's metric appears
 * even without samples (all zeros), as does a submetric's parent.
 *
 * Simplifications (numbers only, never keys or types): the http_req_* phases are fixed shares of
 * http_req_duration; submetrics (`http_req_duration{status:200}`, `{expected_response:true}`) reuse
 * their parent's distribution (with the right count for expected_response); iteration_duration reuses
 * the latency distribution unless given; root_group lists no groups or checks.
 */
import { trendStatPercentile } from '../../../lambdas/engines/k6/summary-export';
import { baseMetric, METRIC_TYPES, parseThresholdExpression } from './k6-thresholds';

/** k6's trend stats when `--summary-trend-stats` is absent (grafana/k6 lib/options.go DefaultSummaryTrendStats). */
export const K6_DEFAULT_TREND_STATS: readonly string[] = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

/** The synthetic numbers of one simulated k6 runner. */
export interface SimulatedK6Metrics {
  /** HTTP requests made (http_reqs). 0: no http_* metric is observed. */
  requests: number;
  /** Requests that failed (http_req_failed's non-zero samples, k6's `passes`). */
  failedRequests: number;
  /** Completed iterations (iterations counter, iteration_duration count). */
  iterations: number;
  dataReceivedBytes: number;
  dataSentBytes: number;
  /** Iterations dropped (dropped_iterations, a counter: only in the export when above 0, as k6 pushes it only on a drop). */
  droppedIterations?: number;
  /** The vus gauge at the end; vus_max defaults to it. */
  vus: number;
  vusMax?: number;
  /** http_req_duration: number of samples (normally = requests). */
  latencyCount: number;
  /** Sum of the http_req_duration samples, ms (avg = sum / count). */
  latencySum: number;
  /** http_req_duration's p-th percentile (p in 0..100) in ms: 0 is the min, 50 the median, 100 the max. Non-decreasing. */
  latencyQuantile: (p: number) => number;
  /** iteration_duration's percentile and mean (ms); default: the latency's. */
  iterationDurationQuantile?: (p: number) => number;
  iterationDurationMean?: number;
  /** The `checks` rate metric; absent: the script makes no checks. */
  checks?: { passes: number; fails: number };
}

export interface SimulatedThreshold {
  /** As the script names it, submetrics included: `http_req_duration{status:200}`. */
  metric: string;
  expression: string;
  ok: boolean;
}

type Values = Record<string, number>;
type ExportedMetric = Record<string, number | Record<string, boolean>>;

export interface SimulatedK6Export {
  root_group: { name: string; path: string; id: string; groups: Record<string, unknown>; checks: Record<string, unknown> };
  metrics: Record<string, ExportedMetric>;
}

/** md5("") — k6's root group id (lib/models.go NewGroup). */
/** k6's root group id: md5 of the empty path. */
export const ROOT_GROUP_ID = 'd41d8cd98f00b204e9800998ecf8427e';

/** http_req_duration = sending + waiting + receiving; the phases as fixed shares of it. */
const PHASES: [string, number][] = [
  ['http_req_sending', 0.01],
  ['http_req_waiting', 0.96],
  ['http_req_receiving', 0.03],
  ['http_req_blocked', 0.002],
  ['http_req_connecting', 0],
  ['http_req_tls_handshaking', 0],
];

const STATIC_STATS = new Set(['avg', 'min', 'med', 'max', 'count']);

/**
 * k6's error for a `--summary-trend-stats` list it refuses (grafana/k6 metrics/sample.go
 * GetResolversForTrendColumns / parsePercentile), or undefined when k6 accepts it.
 */
export function trendStatsProblem(stats: readonly string[]): string | undefined {
  for (const stat of stats) {
    if (STATIC_STATS.has(stat) || trendStatPercentile(stat) !== undefined) continue;
    if (!stat.startsWith('p(') || !stat.endsWith(')')) return `invalid trend stat '${stat}', unknown format`;
    return `invalid percentile trend stat value '${stat}', provide a number between 0 and 100`;
  }
  return undefined;
}

/**
 * The trend stats a k6 argv asks for: each `--summary-trend-stats` value split on commas (pflag
 * StringSlice: the first occurrence replaces k6's default, later ones APPEND); k6's default when the
 * flag is absent. (K6_SUMMARY_TREND_STATS and the script's options.summaryTrendStats are not simulated.)
 */
export function trendStatsFromArgv(engineArgv: readonly string[]): string[] {
  let stats: string[] | undefined;
  for (let i = 0; i < engineArgv.length; i++) {
    const arg = engineArgv[i]!;
    let value: string | undefined;
    if (arg.startsWith('--summary-trend-stats=')) value = arg.slice('--summary-trend-stats='.length);
    else if (arg === '--summary-trend-stats') value = engineArgv[++i];
    if (value === undefined) continue;
    const parts = value === '' ? [] : value.split(',');
    stats = stats === undefined ? parts : [...stats, ...parts];
  }
  return stats ?? [...K6_DEFAULT_TREND_STATS];
}

/** A quantile function interpolating linearly between known (percentile 0..100, value) points, sorted by percentile. */
export function interpolatedQuantile(points: readonly (readonly [number, number])[]): (p: number) => number {
  return (p) => {
    if (points.length === 0) return 0;
    if (p <= points[0]![0]) return points[0]![1];
    for (let i = 1; i < points.length; i++) {
      const [p0, v0] = points[i - 1]!;
      const [p1, v1] = points[i]!;
      if (p <= p1) return p1 === p0 ? v1 : v0 + ((v1 - v0) * (p - p0)) / (p1 - p0);
    }
    return points[points.length - 1]![1];
  };
}

/**
 * k6's summary export for the simulated numbers. `trendStats`: the `--summary-trend-stats` list
 * (trendStatsFromArgv); thresholds with their outcome (the export stores `!ok`); `durationMs`: the test
 * run's duration, which counters' `rate` divides by (0 → rate 0, as in k6). Throws k6's error when a
 * trend stat is one k6 refuses.
 */
export function simulatedK6Export(input: SimulatedK6Metrics, trendStats: string[], thresholds: SimulatedThreshold[], durationMs: number): SimulatedK6Export {
  const problem = trendStatsProblem(trendStats);
  if (problem) throw new Error(problem);
  const stats = [...new Set(trendStats)];
  const seconds = durationMs / 1000;

  const counter = (count: number): Values => ({ count, rate: seconds > 0 ? count / seconds : 0 });
  const rate = (passes: number, total: number): Values => ({ passes, fails: total - passes, value: total > 0 ? passes / total : 0 });
  const gauge = (value: number): Values => ({ value, min: value, max: value });
  const trend = (count: number, mean: number, quantile: (p: number) => number): Values => {
    const empty = count === 0;
    const value = (stat: string): number => {
      if (empty) return 0;
      switch (stat) {
        case 'avg':
          return mean;
        case 'count':
          return count;
        case 'min':
          return quantile(0);
        case 'max':
          return quantile(100);
        case 'med':
          return quantile(50);
      }
      return quantile(trendStatPercentile(stat)!);
    };
    return Object.fromEntries(stats.map((stat) => [stat, value(stat)]));
  };

  const metrics: Record<string, Values> = {};
  const latencyMean = input.latencyCount > 0 ? input.latencySum / input.latencyCount : 0;
  if (input.requests > 0) {
    metrics.http_reqs = counter(input.requests);
    metrics.http_req_failed = rate(input.failedRequests, input.requests);
    metrics.http_req_duration = trend(input.latencyCount, latencyMean, input.latencyQuantile);
    const expected = input.latencyCount - Math.min(input.latencyCount, input.failedRequests);
    if (expected > 0) metrics['http_req_duration{expected_response:true}'] = trend(expected, latencyMean, input.latencyQuantile);
    for (const [name, share] of PHASES) {
      metrics[name] = trend(input.latencyCount, latencyMean * share, (p) => input.latencyQuantile(p) * share);
    }
  }
  if (input.iterations > 0) {
    metrics.iterations = counter(input.iterations);
    metrics.iteration_duration = trend(input.iterations, input.iterationDurationMean ?? latencyMean, input.iterationDurationQuantile ?? input.latencyQuantile);
  }
  if (input.droppedIterations) metrics.dropped_iterations = counter(input.droppedIterations);
  if (input.dataReceivedBytes > 0) metrics.data_received = counter(input.dataReceivedBytes);
  if (input.dataSentBytes > 0) metrics.data_sent = counter(input.dataSentBytes);
  if (input.checks) metrics.checks = rate(input.checks.passes, input.checks.passes + input.checks.fails);
  metrics.vus = gauge(input.vus);
  metrics.vus_max = gauge(input.vusMax ?? input.vus);

  // Thresholds' metrics are observed even without samples; a submetric reuses its parent's numbers.
  const emptyOf = (name: string, expression: string): Values => {
    switch (metricType(name, expression)) {
      case 'counter':
        return counter(0);
      case 'rate':
        return rate(0, 0);
      case 'gauge':
        return gauge(0);
      case 'trend':
        return trend(0, 0, () => 0);
    }
  };
  for (const t of thresholds) {
    const parent = baseMetric(t.metric);
    metrics[parent] ??= emptyOf(parent, t.expression);
    metrics[t.metric] ??= { ...metrics[parent] };
  }

  const exported: Record<string, ExportedMetric> = {};
  for (const name of Object.keys(metrics).sort()) exported[name] = { ...metrics[name]! };
  for (const t of thresholds) {
    const metric = exported[t.metric]!;
    const own = (metric.thresholds as Record<string, boolean> | undefined) ?? {};
    own[t.expression] = !t.ok;
    metric.thresholds = own;
  }
  return { root_group: { name: '', path: '', id: ROOT_GROUP_ID, groups: {}, checks: {} }, metrics: exported };
}

/** A metric's k6 type: built-in ones by name, custom ones by the aggregation their threshold uses. */
export function metricType(name: string, expression: string): 'counter' | 'rate' | 'gauge' | 'trend' {
  const known = METRIC_TYPES[baseMetric(name)];
  if (known) return known;
  const parsed = parseThresholdExpression(expression);
  if ('error' in parsed) return 'trend';
  switch (parsed.aggregation.kind) {
    case 'count':
      return 'counter';
    case 'rate':
      return 'rate';
    case 'value':
      return 'gauge';
    default:
      return 'trend';
  }
}
