/**
 * Metrics as plain values, published one embedded-metric-format document per dimension set: in one
 * EMF document every metric shares the document's dimensions, so RunsEnded (by Outcome) and
 * StageDuration (by Stage) flushed together would each be split by the other's dimension. Dimensions
 * are low-cardinality only (stage, outcome, result); the run id goes in the document's metadata,
 * where a log search finds it without creating a metric per run.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { MetricUnit } from '@aws-lambda-powertools/metrics/types';

export interface MetricPoint {
  name: string;
  unit: MetricUnit;
  value: number;
  /** Besides Powertools' default `service`. */
  dimensions: Record<string, string>;
}

/** Run id and stage of the invocation: metadata on every document (every line of a run carries both). */
export interface MetricContext {
  runId: string;
  stage: string;
}

export function publishMetricPoints(metrics: Metrics, points: MetricPoint[], context: MetricContext): void {
  const bySet = new Map<string, MetricPoint[]>();
  for (const point of points) {
    const key = JSON.stringify(Object.entries(point.dimensions).sort(([a], [b]) => a.localeCompare(b)));
    bySet.set(key, [...(bySet.get(key) ?? []), point]);
  }
  for (const group of bySet.values()) {
    metrics.addDimensions(group[0]!.dimensions);
    for (const point of group) metrics.addMetric(point.name, point.unit, point.value);
    metrics.addMetadata('runId', context.runId);
    metrics.addMetadata('stage', context.stage);
    metrics.publishStoredMetrics();
  }
}
