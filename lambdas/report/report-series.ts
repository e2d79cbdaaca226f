/**
 * The report's charts as data: the run's live samples (core/live-sample.ts) turned into series on
 * one time axis (seconds since the test started). Requests/s and the error rate are taken between
 * consecutive complete samples (a partial one sums fewer runners, so a difference with it would be
 * wrong: it is a gap there); the p95 is one series per runner, as each runner reported it, never an
 * average. Counters that go down (a replaced runner starts again from 0) count as no requests.
 *
 * Collect's `final` sample is the run's end point when it lies after the last live one; live samples
 * alone make the rest, so a final sample written with an earlier time moves nothing.
 */
import type { LiveSample } from '../core/live-sample';

export interface ReportSeries {
  /** Seconds since the test started, ascending: the x of every series. */
  elapsedSeconds: number[];
  /** Requests per second since the previous complete point (or the start); null at a partial point. */
  requestsPerSecond: (number | null)[];
  /** Failed / requests over the same interval, in percent; null at a partial point or without requests. */
  errorRatePercent: (number | null)[];
  /** By runner index: that runner's p95 (ms) at each point; null where it did not answer or had no requests yet. */
  p95ByRunner: (number | null)[][];
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
  const final = samples.filter((s) => s.source === 'final').sort((a, b) => a.elapsedMs - b.elapsedMs).at(-1);
  const last = live.at(-1);
  return final && (!last || final.elapsedMs > last.elapsedMs) ? [...live, final] : live;
}

export function reportSeries(samples: readonly LiveSample[]): ReportSeries {
  const points = timeline(samples);
  const runners = Math.max(0, ...points.map((s) => Math.max(s.runners, s.p95.length)));
  const series: ReportSeries = {
    elapsedSeconds: [],
    requestsPerSecond: [],
    errorRatePercent: [],
    p95ByRunner: Array.from({ length: runners }, () => []),
    partialPoints: 0,
  };
  let before: Pick<LiveSample, 'elapsedMs' | 'requests' | 'failed'> = { elapsedMs: 0, requests: 0, failed: 0 };
  for (const point of points) {
    series.elapsedSeconds.push(round(point.elapsedMs / 1000, 3));
    const complete = point.answered >= point.runners;
    const seconds = (point.elapsedMs - before.elapsedMs) / 1000;
    if (complete && seconds > 0) {
      const requests = Math.max(0, point.requests - before.requests);
      series.requestsPerSecond.push(round(requests / seconds, 2));
      series.errorRatePercent.push(requests > 0 ? round((100 * Math.max(0, point.failed - before.failed)) / requests, 3) : null);
    } else {
      series.requestsPerSecond.push(null);
      series.errorRatePercent.push(null);
    }
    if (complete) before = point;
    else series.partialPoints++;
    for (let runner = 0; runner < runners; runner++) {
      const p95 = point.p95[runner];
      series.p95ByRunner[runner]!.push(p95 === undefined || p95 === null ? null : round(p95, 1));
    }
  }
  return series;
}
