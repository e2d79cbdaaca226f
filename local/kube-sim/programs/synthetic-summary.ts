/**
 * Synthetic but self-consistent runner results. Counts come from the whole test (VUs × seconds ×
 * a request rate seeded by the run id) split by execution segment, so N runners add up exactly to the
 * whole; latencies are seeded by (run id, runner index), ordered min ≤ p90 ≤ p95 ≤ p99 ≤ max.
 * The same inputs always give the same summary.
 */
import type { Engine } from '../../../lambdas/core/status';
import type { RunnerSummary } from '../../../lambdas/core/summary';
import { segmentShare, type Fraction } from './fraction';
import type { Threshold } from './k6-script';

export interface SyntheticRun {
  engine: Engine;
  runId: string;
  runner: number;
  /** VUs of the whole test (all runners together). */
  totalVUs: number;
  segment: { start: Fraction; end: Fraction };
  elapsedMs: number;
  exitCode: number;
  thresholds: Threshold[];
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

export function syntheticSummary(run: SyntheticRun): RunnerSummary {
  const wholeRandom = prng(hash(`whole:${run.runId}`));
  const failRate = between(wholeRandom, 0, 0.005);
  const whole = wholeRequests(run);
  const count = segmentShare(run.segment, whole);
  const failed = Math.min(count, segmentShare(run.segment, Math.round(whole * failRate)));

  const random = prng(hash(`runner:${run.runId}:${run.runner}`));
  const median = between(random, 40, 120);
  const min = median * between(random, 0.2, 0.5);
  const p90 = median * between(random, 1.5, 2);
  const p95 = p90 * between(random, 1.05, 1.3);
  const p99 = p95 * between(random, 1.2, 1.8);
  const max = p99 * between(random, 1.2, 3);
  const mean = median * between(random, 1.05, 1.2);
  const bytesIn = between(random, 1_000, 20_000);
  const bytesOut = between(random, 100, 500);
  const latency =
    count === 0
      ? { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0 }
      : { count, sum: round3(mean * count), min: round3(min), max: round3(max), p90: round3(p90), p95: round3(p95), p99: round3(p99) };

  return {
    engine: run.engine,
    runner: run.runner,
    exitCode: run.exitCode,
    simulated: true,
    durationMs: Math.round(run.elapsedMs),
    requests: { count, failed },
    iterations: count,
    latency,
    dataReceivedBytes: Math.round(count * bytesIn),
    dataSentBytes: Math.round(count * bytesOut),
    thresholds: run.thresholds.map((t) => ({ ...t, ok: run.exitCode !== 99 })),
  };
}
