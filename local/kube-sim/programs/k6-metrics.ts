/**
 * What a simulated k6 runner answers on `GET /v1/metrics`: k6's REST API metrics document, from the
 * same synthetic numbers its summary export will report (synthetic-summary.ts at the elapsed time), so
 * that a live reading taken at the test's end meets the final result exactly.
 *
 * Shape, from grafana/k6 (commit 87883075, api/v1/metric_jsonapi.go, api/v1/metric.go,
 * api/v1/metric_routes.go, metrics/sink.go):
 *   `{ "data": [ { "type": "metrics", "id": <name>, "attributes": { "type", "contains", "tainted", "sample" } } ] }`
 * - one entry per OBSERVED metric (MetricsEngine.ObservedMetrics): no http_* before the first request;
 * - `type`: counter | gauge | rate | trend; `contains`: default | time | data;
 * - `tainted`: a null.Bool, null unless a threshold marked the metric (kube-sim evaluates thresholds
 *   only at the end, so always null here);
 * - `sample` is the sink's Format(t), with t the current test run duration: counter `{count, rate}`
 *   (rate = count / t, 0 when t is 0), gauge `{value}`, rate `{rate}`, trend `{avg, max, med, min,
 *   p(90), p(95)}` (TrendSink.Format ignores --summary-trend-stats: "TODO: respect the
 *   summaryTrendStats for REST API"). Go's encoding/json writes map keys sorted; so does this.
 * k6 walks a Go map, so its entries come in no particular order; kube-sim lists them sorted by id.
 */
import type { SyntheticResult } from './synthetic-summary';

type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';
type Contains = 'default' | 'time' | 'data';

export interface K6MetricEntry {
  type: 'metrics';
  id: string;
  attributes: { type: MetricType; contains: Contains; tainted: boolean | null; sample: Record<string, number> };
}

export interface K6MetricsDocument {
  data: K6MetricEntry[];
}

/** Keys sorted, as encoding/json writes a map[string]float64. */
function sorted(sample: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(sample).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The metrics document of a runner whose synthetic result so far is `result` (its numbers at the
 * current elapsed time), with `vus` VUs active now and `vusMax` allocated.
 */
export function k6MetricsDocument(result: SyntheticResult, vus: number, vusMax: number): K6MetricsDocument {
  const seconds = result.durationMs / 1000;
  const counter = (count: number) => ({ count, rate: seconds > 0 ? count / seconds : 0 });
  const metrics: [string, MetricType, Contains, Record<string, number>][] = [];
  const { count, failed } = result.requests;
  const { latency } = result;
  if (count > 0) {
    const trend = { avg: latency.sum / latency.count, min: latency.min, med: latency.median, max: latency.max, 'p(90)': latency.p90, 'p(95)': latency.p95 };
    metrics.push(['http_reqs', 'counter', 'default', counter(count)]);
    metrics.push(['http_req_failed', 'rate', 'default', { rate: failed / count }]);
    metrics.push(['http_req_duration', 'trend', 'time', trend]);
    metrics.push(['iteration_duration', 'trend', 'time', trend]);
  }
  if (result.iterations > 0) metrics.push(['iterations', 'counter', 'default', counter(result.iterations)]);
  if (result.dataReceivedBytes > 0) metrics.push(['data_received', 'counter', 'data', counter(result.dataReceivedBytes)]);
  if (result.dataSentBytes > 0) metrics.push(['data_sent', 'counter', 'data', counter(result.dataSentBytes)]);
  metrics.push(['vus', 'gauge', 'default', { value: vus }]);
  metrics.push(['vus_max', 'gauge', 'default', { value: vusMax }]);
  return {
    data: metrics
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([id, type, contains, sample]) => ({ type: 'metrics', id, attributes: { type, contains, tainted: null, sample: sorted(sample) } })),
  };
}
