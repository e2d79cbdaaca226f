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

/**
 * Rates are taken over at least this long: a shorter interval (Collect's final sample lands 1 ms after
 * the newest live one when a runner was read late) turns a few requests into thousands per second.
 */
export const MIN_RATE_INTERVAL_MS = 1_000;

type Counters = Pick<LiveSample, 'elapsedMs' | 'requests' | 'failed'>;

/**
 * The rates between two complete samples (or the test's start, all zeros, and a sample): `short` when
 * they are less than MIN_RATE_INTERVAL_MS apart, `reset` when a counter went down or more requests
 * failed than were made (a replaced runner starts again from 0, and only sums are kept: no rate can
 * be told across it). `errorRate` (0–1) is absent when no request was made in between.
 */
export type Interval = { kind: 'rate'; requestsPerSecond: number; errorRate?: number } | { kind: 'short' } | { kind: 'reset' };

export function intervalBetween(before: Counters, after: Counters): Interval {
  const ms = after.elapsedMs - before.elapsedMs;
  if (ms < MIN_RATE_INTERVAL_MS) return { kind: 'short' };
  const requests = after.requests - before.requests;
  const failed = after.failed - before.failed;
  if (requests < 0 || failed < 0 || failed > requests) return { kind: 'reset' };
  return { kind: 'rate', requestsPerSecond: requests / (ms / 1000), ...(requests > 0 ? { errorRate: failed / requests } : {}) };
}

/** What the CLI's live line and the API's `live` field show: the newest sample, with rates from the ones before. */
export interface LiveFigures {
  /** Cluster clock (ISO) of the newest sample. */
  at: string;
  elapsedSeconds: number;
  answered: number;
  runners: number;
  requests: number;
  failed: number;
  /**
   * Requests per second between the newest complete sample and the newest complete one at least
   * MIN_RATE_INTERVAL_MS before it; absent without such a pair among the samples given (the API reads
   * the newest 3): one complete sample so far, partial polls, or a counter reset between them.
   */
  requestsPerSecond?: number;
  /** failed / requests (0–1) over the same interval; absent without a rate or without requests. */
  errorRate?: number;
  vus: number;
  /** The runner with the highest p95 in the newest sample. */
  worstP95?: { runner: number; ms: number };
}

const isComplete = (s: LiveSample) => s.answered >= s.runners;

/** The figures of the newest sample, with rates per intervalBetween. Undefined without samples; `samples` in any order. */
export function liveFigures(samples: readonly LiveSample[]): LiveFigures | undefined {
  const sorted = [...samples].sort((a, b) => a.elapsedMs - b.elapsedMs);
  const newest = sorted.at(-1);
  if (!newest) return undefined;
  const complete = sorted.filter(isComplete);
  const last = complete.at(-1);
  const before = last && complete.findLast((s) => last.elapsedMs - s.elapsedMs >= MIN_RATE_INTERVAL_MS);
  const interval = last && before ? intervalBetween(before, last) : undefined;
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
    ...(interval?.kind === 'rate'
      ? { requestsPerSecond: interval.requestsPerSecond, ...(interval.errorRate !== undefined ? { errorRate: interval.errorRate } : {}) }
      : {}),
    vus: newest.vus,
    ...(worst ? { worstP95: worst } : {}),
  };
}
