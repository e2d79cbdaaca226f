/**
 * The report's charts as data: the run's live samples (core/live-sample.ts) turned into series on
 * one time axis (seconds since the test started). Requests/s and the error rate are taken between
 * complete samples by core's intervalBetween, as the live line takes them: from the test's start (all
 * zeros) for the first point; a partial sample sums fewer runners, so it is a gap and the rate skips
 * it; an interval under MIN_RATE_INTERVAL_MS is a gap too (a few requests over 1 ms would be a spike
 * of thousands per second), measured from the same base at the next point; a counter reset (a
 * replaced runner starts again from 0) is a gap, and the rates start again from that point.
 *
 * The p95 is one series per runner, as each runner reported it, never an average. A run with more
 * than P95_CHART_MAX_RUNNERS runners charts only those with the highest peak p95 (the ones a reader
 * looks for; 500 runners' series over a day would be most of the page's size, past Lambda's response
 * limit): the page says so, and its runner table keeps every runner.
 *
 * Collect's `final` sample is the run's end point when it lies after the last live one; live samples
 * alone make the rest, so a final sample written with an earlier time moves nothing.
 */
import { intervalBetween, MIN_RATE_INTERVAL_MS, type LiveSample } from '../core/live-sample';

/** The most runners the p95 chart draws (its legend is readable up to about this many). */
export const P95_CHART_MAX_RUNNERS = 16;

export interface ReportSeries {
  /** Seconds since the test started, ascending: the x of every series. */
  elapsedSeconds: number[];
  /** Requests per second since the previous complete point at least MIN_RATE_INTERVAL_MS before (or the start); null where no rate can be told. */
  requestsPerSecond: (number | null)[];
  /** Failed / requests over the same interval, in percent; null where there is no rate or no request in it. */
  errorRatePercent: (number | null)[];
  /**
   * The charted runners' p95 (ms) at each point, in runner order; null where the runner did not answer
   * or had no requests yet. Every runner's when there are at most P95_CHART_MAX_RUNNERS, else those
   * with the highest peak p95.
   */
  p95ByRunner: { runner: number; values: (number | null)[] }[];
  /** Runners in the run (the p95 chart may show fewer). */
  runners: number;
  /** Points whose sums cover fewer runners than the run has. */
  partialPoints: number;
}

const round = (value: number, decimals: number): number => {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
};

/** The samples in time order: the live ones, then the final one if it comes after them. */
function timeline(samples: readonly LiveSample[]): LiveSample[] {
  const live = samples.filter((s) => s.source === 'live').sort((a, b) => a.elapsedMs - b.elapsedMs);
  const final = samples
    .filter((s) => s.source === 'final')
    .sort((a, b) => a.elapsedMs - b.elapsedMs)
    .at(-1);
  const last = live.at(-1);
  return final && (!last || final.elapsedMs > last.elapsedMs) ? [...live, final] : live;
}

/** The runners the p95 chart draws: all of them, or the `max` with the highest peak (ties: the lower index), in runner order. */
export function chartedRunners(points: readonly LiveSample[], runners: number, max: number = P95_CHART_MAX_RUNNERS): number[] {
  const all = Array.from({ length: runners }, (_, runner) => runner);
  if (runners <= max) return all;
  const peak = all.map((runner) => Math.max(-1, ...points.map((p) => p.p95[runner] ?? -1)));
  return all
    .sort((a, b) => peak[b]! - peak[a]! || a - b)
    .slice(0, max)
    .sort((a, b) => a - b);
}

export function reportSeries(samples: readonly LiveSample[]): ReportSeries {
  const points = timeline(samples);
  const runners = Math.max(0, ...points.map((s) => Math.max(s.runners, s.p95.length)));
  const series: ReportSeries = {
    elapsedSeconds: [],
    requestsPerSecond: [],
    errorRatePercent: [],
    p95ByRunner: chartedRunners(points, runners).map((runner) => ({ runner, values: [] })),
    runners,
    partialPoints: 0,
  };
  const start = { elapsedMs: 0, requests: 0, failed: 0 };
  let base: Pick<LiveSample, 'elapsedMs' | 'requests' | 'failed'> = start;
  /** Complete points so far (and the start): a short interval's rate is drawn from the newest a second or more before it. */
  const complete: Pick<LiveSample, 'elapsedMs' | 'requests' | 'failed'>[] = [start];
  for (const point of points) {
    series.elapsedSeconds.push(round(point.elapsedMs / 1000, 3));
    const interval = point.answered >= point.runners ? intervalBetween(base, point) : undefined;
    const earlier = interval?.kind === 'short' ? complete.findLast((c) => point.elapsedMs - c.elapsedMs >= MIN_RATE_INTERVAL_MS) : undefined;
    const shown = earlier ? intervalBetween(earlier, point) : interval;
    if (interval !== undefined) complete.push(point);
    if (shown?.kind === 'rate') {
      series.requestsPerSecond.push(round(shown.requestsPerSecond, 2));
      series.errorRatePercent.push(shown.errorRate === undefined ? null : round(100 * shown.errorRate, 3));
    } else {
      series.requestsPerSecond.push(null);
      series.errorRatePercent.push(null);
    }
    if (interval === undefined) series.partialPoints++;
    // A short interval keeps its base (the next point's rate spans both; its own is drawn from the
    // newest complete point a second before it, e.g. Collect's final 1 ms after the last live one); a reset starts from here.
    else if (interval.kind !== 'short') base = point;
    for (const line of series.p95ByRunner) {
      const p95 = point.p95[line.runner];
      line.values.push(p95 === undefined || p95 === null ? null : round(p95, 1));
    }
  }
  return series;
}
