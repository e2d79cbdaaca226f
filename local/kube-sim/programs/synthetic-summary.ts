/**
 * Synthetic but self-consistent runner results, engine-neutral: the k6 runner renders them as k6's
 * summary export (k6-summary-export.ts), the Gatling runner as Gatling's console summary
 * (gatling-console.ts), and Collect parses those exactly as it parses a real engine's. Counts come from the whole test (VUs × seconds ×
 * a request rate seeded by the run id) split by execution segment, so N runners add up exactly to the
 * whole; latencies are seeded by (run id, runner index), ordered min ≤ med ≤ p90 ≤ p95 ≤ p99 ≤ max.
 * The script's thresholds are evaluated on these numbers (this runner's own, as each k6 instance
 * does), and a crossed one makes the exit code 99 unless a fault forces another.
 * The same inputs always give the same summary.
 */
import { segmentShare, type Fraction } from './fraction';
import type { Threshold } from './k6-script';
import { baseMetric, holds, parseThresholdExpression, type MetricValues } from './k6-thresholds';

/** k6's exit code when a threshold is crossed. */
export const EXIT_THRESHOLDS = 99;

export interface SyntheticRun {
  runId: string;
  runner: number;
  /** VUs of the whole test (all runners together). */
  totalVUs: number;
  segment: { start: Fraction; end: Fraction };
  elapsedMs: number;
  /** The exit code a fault forces; undefined: 99 when a threshold is crossed, else 0. */
  forcedExitCode?: number;
  thresholds: Threshold[];
  /**
   * Share of failed requests (0–1); default 0: the simulated target answers every request, so a
   * threshold on failures fails only when a fault (the http-failure-rate annotation) asks for it —
   * a seeded default would cross `rate<0.01` for some run ids (one failure in a runner's ~40 requests).
   */
  failureRate?: number;
  /** This runner's VUs (for the vus gauge). */
  vus?: number;
  /** Seeds the latencies instead of the run id (the latency-seed annotation): runs of one seed have the same latencies. */
  latencySeed?: string;
  /** Multiplies every latency (the latency-factor annotation): a slower target. Default 1. */
  latencyFactor?: number;
}

/** FNV-1a, 32 bit. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small deterministic PRNG in [0, 1). */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function between(random: () => number, low: number, high: number): number {
  return low + random() * (high - low);
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

type Load = Pick<SyntheticRun, 'runId' | 'totalVUs' | 'segment' | 'elapsedMs'>;

/** Requests of the whole test (every runner) after `elapsedMs`: about one per VU-second. */
function wholeRequests(run: Load): number {
  const rate = between(prng(hash(`rate:${run.runId}`)), 0.8, 1.2);
  return Math.round(run.totalVUs * (run.elapsedMs / 1000) * rate);
}

/** Requests (and iterations) this runner completed after `elapsedMs`. */
export function runnerRequests(run: Load): number {
  return segmentShare(run.segment, wholeRequests(run));
}

export interface SyntheticResult {
  runner: number;
  exitCode: number;
  durationMs: number;
  requests: { count: number; failed: number };
  iterations: number;
  /** Request latency (ms); all zeros without samples. `quantile(p)` for p in 0..100 interpolates the points below. */
  latency: { count: number; sum: number; min: number; median: number; max: number; p90: number; p95: number; p99: number; quantile: (p: number) => number };
  dataReceivedBytes: number;
  dataSentBytes: number;
  thresholds: { metric: string; expression: string; ok: boolean }[];
}

export function syntheticSummary(run: SyntheticRun): SyntheticResult {
  const failRate = run.failureRate ?? 0;
  const whole = wholeRequests(run);
  const count = segmentShare(run.segment, whole);
  const failed = Math.min(count, segmentShare(run.segment, Math.round(whole * failRate)));

  const random = prng(hash(`runner:${run.latencySeed ?? run.runId}:${run.runner}`));
  const median = between(random, 40, 120) * (run.latencyFactor ?? 1);
  const min = median * between(random, 0.2, 0.5);
  const p90 = median * between(random, 1.5, 2);
  const p95 = p90 * between(random, 1.05, 1.3);
  const p99 = p95 * between(random, 1.2, 1.8);
  const max = p99 * between(random, 1.2, 3);
  const mean = median * between(random, 1.05, 1.2);
  const bytesIn = between(random, 1_000, 20_000);
  const bytesOut = between(random, 100, 500);
  // The runner's `count` samples, as sorted values: sample j of n sits at level j/(n−1) of a curve
  // through (0, min), (50, med), (90, p90), (95, p95), (99, p99), (100, max). Its percentiles are k6's
  // (TrendSink.P: linear interpolation between neighbouring samples), so the grid a runner reports is
  // one that real samples produce: the run's percentile bracket (core/percentile-bracket.ts) holds.
  const curve: [number, number][] = [
    [0, round3(min)],
    [50, round3(median)],
    [90, round3(p90)],
    [95, round3(p95)],
    [99, round3(p99)],
    [100, round3(max)],
  ];
  const sample = (j: number) => (count === 1 ? round3(median) : interpolate((100 * j) / (count - 1), curve));
  const quantile = (p: number): number => {
    if (count === 0) return 0;
    if (count === 1) return sample(0);
    const i = (p / 100) * (count - 1);
    const below = sample(Math.floor(i));
    return below + (sample(Math.ceil(i)) - below) * (i - Math.floor(i));
  };
  const latency =
    count === 0
      ? { count: 0, sum: 0, min: 0, median: 0, max: 0, p90: 0, p95: 0, p99: 0, quantile }
      : {
          count,
          sum: round3(mean * count),
          min: sample(0),
          median: quantile(50),
          max: sample(count - 1),
          p90: quantile(90),
          p95: quantile(95),
          p99: quantile(99),
          quantile,
        };

  const seconds = run.elapsedMs / 1000;
  const perSecond = (n: number) => (seconds > 0 ? n / seconds : 0);
  const trend: MetricValues | undefined =
    count === 0
      ? undefined
      : {
          // The numbers the summary reports (rounded to µs), so its thresholds agree with its trend.
          avg: latency.sum / count,
          min: latency.min,
          med: latency.median,
          max: latency.max,
          percentile: latency.quantile,
        };
  const received = Math.round(count * bytesIn);
  const sent = Math.round(count * bytesOut);
  const metrics: Record<string, MetricValues | undefined> = {
    http_reqs: { count, rate: perSecond(count) },
    iterations: { count, rate: perSecond(count) },
    http_req_failed: count === 0 ? undefined : { rate: failed / count },
    checks: count === 0 ? undefined : { rate: 1 - failed / count },
    http_req_duration: trend,
    iteration_duration: trend,
    data_received: { count: received, rate: perSecond(received) },
    data_sent: { count: sent, rate: perSecond(sent) },
    vus: { value: run.vus ?? 0, min: run.vus ?? 0, max: run.vus ?? 0 },
    vus_max: { value: run.vus ?? 0, min: run.vus ?? 0, max: run.vus ?? 0 },
  };
  const forced = run.forcedExitCode;
  const thresholds = run.thresholds.map((t) => {
    if (forced === EXIT_THRESHOLDS) return { ...t, ok: false };
    const parsed = parseThresholdExpression(t.expression);
    const values = metrics[baseMetric(t.metric)];
    // No samples (or a custom metric kube-sim does not simulate): nothing crosses the threshold.
    const ok = 'error' in parsed || values === undefined ? true : (holds(parsed, values) ?? true);
    return { ...t, ok };
  });
  const exitCode = forced ?? (thresholds.some((t) => !t.ok) ? EXIT_THRESHOLDS : 0);

  return {
    runner: run.runner,
    exitCode,
    durationMs: Math.round(run.elapsedMs),
    requests: { count, failed },
    iterations: count,
    latency,
    dataReceivedBytes: received,
    dataSentBytes: sent,
    thresholds,
  };
}

/** Linear interpolation between known (percentile, value) points. */
function interpolate(p: number, points: [number, number][]): number {
  for (let i = 1; i < points.length; i++) {
    const [p1, v1] = points[i]!;
    const [p0, v0] = points[i - 1]!;
    if (p === p1) return v1;
    if (p < p1) return p1 === p0 ? v1 : v0 + ((v1 - v0) * (p - p0)) / (p1 - p0);
  }
  return points[points.length - 1]![1];
}
