/**
 * A k6 runner's `GET /v1/metrics` answer → its live reading (engine-adapter.ts, LiveReading).
 *
 * The document is k6's REST API JSON:API list (grafana/k6 api/v1/metric_jsonapi.go, metric.go;
 * metrics/sink.go): `{ data: [ { type: 'metrics', id, attributes: { type, contains, tainted, sample } } ] }`,
 * one entry per metric observed so far, `sample` the sink's Format: counter `{count, rate}`, gauge
 * `{value}`, rate `{rate}`, trend `{avg, min, med, max, p(90), p(95)}` (always those, whatever
 * --summary-trend-stats says). A metric not observed yet (no request made) counts 0.
 *
 * `http_req_failed` is a rate (failed / all requests) with no count of its own: failed requests are
 * that rate times `http_reqs`' count, rounded (each request adds one sample to both).
 */

import type { LiveReading } from '../engine-adapter';

type Sample = Record<string, unknown>;

/** The samples by metric id; undefined when the body is not k6's metrics document. */
function samplesOf(body: unknown): Map<string, Sample> | undefined {
  const data = (body as { data?: unknown } | null | undefined)?.data;
  if (!Array.isArray(data)) return undefined;
  const samples = new Map<string, Sample>();
  for (const entry of data as { id?: unknown; attributes?: { sample?: unknown } }[]) {
    const sample = entry?.attributes?.sample;
    if (typeof entry?.id === 'string' && typeof sample === 'object' && sample !== null) samples.set(entry.id, sample as Sample);
  }
  return samples;
}

/** A finite, non-negative number, or undefined. */
function figure(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export function liveReadingFromK6Metrics(body: unknown): LiveReading | undefined {
  const samples = samplesOf(body);
  if (!samples) return undefined;
  const value = (id: string, key: string) => figure(samples.get(id)?.[key]) ?? 0;
  const requests = value('http_reqs', 'count');
  const failedRate = Math.min(1, value('http_req_failed', 'rate'));
  const duration = samples.get('http_req_duration');
  return {
    requests,
    failed: Math.round(failedRate * requests),
    iterations: value('iterations', 'count'),
    vus: value('vus', 'value'),
    dataReceivedBytes: value('data_received', 'count'),
    dataSentBytes: value('data_sent', 'count'),
    p95: requests > 0 ? (figure(duration?.['p(95)']) ?? null) : null,
  };
}
