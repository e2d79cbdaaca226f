/**
 * A run against its baseline, figure by figure: is it worse by more than the spec's limit? A
 * percentile is known only as a bracket [lo, hi] that holds the run's exact value (aggregate.ts), and
 * so is the baseline's: the ratio of the two exact values lies in [lo / baseline.hi, hi / baseline.lo].
 * So a regression is **certain** only when the brackets are apart by more than the limit (the run's lo
 * above the baseline's hi × (1 + limit)): width alone never makes one. It is **possible** when the
 * exact values may be apart by more than the limit (hi above baseline.lo × (1 + limit)); a possible
 * regression is reported and never fails a run. Means, error rates and request rates are exact.
 * A figure the baseline cannot judge (no samples, no requests) is `unknown`, with why.
 */
import type { RunResult } from './aggregate';
import type { Bracket } from './percentile-bracket';

/** The figures a spec may limit. */
export const REGRESSION_FIGURES = ['p90', 'p95', 'p99', 'mean', 'errorRate', 'requestRate'] as const;
export type RegressionFigure = (typeof REGRESSION_FIGURES)[number];

/**
 * How much worse each figure may get. Latencies (p90, p95, p99, mean) and requestRate: a fraction
 * of the baseline's (0.1: 10 % slower, or 10 % fewer requests a second). errorRate: percentage
 * points (0.5: from 1 % to more than 1.5 %).
 */
export type RegressionLimits = Partial<Record<RegressionFigure, number>>;

export type Verdict = 'certain' | 'possible' | 'none' | 'unknown';

export interface FigureComparison {
  figure: RegressionFigure;
  verdict: Verdict;
  /** The run's value (a bracket for a percentile). */
  run: number | Bracket;
  baseline: number | Bracket;
  limit: number;
  /** Why a figure is `unknown`. */
  why?: string;
}

/** What Collect records of a run's comparison with its baseline (CollectRecord.regression). */
export interface RegressionRecord {
  /** The run compared with; absent when none was usable (`none` says why). */
  baseline?: string;
  figures: FigureComparison[];
  none?: string;
}

/** The figures of a result that a comparison reads (a stored summary has them too). */
export type ComparedResult = Pick<RunResult, 'requests' | 'failedRequests' | 'errorRate' | 'durationMs' | 'latency'>;

/** Requests a second over the run's duration (the longest runner's); undefined for a run without requests or duration. */
export function requestRate(result: ComparedResult): number | undefined {
  return result.requests > 0 && result.durationMs > 0 ? result.requests / (result.durationMs / 1000) : undefined;
}

/** A run item's `summary` (Decide's totals) when it holds what a comparison reads; undefined for a run without collected figures. */
export function comparableResult(summary: Record<string, unknown> | undefined): ComparedResult | undefined {
  const s = summary as Partial<ComparedResult> | undefined;
  const isBracket = (b: unknown): b is Bracket => typeof (b as Bracket)?.lo === 'number' && typeof (b as Bracket).hi === 'number';
  if (!s || typeof s.requests !== 'number' || typeof s.errorRate !== 'number' || typeof s.durationMs !== 'number') return undefined;
  const l = s.latency;
  if (!l || typeof l.count !== 'number' || typeof l.mean !== 'number' || !isBracket(l.p90) || !isBracket(l.p95) || !isBracket(l.p99)) return undefined;
  return s as ComparedResult;
}

/** Each limited figure of `run` against `baseline`, in REGRESSION_FIGURES order. */
export function compareToBaseline(run: ComparedResult, baseline: ComparedResult, limits: RegressionLimits): FigureComparison[] {
  return REGRESSION_FIGURES.flatMap((figure) => {
    const limit = limits[figure];
    return limit === undefined ? [] : [compareFigure(figure, run, baseline, limit)];
  });
}

function compareFigure(figure: RegressionFigure, run: ComparedResult, baseline: ComparedResult, limit: number): FigureComparison {
  switch (figure) {
    case 'p90':
    case 'p95':
    case 'p99':
      return percentile(figure, run.latency[figure], baseline.latency[figure], run.latency.count, baseline.latency.count, limit);
    case 'mean':
      return exactHigher(figure, run.latency.mean, baseline.latency.mean, limit, baseline.latency.count > 0 && run.latency.count > 0, 'no latency samples');
    case 'errorRate': {
      const known = run.requests > 0 && baseline.requests > 0;
      const worse = run.errorRate - baseline.errorRate > limit / 100;
      return { figure, run: run.errorRate, baseline: baseline.errorRate, limit, ...(known ? { verdict: worse ? 'certain' : 'none' } : unknown('no requests')) };
    }
    case 'requestRate': {
      const [mine, theirs] = [requestRate(run), requestRate(baseline)];
      if (mine === undefined || theirs === undefined) return { figure, run: mine ?? 0, baseline: theirs ?? 0, limit, ...unknown('no requests') };
      return { figure, run: mine, baseline: theirs, limit, verdict: mine < theirs * (1 - limit) ? 'certain' : 'none' };
    }
  }
}

function unknown(why: string): { verdict: 'unknown'; why: string } {
  return { verdict: 'unknown', why };
}

function percentile(figure: RegressionFigure, run: Bracket, baseline: Bracket, runCount: number, baselineCount: number, limit: number): FigureComparison {
  const base = { figure, run, baseline, limit };
  if (runCount === 0 || baselineCount === 0) return { ...base, ...unknown('no latency samples') };
  // A baseline at 0 ms: any slower run is "infinitely" slower; a ratio says nothing there.
  if (baseline.lo <= 0) return { ...base, ...unknown("the baseline's bracket starts at 0 ms") };
  const factor = 1 + limit;
  if (run.lo > baseline.hi * factor) return { ...base, verdict: 'certain' };
  if (run.hi > baseline.lo * factor) return { ...base, verdict: 'possible' };
  return { ...base, verdict: 'none' };
}

function exactHigher(figure: RegressionFigure, run: number, baseline: number, limit: number, known: boolean, why: string): FigureComparison {
  const base = { figure, run, baseline, limit };
  if (!known) return { ...base, ...unknown(why) };
  if (baseline <= 0) return { ...base, ...unknown("the baseline's value is 0") };
  return { ...base, verdict: run > baseline * (1 + limit) ? 'certain' : 'none' };
}

/**
 * How far a figure moved from the baseline, in the limit's own terms: a fraction of the baseline's value
 * for latencies and the request rate (0.12: 12 % higher), percentage points for the error rate. A
 * percentile's exact values lie in their brackets, so its change is the interval the exact change lies
 * in: [run.lo / baseline.hi − 1, run.hi / baseline.lo − 1]; an exact figure's is one value (lo = hi).
 * Undefined where the figure is unknown or the baseline's value is 0 (no ratio means anything there).
 */
export function figureChange(f: Pick<FigureComparison, 'figure' | 'verdict' | 'run' | 'baseline'>): Bracket | undefined {
  if (f.verdict === 'unknown') return undefined;
  if (typeof f.run !== 'number' || typeof f.baseline !== 'number') {
    const [run, baseline] = [asBracket(f.run), asBracket(f.baseline)];
    return baseline.lo > 0 ? { lo: run.lo / baseline.hi - 1, hi: run.hi / baseline.lo - 1 } : undefined;
  }
  if (f.figure === 'errorRate') return same((f.run - f.baseline) * 100);
  return f.baseline > 0 ? same(f.run / f.baseline - 1) : undefined;
}

const same = (v: number): Bracket => ({ lo: v, hi: v });
const asBracket = (v: number | Bracket): Bracket => (typeof v === 'number' ? same(v) : v);

/**
 * The comparison as the webhook, Slack, the API and the CLI show it: the baseline's run id (null when
 * none was usable, `none` says why) and each limited figure: the run's value, the baseline's, the
 * change (figureChange; null when it means nothing), the limit, the verdict.
 */
export interface BaselineComparison {
  runId: string | null;
  none: string | null;
  figures: Array<Pick<FigureComparison, 'figure' | 'verdict' | 'run' | 'baseline' | 'limit'> & { change: Bracket | null }>;
}

export function baselineComparison(r: RegressionRecord): BaselineComparison {
  return {
    runId: r.baseline ?? null,
    none: r.none ?? null,
    figures: r.figures.map((f) => ({
      figure: f.figure,
      verdict: f.verdict,
      run: f.run,
      baseline: f.baseline,
      change: figureChange(f) ?? null,
      limit: f.limit,
    })),
  };
}

/** A limit as a spec writes it: `+10 %`, `-10 %` for the request rate, `+0.5 points` for the error rate. */
export function describeLimit(figure: RegressionFigure, limit: number): string {
  if (figure === 'errorRate') return `+${limit} points`;
  return `${figure === 'requestRate' ? '-' : '+'}${Math.round(limit * 10_000) / 100} %`;
}

/** A figureChange as text: `+12.5 %`, `-3.1 to +14.0 %` for a bracket's, `+0.50 points` for the error rate's. */
export function describeChange(figure: RegressionFigure, change: Bracket): string {
  const [unit, scale, digits] = figure === 'errorRate' ? [' points', 1, 2] : [' %', 100, 1];
  const signed = (v: number) => {
    const text = (v * scale).toFixed(digits);
    // Stryker disable next-line Regex: text is "-0.0" or "-0.00" where it is replaced, so its one "-" is its first character
    return Number(text) > 0 ? `+${text}` : Number(text) === 0 ? text.replace(/^-/, '') : text;
  };
  const [lo, hi] = [signed(change.lo), signed(change.hi)];
  return lo === hi ? `${lo}${unit}` : `${lo} to ${hi}${unit}`;
}
