/**
 * k6's `--summary-export` JSON → the run's per-runner result (RunnerSummary, lambdas/core/summary.ts).
 *
 * A k6 runner pod runs the stock `grafana/k6` image: `k6 run … --summary-export=<file>
 * --summary-trend-stats=<K6_SUMMARY_TREND_STATS>`, then its script prints one log line,
 * RESULT_LINE_PREFIX + the file's content with CR/LF removed (lambdas/core/runner-contract.ts).
 * Collect reads that line (parseK6ResultLine) and converts it (runnerSummaryFromK6Export).
 *
 * What k6 writes — checked in grafana/k6's source at v1.0.0, v1.8.1 (newest 1.x), v2.0.0, v2.2.0 (newest
 * 2.x) and master 8788307 (2026-08-21); the shape is the same in all of them:
 *
 * - `internal/js/summary.go` `summarizeMetricsToObject` builds `{root_group, options, state, metrics,
 *   setup_data}`; `internal/js/summary-wrapper.js` `oldJSONSummary` then DELETES `options` and `state`
 *   (so the export has no `state.testRunDurationMs`), flattens each metric to its `values`, renames a
 *   rate metric's `rate` to `value`, turns `root_group.groups` / `.checks` into objects keyed by name,
 *   and writes `JSON.stringify(results, null, 4)`. Top-level keys: `root_group`, `metrics`, and
 *   `setup_data` only when setup() returned something.
 * - Metric values (`summary.go` `metricValueGetter`, `metrics/sink.go`):
 *   counter `{count, rate}` (rate = count / test-run duration in s, 0 when the duration is 0);
 *   gauge `{value, min, max}`; rate `{value, passes, fails}` where `passes` counts NON-ZERO samples —
 *   for `http_req_failed` that is the FAILED requests, `value` their share;
 *   trend: exactly the `--summary-trend-stats` columns, keyed as written (`avg`, `min`, `med`, `max`,
 *   `count`, `p(95)`, `p(99.9)`…), values in ms for time trends whatever `--summary-time-unit` says.
 *   An empty trend (a threshold's metric that got no samples) reports 0 for every stat.
 * - Thresholds: `metrics[name].thresholds = { "<expression as written>": !threshold.ok }`, i.e.
 *   `true` means the threshold FAILED (`oldJSONSummary`: `oldFormatMetric.thresholds[thresholdName] =
 *   !threshold.ok`; `ok` is `!threshold.LastFailed`). Same in 1.x and 2.x. A threshold on a submetric
 *   makes that submetric its own entry, named `parent{tags as written}` (`metrics/metric.go`
 *   `AddSubmetric`: `m.Name + "{" + keyValues + "}"`), e.g. `http_req_duration{status:200}`; k6 also
 *   always adds `http_req_duration{expected_response:true}` (`internal/metrics/engine/engine.go`).
 * - Only observed metrics appear: a script without HTTP has no `http_*` (and usually no `data_*`).
 * - `--summary-export` is still honoured when the script exports handleSummary(): the wrapper adds the
 *   export to handleSummary's returned map (k6's own test `TestRawHandleSummaryData`). It is written in
 *   every summary mode except `disabled` (`--summary-mode=disabled`, and 1.x's deprecated
 *   `--no-summary`, skip the whole end-of-test summary, export included: `internal/cmd/run.go`).
 *   2.0 removed `--no-summary` and `--summary-mode=legacy` (`release notes/v2.0.0.md`) but NOT
 *   `--summary-export`, nor `K6_SUMMARY_EXPORT` (`internal/cmd/runtime_options.go`).
 *   `--new-machine-readable-summary` / `K6_NEW_MACHINE_READABLE_SUMMARY=true` (since 1.5.0, still
 *   opt-in and default false in 2.2.0 and master) replaces the export with another shape
 *   (`{config, metadata, results, version}`); this converter refuses it with a clear error.
 * - Percentiles (`metrics/sink.go` `TrendSink.P`): sort the samples, `i = pct * (count - 1)`, return
 *   `values[floor(i)] + (values[ceil(i)] - values[floor(i)]) * (i - floor(i))` — linear interpolation
 *   between the two neighbouring order statistics (P(0) = min, P(1) = max); hence `relativeError: 0`.
 */
import * as z from 'zod';
import { RESULT_LINE_PREFIX } from '../../core/runner-contract';
import { runnerSummarySchema, type RunnerSummary } from '../../core/summary';
import type { RunnerFacts } from '../engine-adapter';

/**
 * The trend stats loadplane asks k6 for: `count` (k6's static resolvers are avg, min, med, max, count)
 * and every percentile from p(50) to p(99) plus p(99.5) and p(99.9) (k6 accepts `p(<float in
 * 0..100>)`: `metrics/sample.go` `parsePercentile`). k6 computes them all from one sorted copy of the
 * samples. The spec may not pass its own `--summary-trend-stats` (core/k6-argument-rules.ts); the command line
 * wins over a script's `options.summaryTrendStats`, so a script's own handleSummary sees these stats.
 */
export const K6_SUMMARY_TREND_STATS: string = [
  'avg',
  'min',
  'med',
  'max',
  'count',
  ...Array.from({ length: 50 }, (_, i) => `p(${50 + i})`),
  'p(99.5)',
  'p(99.9)',
].join(',');

/**
 * The two flags the runner adds last to `k6 run`. `--summary-export` is a string flag, so the last one
 * wins over a user's; `--summary-trend-stats` appends (see K6_SUMMARY_TREND_STATS).
 */
export function k6SummaryFlags(exportPath: string): string[] {
  return [`--summary-export=${exportPath}`, `--summary-trend-stats=${K6_SUMMARY_TREND_STATS}`];
}

/**
 * The percentile (0..100) a trend stat names, by k6's rule (`p(` + a float in [0, 100] + `)`), or
 * undefined for anything else (`avg`, `med`, `count`, …).
 */
export function trendStatPercentile(stat: string): number | undefined {
  const m = /^p\(([^)]*)\)$/.exec(stat);
  if (!m || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(m[1]!)) return undefined;
  const p = Number(m[1]);
  return Number.isFinite(p) && p >= 0 && p <= 100 ? p : undefined;
}

const thresholdsSchema = z.record(z.string(), z.boolean());
/**
 * One flattened metric: numbers, plus `thresholds` (expression → failed). A value that is not a number
 * (k6 writes `null` for a custom trend that saw Infinity) is dropped rather than failing the runner's
 * whole result: only the built-in metrics read here must be whole (REQUIRED below).
 */
const metricSchema = z
  .object({ thresholds: thresholdsSchema.optional() })
  .catchall(z.unknown())
  .transform((metric) =>
    Object.fromEntries(Object.entries(metric).filter(([key, value]) => key === 'thresholds' || (typeof value === 'number' && Number.isFinite(value)))),
  ) as unknown as z.ZodType<{ thresholds?: Record<string, boolean> } & Record<string, number>>;
type ExportedMetric = z.infer<typeof metricSchema>;
const exportSchema = z
  .object({
    metrics: z.record(z.string(), metricSchema),
    root_group: z.looseObject({}).optional(),
    // Not in k6's export (oldJSONSummary deletes it); honoured if a future k6 keeps it.
    state: z.looseObject({ testRunDurationMs: z.number().nonnegative().optional() }).optional(),
  })
  .loose();
type SummaryExport = z.infer<typeof exportSchema>;

const NOT_K6 = "not k6's --summary-export JSON";

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `[${JSON.stringify(String(p))}]`)).join('') || '(top level)';
}

function parseExport(exported: unknown): SummaryExport {
  if (typeof exported === 'object' && exported !== null && !Array.isArray(exported) && !('metrics' in exported)) {
    if ('results' in exported && 'version' in exported) {
      throw new Error(
        `${NOT_K6}: this is k6's machine-readable summary (--new-machine-readable-summary / K6_NEW_MACHINE_READABLE_SUMMARY); ` +
          'loadplane reads the default (legacy) export shape',
      );
    }
  }
  const parsed = exportSchema.safeParse(exported);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${pathText(i.path)}: ${i.message}`);
    const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
    throw new Error(`${NOT_K6}: ${issues.join('; ')}${more}`);
  }
  return parsed.data;
}

/** The fields a k6 metric of each type always has in the export. */
const REQUIRED: Readonly<Record<string, { fields: string[]; type: string }>> = {
  http_reqs: { fields: ['count', 'rate'], type: 'counter' },
  iterations: { fields: ['count', 'rate'], type: 'counter' },
  data_received: { fields: ['count', 'rate'], type: 'counter' },
  data_sent: { fields: ['count', 'rate'], type: 'counter' },
  http_req_failed: { fields: ['value', 'passes', 'fails'], type: 'rate' },
};

/**
 * Converts k6's export (already JSON-parsed) into the runner's result. Throws an Error saying what is
 * wrong when `exported` is not k6's export shape.
 *
 * - requests = `http_reqs.count`; failed = `http_req_failed.passes`; iterations = `iterations.count`;
 *   droppedIterations = `dropped_iterations.count` (a counter k6 pushes only when an iteration is
 *   dropped, `lib/executor/*_arrival_rate.go`, `per_vu_iterations.go`, `shared_iterations.go`: absent
 *   is 0); vusMax = `vus_max.max` (a gauge);
 *   data = `data_received.count` / `data_sent.count` (bytes); 0 when k6 did not observe the metric.
 * - latency = `http_req_duration`: count (else http_reqs.count), sum = avg × count, min, max, p90/p95/p99
 *   (each falls back to max, an upper bound, when absent), quantiles = every `p(N)` stat as q = N/100
 *   (plus `med` as 0.5 when p(50) is absent), sorted; none when there were no samples.
 * - thresholds: every metric's (submetrics included), `ok = !exported`, sorted by metric then expression.
 * - durationMs: `state.testRunDurationMs` if present; else k6's test-run duration recovered from a
 *   built-in counter (count / rate, k6 divides by that duration: `metrics/sink.go` CounterSink.Rate),
 *   rounded to ms; else facts.durationMs.
 */
export function runnerSummaryFromK6Export(exported: unknown, facts: RunnerFacts): RunnerSummary {
  const { metrics, state } = parseExport(exported);
  for (const [name, { fields, type }] of Object.entries(REQUIRED)) {
    const metric = metrics[name];
    const missing = metric && fields.filter((f) => metric[f] === undefined);
    if (missing && missing.length > 0) {
      throw new Error(`${NOT_K6}: metrics["${name}"] lacks ${missing.join(', ')} (k6 exports a ${type} as {${fields.join(', ')}})`);
    }
  }
  // Every field but `thresholds` is a finite number (metricSchema drops the rest); no field read here is `thresholds`.
  const num = (metric: string, field: string): number | undefined => metrics[metric]?.[field];

  const requests = Math.round(num('http_reqs', 'count') ?? 0);
  const failed = Math.round(num('http_req_failed', 'passes') ?? 0);
  const trend = metrics.http_req_duration;
  const latencyCount = Math.round(num('http_req_duration', 'count') ?? (trend ? requests : 0));
  const empty = latencyCount === 0;
  const max = empty ? 0 : (num('http_req_duration', 'max') ?? 0);
  const stat = (key: string) => (empty ? 0 : (num('http_req_duration', key) ?? max));

  const vusMax = num('vus_max', 'max') ?? num('vus_max', 'value');
  const summary = {
    engine: 'k6' as const,
    runner: facts.runner,
    exitCode: facts.exitCode,
    simulated: facts.simulated,
    durationMs: runDurationMs(metrics, state) ?? Math.max(0, facts.durationMs),
    requests: { count: requests, failed },
    iterations: Math.round(num('iterations', 'count') ?? 0),
    // A counter appears only once observed: no dropped_iterations is none dropped.
    droppedIterations: Math.round(num('dropped_iterations', 'count') ?? 0),
    ...(vusMax === undefined ? {} : { vusMax: Math.round(vusMax) }),
    latency: {
      count: latencyCount,
      sum: empty ? 0 : (num('http_req_duration', 'avg') ?? 0) * latencyCount,
      min: empty ? 0 : (num('http_req_duration', 'min') ?? 0),
      max,
      p90: stat('p(90)'),
      p95: stat('p(95)'),
      // Absent only if k6 ignored our trend stats; max is then the honest upper bound.
      p99: stat('p(99)'),
      quantiles: empty || !trend ? [] : quantilesOf(trend),
      relativeError: 0,
    },
    dataReceivedBytes: num('data_received', 'count') ?? 0,
    dataSentBytes: num('data_sent', 'count') ?? 0,
    thresholds: Object.entries(metrics)
      .flatMap(([metric, values]) =>
        Object.entries(values.thresholds ?? {}).map(([expression, failedThreshold]) => ({ metric, expression, ok: !failedThreshold })),
      )
      .sort((a, b) => compare(a.metric, b.metric) || compare(a.expression, b.expression)),
  } satisfies RunnerSummary;

  const checked = runnerSummarySchema.safeParse(summary);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new Error(`${NOT_K6}: it gives an impossible result (${pathText(issue.path)}: ${issue.message})`);
  }
  return summary;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every `p(N)` stat of a trend as (N/100, value), plus `med` as 0.5 when p(50) is absent; sorted, one per level. */
function quantilesOf(trend: ExportedMetric): { q: number; value: number }[] {
  const byLevel = new Map<number, number>();
  for (const [key, value] of Object.entries(trend)) {
    // `thresholds`, the one field that is no number, names no percentile.
    const p = trendStatPercentile(key);
    // Exactly the level k6 used (TrendSink.P(pct / 100): p(99.9) is 0.9990000000000001), so the
    // bracket's rank arithmetic (percentile-bracket.ts) matches k6's to the sample.
    if (p !== undefined) byLevel.set(p / 100, value as number);
  }
  if (!byLevel.has(0.5) && typeof trend.med === 'number') byLevel.set(0.5, trend.med);
  return [...byLevel].sort(([a], [b]) => a - b).map(([q, value]) => ({ q, value }));
}

const DURATION_COUNTERS = ['http_reqs', 'iterations', 'data_sent', 'data_received'];

/** k6's test-run duration in ms: from `state` if a k6 ever exports it, else count / rate of the largest built-in counter. */
function runDurationMs(metrics: SummaryExport['metrics'], state: SummaryExport['state']): number | undefined {
  if (state?.testRunDurationMs !== undefined) return state.testRunDurationMs;
  let best: { count: number; rate: number } | undefined;
  for (const name of DURATION_COUNTERS) {
    // A built-in counter that is there has both its count and its rate (REQUIRED).
    const counter = metrics[name];
    if (!counter) continue;
    const { count, rate } = counter as { count: number; rate: number };
    if (count <= 0 || rate <= 0) continue;
    if (!best || count > best.count) best = { count, rate };
  }
  return best ? Math.round((best.count / best.rate) * 1000) : undefined;
}

/**
 * The JSON of the last log line that starts with RESULT_LINE_PREFIX, or undefined when there is no
 * such line or the last one does not parse (a truncated line is not replaced by an older one).
 */
export function parseK6ResultLine(log: string): unknown | undefined {
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    // A CRLF line's CR is JSON whitespace: it needs no stripping.
    const line = lines[i]!;
    if (!line.startsWith(RESULT_LINE_PREFIX)) continue;
    try {
      return JSON.parse(line.slice(RESULT_LINE_PREFIX.length)) as unknown;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
