/**
 * Live metrics of a running test (architecture §3.6): one compact sample per Watch poll, read from
 * every runner while it runs (k6: its REST API's `GET /v1/metrics`; Gatling: the periodic stats its
 * log shows), and one `final` sample Collect writes from the runners' own results. Counters are
 * cumulative since the test's start and summed across the runners that answered; the p95 is kept per
 * runner and never averaged (an average of percentiles is no percentile of anything).
 *
 * A sample where not every runner answered (`answered < runners`) is partial: its sums cover fewer
 * runners, so rates are taken only between complete samples (liveFigures).
 */
import * as z from 'zod';

export const liveSampleSchema = z.object({
  /** Cluster clock (epoch ms) when the runners were read. */
  at: z.number(),
  /** ms since the test started (StartRecord.startedAt). */
  elapsedMs: z.number().nonnegative(),
  /** `live`: read from the runners during the test; `final`: Collect's totals from the runners' results. */
  source: z.enum(['live', 'final']),
  /** Runners the sums cover, of `runners` in all. */
  answered: z.number().int().nonnegative(),
  runners: z.number().int().nonnegative(),
  requests: z.number().nonnegative(),
  failed: z.number().nonnegative(),
  iterations: z.number().nonnegative(),
  /** VUs active at the read (a gauge, summed). */
  vus: z.number().nonnegative(),
  dataReceivedBytes: z.number().nonnegative(),
  dataSentBytes: z.number().nonnegative(),
  /** Request duration p95 (ms) so far, per runner index; null where the runner did not answer or has no requests yet. */
  p95: z.array(z.number().nonnegative().nullable()),
});
export type LiveSample = z.infer<typeof liveSampleSchema>;

/** What the CLI's live line and the API's `live` field show: the newest sample, with rates from the one before. */
export interface LiveFigures {
  /** Cluster clock (ISO) of the newest sample. */
  at: string;
  elapsedSeconds: number;
  answered: number;
  runners: number;
  requests: number;
  failed: number;
  /** Requests per second between the two newest complete samples (since the start when there is one). */
  requestsPerSecond: number;
  /** failed / requests over the same interval (0 without requests). */
  errorRate: number;
  vus: number;
  /** The runner with the highest p95 in the newest sample. */
  worstP95?: { runner: number; ms: number };
}

const isComplete = (s: LiveSample) => s.answered === s.runners;

/**
 * The figures of the newest sample; rates between it and the newest complete sample before it (or
 * the test's start). Undefined without samples. `samples` in any order.
 */
export function liveFigures(samples: readonly LiveSample[]): LiveFigures | undefined {
  const sorted = [...samples].sort((a, b) => a.elapsedMs - b.elapsedMs);
  const newest = sorted.at(-1);
  if (!newest) return undefined;
  const complete = sorted.filter(isComplete);
  const last = complete.at(-1);
  const before = complete.at(-2);
  let requestsPerSecond = 0;
  let errorRate = 0;
  if (last) {
    const from = before ?? { elapsedMs: 0, requests: 0, failed: 0 };
    const seconds = (last.elapsedMs - from.elapsedMs) / 1000;
    const requests = last.requests - from.requests;
    requestsPerSecond = seconds > 0 ? Math.max(0, requests) / seconds : 0;
    errorRate = requests > 0 ? Math.max(0, last.failed - from.failed) / requests : 0;
  }
  let worst: { runner: number; ms: number } | undefined;
  newest.p95.forEach((ms, runner) => {
    if (ms !== null && (worst === undefined || ms > worst.ms)) worst = { runner, ms };
  });
  return {
    at: new Date(newest.at).toISOString(),
    elapsedSeconds: newest.elapsedMs / 1000,
    answered: newest.answered,
    runners: newest.runners,
    requests: newest.requests,
    failed: newest.failed,
    requestsPerSecond,
    errorRate,
    vus: newest.vus,
    ...(worst ? { worstP95: worst } : {}),
  };
}
