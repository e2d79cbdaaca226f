/**
 * A run's figures as `history` and `compare` print them: a bracket as `[lo, hi] ms`, an error rate in
 * percent, a rate in requests a second, a duration in minutes and seconds, a delta as the ratio
 * (`×1.42`, a bracket's `×[1.38, 1.47]`) or, for the error rate, percentage points.
 */
import type { RunComparison } from '../../lambdas/api/resources';
import { describeLimit, type RegressionFigure } from '../../lambdas/core/regression';

type Bracket = { lo: number; hi: number };
type FigureName = RunComparison['figures'][number]['figure'];

const round = (n: number, digits: number): string => n.toFixed(digits);

export function bracketText(b: Bracket | null): string {
  return b === null ? '-' : `[${round(b.lo, 1)}, ${round(b.hi, 1)}] ms`;
}

export function percentText(rate: number | null): string {
  return rate === null ? '-' : `${round(rate * 100, 2)} %`;
}

export function rateText(rate: number | null): string {
  return rate === null ? '-' : `${round(rate, 1)} req/s`;
}

export function durationText(ms: number | null): string {
  if (ms === null) return '-';
  const seconds = Math.round(ms / 1000);
  const [m, s] = [Math.floor(seconds / 60), seconds % 60];
  return m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

/** One figure's value in its unit. */
export function figureText(figure: FigureName, value: number | Bracket | null): string {
  if (value === null) return '-';
  if (typeof value !== 'number') return bracketText(value);
  if (figure === 'errorRate') return percentText(value);
  if (figure === 'requestRate') return rateText(value);
  if (figure === 'duration') return durationText(value);
  return `${round(value, 1)} ms`;
}

export function deltaText(figure: FigureName, delta: number | Bracket | null): string {
  if (delta === null) return '-';
  if (typeof delta !== 'number') return `×[${round(delta.lo, 2)}, ${round(delta.hi, 2)}]`;
  if (figure === 'errorRate') return `${delta >= 0 ? '+' : ''}${round(delta, 2)} points`;
  return `×${round(delta, 2)}`;
}

/** The limit as a spec writes it: `+10 %`, `-10 %` for the request rate, `+0.5 points` for the error rate. */
export function limitText(figure: FigureName, limit: number | undefined): string {
  // Only the duration has no limit, and it is never judged.
  return limit === undefined ? '' : describeLimit(figure as RegressionFigure, limit);
}
