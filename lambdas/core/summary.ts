/**
 * One runner's result (architecture §3.7), as Collect reads it from the runner's log through its
 * engine's adapter (k6: the summary export the runner script prints; Gatling: its console summary)
 * and records it in the ledger. Percentiles are per runner; aggregation never averages them.
 */
import * as z from 'zod';

const trend = z.object({
  count: z.number().int().nonnegative(),
  /** Sum of all samples (ms), so a mean can be weighted by count across runners. */
  sum: z.number().nonnegative(),
  min: z.number().nonnegative(),
  max: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p95: z.number().nonnegative(),
  p99: z.number().nonnegative(),
  /**
   * Every percentile the engine reported, as (level in [0, 1], value in ms), sorted by level: k6 gives
   * p50…p99 in 1-point steps plus p99.5 and p99.9 (the trend stats loadplane asks for); Gatling its
   * configured four. With count, min and max they bound the run's merged percentiles
   * (percentile-bracket.ts). Empty when the engine gave none.
   */
  quantiles: z.array(z.object({ q: z.number().min(0).max(1), value: z.number().nonnegative() })).default([]),
  /**
   * How far a reported percentile may be from the order statistics it stands for, as a fraction of its
   * value: 0 for k6 (linear interpolation between two neighbouring samples), Gatling's histogram
   * precision for Gatling.
   */
  relativeError: z.number().nonnegative().default(0),
});

export const runnerSummarySchema = z.object({
  engine: z.enum(['k6', 'gatling']),
  /** Runner index, 0-based. */
  runner: z.number().int().nonnegative(),
  /** The engine's exit code, kept by the runner script (k6: 99 = thresholds failed). */
  exitCode: z.number().int(),
  /** True when the numbers come from kube-sim, not a real engine. */
  simulated: z.boolean().default(false),
  /** Wall-clock run time of the engine on this runner, in ms. */
  durationMs: z.number().nonnegative(),
  requests: z.object({ count: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }),
  iterations: z.number().int().nonnegative(),
  /**
   * Iterations the engine's plan called for and never started (k6's `dropped_iterations`: an
   * arrival-rate executor with no free VU at its tick, or a per-VU/shared-iterations one out of
   * maxDuration); absent when the engine does not count them (Gatling). core/fidelity.ts.
   */
  droppedIterations: z.number().int().nonnegative().optional(),
  /** The most VUs the engine had initialised (k6's `vus_max` gauge); absent when it does not tell. */
  vusMax: z.number().int().nonnegative().optional(),
  /** Request duration (k6 `http_req_duration`, Gatling response time), ms. */
  latency: trend,
  dataReceivedBytes: z.number().nonnegative(),
  dataSentBytes: z.number().nonnegative(),
  thresholds: z.array(z.object({ metric: z.string(), expression: z.string(), ok: z.boolean() })),
});
export type RunnerSummary = z.infer<typeof runnerSummarySchema>;
