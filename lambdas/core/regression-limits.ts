/**
 * The spec's `baseline.limits` as written (`p95: +10%`, `errorRate: +0.5`, `requestRate: -10%`) and
 * as core/regression.ts reads them (fractions, and points for the error rate). The spec keeps the
 * text, so a validated spec validates again unchanged (a schedule's stored spec); Collect parses it.
 */
import { REGRESSION_FIGURES, type RegressionFigure, type RegressionLimits } from './regression';

/** The spec's `baseline.run` for "the newest SUCCEEDED run of the same name" (of the same schedule for a scheduled run). */
export const LAST_SUCCEEDED = 'last-succeeded';

/** How each figure's limit is written, and its bounds. */
const SLOWER = { pattern: /^\+(\d{1,4}(?:\.\d{1,2})?)%$/, example: '+10%', max: 1000 };
const FORMS: Readonly<Record<RegressionFigure, { pattern: RegExp; example: string; max: number }>> = {
  p90: SLOWER,
  p95: SLOWER,
  p99: SLOWER,
  mean: SLOWER,
  errorRate: { pattern: /^\+(\d{1,3}(?:\.\d{1,2})?)$/, example: '+0.5', max: 100 },
  requestRate: { pattern: /^-(\d{1,2}(?:\.\d{1,2})?)%$/, example: '-10%', max: 99.99 },
};

export type RegressionLimitsText = Partial<Record<RegressionFigure, string>>;

/** The problem with one figure's limit as written, naming its form and bounds; undefined when it is valid. */
export function regressionLimitProblem(figure: RegressionFigure, text: string): string | undefined {
  const form = FORMS[figure];
  // No match: Number(undefined) is NaN, which is no limit.
  const value = Number(form.pattern.exec(text)?.[1]);
  if (value > 0 && value <= form.max) return undefined;
  const unit = figure === 'errorRate' ? ' (percentage points)' : '';
  return `must be written like ${JSON.stringify(form.example)}${unit}: more than 0 and at most ${form.max}, got ${JSON.stringify(text.slice(0, 20))}`;
}

/** The limits as core/regression.ts takes them: `+10%` → 0.1, `-10%` → 0.1, `+0.5` (points) → 0.5. Valid text only. */
export function parseRegressionLimits(text: RegressionLimitsText): RegressionLimits {
  const limits: RegressionLimits = {};
  for (const figure of REGRESSION_FIGURES) {
    const given = text[figure];
    if (given === undefined) continue;
    const value = Number(FORMS[figure].pattern.exec(given)![1]);
    limits[figure] = figure === 'errorRate' ? value : value / 100;
  }
  return limits;
}
