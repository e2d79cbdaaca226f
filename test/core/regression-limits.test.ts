/**
 * The spec's `baseline` (core/regression-limits.ts, core/spec.ts): limits as written and as compared,
 * and every problem at once, naming the field, its form and its bounds.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { parseRegressionLimits, regressionLimitProblem } from '../../lambdas/core/regression-limits';
import { validateSpec } from '../../lambdas/core/spec';

const spec = (baseline: unknown) => ({ name: 'nightly', engine: 'k6', parallelism: 2, script: { inline: 'export default function () {}' }, baseline });

describe('baseline limits', () => {
  it('as compared: +10% a fraction 0.1, -10% (fewer requests) 0.1, +0.5 error-rate points 0.5', () => {
    expect(parseRegressionLimits({ p95: '+10%', p99: '+12.5%', errorRate: '+0.5', requestRate: '-10%' })).toEqual({
      p95: 0.1,
      p99: 0.125,
      errorRate: 0.5,
      requestRate: 0.1,
    });
    expect(parseRegressionLimits({})).toEqual({});
  });

  it.each([
    ['p95', '+1000%', undefined],
    ['p95', '+1000.01%', 'must be written like "+10%": more than 0 and at most 1000, got "+1000.01%"'],
    ['p95', '10%', 'must be written like "+10%": more than 0 and at most 1000, got "10%"'],
    ['p95', '+0%', 'must be written like "+10%": more than 0 and at most 1000, got "+0%"'],
    ['requestRate', '+10%', 'must be written like "-10%": more than 0 and at most 99.99, got "+10%"'],
    ['requestRate', '-100%', 'must be written like "-10%": more than 0 and at most 99.99, got "-100%"'],
    ['errorRate', '+100', undefined],
    ['errorRate', '+0.5%', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+0.5%"'],
  ] as const)('%s: %j → %s', (figure, text, problem) => {
    expect(regressionLimitProblem(figure, text)).toBe(problem);
  });

  it('a valid baseline keeps its text (a validated spec validates again), run defaults to last-succeeded', () => {
    const checked = validateSpec(spec({ limits: { p95: '+10%' } }), DEFAULT_CONFIG);
    expect(checked.ok && checked.spec.baseline).toEqual({ run: 'last-succeeded', limits: { p95: '+10%' } });
    const again = checked.ok && validateSpec(checked.spec, DEFAULT_CONFIG);
    expect(again && again.ok && again.spec.baseline).toEqual({ run: 'last-succeeded', limits: { p95: '+10%' } });
  });

  it('every problem at once, each naming its field', () => {
    const checked = validateSpec(spec({ run: 'Not A Run', limits: { p99: '+0%', requestRate: '10%', median: '+5%' } }), DEFAULT_CONFIG);
    expect(checked.ok ? [] : checked.problems).toEqual([
      { path: 'baseline.run', message: 'must be "last-succeeded" (the newest SUCCEEDED run of this name, or of its schedule for a scheduled run) or a run id' },
      { path: 'baseline.limits.p99', message: 'must be written like "+10%": more than 0 and at most 1000, got "+0%"' },
      { path: 'baseline.limits.requestRate', message: 'must be written like "-10%": more than 0 and at most 99.99, got "10%"' },
      { path: 'baseline.limits.median', message: 'unknown field (allowed: p90, p95, p99, mean, errorRate, requestRate)' },
    ]);
    const none = validateSpec(spec({ limits: {} }), DEFAULT_CONFIG);
    expect(none.ok ? [] : none.problems).toEqual([
      { path: 'baseline.limits', message: 'must limit at least one of p90, p95, p99, mean, errorRate, requestRate' },
    ]);
  });
});
