/**
 * The result line a runner prints after its engine exits (architecture §3.7):
 *   LOADPLANE_SUMMARY {json}
 * printed by the runner wrapper (and by kube-sim's simulated runners), read by Collect from the log.
 * Percentiles are per runner; aggregation never averages them.
 */
import { z } from 'zod';

export const SUMMARY_PREFIX = 'LOADPLANE_SUMMARY ';

const trend = z.object({
  count: z.number().int().nonnegative(),
  /** Sum of all samples (ms), so a mean can be weighted by count across runners. */
  sum: z.number().nonnegative(),
  min: z.number().nonnegative(),
  max: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p95: z.number().nonnegative(),
  p99: z.number().nonnegative(),
});

export const runnerSummarySchema = z.object({
  engine: z.enum(['k6', 'gatling']),
  /** Runner index, 0-based. */
  runner: z.number().int().nonnegative(),
  /** The engine's exit code, kept by the wrapper (k6: 99 = thresholds failed). */
  exitCode: z.number().int(),
  /** True when the numbers come from kube-sim, not a real engine. */
  simulated: z.boolean().default(false),
  /** Wall-clock run time of the engine on this runner, in ms. */
  durationMs: z.number().nonnegative(),
  requests: z.object({ count: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }),
  iterations: z.number().int().nonnegative(),
  /** Request duration (k6 `http_req_duration`, Gatling response time), ms. */
  latency: trend,
  dataReceivedBytes: z.number().nonnegative(),
  dataSentBytes: z.number().nonnegative(),
  thresholds: z.array(z.object({ metric: z.string(), expression: z.string(), ok: z.boolean() })),
});
export type RunnerSummary = z.infer<typeof runnerSummarySchema>;

export function formatSummaryLine(summary: RunnerSummary): string {
  return SUMMARY_PREFIX + JSON.stringify(summary);
}

/** The last summary line in a log, or undefined when there is none (or it does not parse). */
export function parseSummaryFromLog(log: string): RunnerSummary | undefined {
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith(SUMMARY_PREFIX)) continue;
    try {
      const parsed = runnerSummarySchema.safeParse(JSON.parse(line.slice(SUMMARY_PREFIX.length)));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: keep looking further up
    }
  }
  return undefined;
}
