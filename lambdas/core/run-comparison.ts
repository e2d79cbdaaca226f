/**
 * One run against another, figure by figure (`GET /runs/{id}/compare?with=<id>`, `loadplane compare`):
 * p90, p95, p99 (brackets), the mean, the error rate, the request rate and the test's duration, each
 * with both values, the delta, the order of the two, and for every figure but the duration the
 * verdict of core/regression.ts: is the run worse than the other by more than the limit?
 *
 * The delta of a bracket is the interval its exact ratio lies in, [run.lo / with.hi, run.hi / with.lo]
 * (unbounded, null, when the other's bracket starts at 0); of the mean, the request rate and the
 * duration the ratio; of the error rate the difference in percentage points.
 *
 * The limits are the run's spec `baseline.limits` where it names the figure, else 0: any worsening
 * the values prove is `certain`, one the brackets leave open `possible`. The duration is shown, not
 * judged: the script sets it.
 */
import { parseRegressionLimits, type RegressionLimitsText } from './regression-limits';
import { compareToBaseline, REGRESSION_FIGURES, requestRate, type ComparedResult, type RegressionFigure, type Verdict } from './regression';
import type { Bracket } from './percentile-bracket';

export const COMPARED_FIGURES = [...REGRESSION_FIGURES, 'duration'] as const;
export type ComparedFigure = (typeof COMPARED_FIGURES)[number];

/** How the run's value stands to the other's: brackets apart (higher, lower), overlapping, or the same exact value. */
export type Order = 'higher' | 'lower' | 'same' | 'overlapping';

export interface FigureDelta {
  figure: ComparedFigure;
  /** The run's value (a bracket for a percentile; requests a second for requestRate; ms for duration and the mean; a fraction for errorRate). */
  run: number | Bracket | null;
  with: number | Bracket | null;
  /** A bracket's ratio interval, a ratio, or for errorRate percentage points; null when the other's value is 0 (or a value is missing). */
  delta: number | Bracket | null;
  order: Order | null;
  /** Absent for duration (not judged). */
  verdict?: Verdict;
  /** The limit the verdict used (core/regression.ts's units) and where it came from. */
  limit?: number;
  limitFrom?: 'spec' | 'default';
  /** Why the verdict is `unknown`. */
  why?: string;
}

/** The limit of a figure the spec does not limit: any worsening. */
export const DEFAULT_COMPARE_LIMIT = 0;

export function compareRuns(run: ComparedResult, other: ComparedResult, limitsText: RegressionLimitsText = {}): FigureDelta[] {
  const given = parseRegressionLimits(limitsText);
  const limits = Object.fromEntries(REGRESSION_FIGURES.map((f) => [f, given[f] ?? DEFAULT_COMPARE_LIMIT])) as Record<RegressionFigure, number>;
  const verdicts = new Map(compareToBaseline(run, other, limits).map((c) => [c.figure, c]));
  return COMPARED_FIGURES.map((figure): FigureDelta => {
    const [mine, theirs] = [valueOf(figure, run), valueOf(figure, other)];
    const shown = { figure, run: mine, with: theirs, delta: figureDelta(figure, mine, theirs), order: orderOf(mine, theirs) };
    if (figure === 'duration') return shown;
    const c = verdicts.get(figure)!;
    return { ...shown, verdict: c.verdict, limit: c.limit, limitFrom: given[figure] === undefined ? 'default' : 'spec', ...(c.why ? { why: c.why } : {}) };
  });
}

function valueOf(figure: ComparedFigure, r: ComparedResult): number | Bracket | null {
  switch (figure) {
    case 'p90':
    case 'p95':
    case 'p99':
      return r.latency.count > 0 ? r.latency[figure] : null;
    case 'mean':
      return r.latency.count > 0 ? r.latency.mean : null;
    case 'errorRate':
      return r.requests > 0 ? r.errorRate : null;
    case 'requestRate':
      return requestRate(r) ?? null;
    case 'duration':
      return r.durationMs;
  }
}

/** A figure's delta of `a` against `b` (see above): a bracket's ratio interval, a ratio, or the error rate's points; null when it cannot be told. */
export function figureDelta(figure: ComparedFigure, a: number | Bracket | null, b: number | Bracket | null): number | Bracket | null {
  if (a === null || b === null) return null;
  if (typeof a !== 'number' && typeof b !== 'number') return b.lo > 0 ? { lo: a.lo / b.hi, hi: a.hi / b.lo } : null;
  if (typeof a !== 'number' || typeof b !== 'number') return null;
  if (figure === 'errorRate') return (a - b) * 100;
  return b > 0 ? a / b : null;
}

function orderOf(a: number | Bracket | null, b: number | Bracket | null): Order | null {
  if (a === null || b === null) return null;
  const [x, y] = [typeof a === 'number' ? { lo: a, hi: a } : a, typeof b === 'number' ? { lo: b, hi: b } : b];
  if (x.lo > y.hi) return 'higher';
  if (x.hi < y.lo) return 'lower';
  if (x.lo === x.hi && y.lo === y.hi) return 'same';
  return 'overlapping';
}
