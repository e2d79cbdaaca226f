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
    // Every figure, one digit to four, two decimals: latencies and the request rate per cent, the error rate as written.
    expect(parseRegressionLimits({ p90: '+5%', p95: '+0.5%', p99: '+1000%', mean: '+12.25%', errorRate: '+0.01', requestRate: '-50%' })).toEqual({
      p90: 0.05,
      p95: 0.005,
      p99: 10,
      mean: 0.1225,
      errorRate: 0.01,
      requestRate: 0.5,
    });
    expect(parseRegressionLimits({ mean: '+20%' })).toEqual({ mean: 0.2 });
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
    ['p95', '+5%', undefined], // one digit
    ['p90', '+0.01%', undefined], // the smallest: two decimals
    ['mean', '+12.25%', undefined],
    ['p99', '+999.99%', undefined], // just under the largest
    ['p95', '+1000.00%', undefined], // the largest, with its decimals
    ['p95', '+12.125%', 'must be written like "+10%": more than 0 and at most 1000, got "+12.125%"'], // three decimals
    ['p95', '+10.%', 'must be written like "+10%": more than 0 and at most 1000, got "+10.%"'], // a point without decimals
    ['p95', '+.5%', 'must be written like "+10%": more than 0 and at most 1000, got "+.5%"'], // decimals without a digit before the point
    ['p95', '+12,5%', 'must be written like "+10%": more than 0 and at most 1000, got "+12,5%"'], // a decimal comma
    ['p95', '+01000%', 'must be written like "+10%": more than 0 and at most 1000, got "+01000%"'], // five digits, though worth 1000
    ['p95', ' +10%', 'must be written like "+10%": more than 0 and at most 1000, got " +10%"'], // anything before the sign
    ['p95', '++10%', 'must be written like "+10%": more than 0 and at most 1000, got "++10%"'],
    ['p95', '+10% ', 'must be written like "+10%": more than 0 and at most 1000, got "+10% "'], // anything after the per cent sign
    ['p95', '+10%%', 'must be written like "+10%": more than 0 and at most 1000, got "+10%%"'],
    ['p95', '+10', 'must be written like "+10%": more than 0 and at most 1000, got "+10"'], // no per cent sign
    ['errorRate', '+0.5', undefined],
    ['errorRate', '+5', undefined], // one digit
    ['errorRate', '+0.01', undefined], // the smallest
    ['errorRate', '+100.00', undefined], // the largest, with its decimals
    ['errorRate', '+100.01', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+100.01"'], // just over the largest
    ['errorRate', '+0', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+0"'], // nothing
    ['errorRate', '+0100', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+0100"'], // four digits, though worth 100
    ['errorRate', '+0.125', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+0.125"'], // three decimals
    ['errorRate', '+1.', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+1."'],
    ['errorRate', '+.5', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+.5"'],
    ['errorRate', '0.5', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "0.5"'], // no sign
    ['errorRate', ' +0.5', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got " +0.5"'],
    ['errorRate', '+0.5 ', 'must be written like "+0.5" (percentage points): more than 0 and at most 100, got "+0.5 "'],
    ['requestRate', '-10%', undefined],
    ['requestRate', '-5%', undefined], // one digit
    ['requestRate', '-0.01%', undefined], // the smallest
    ['requestRate', '-99.99%', undefined], // the largest: fewer than 100 %
    ['requestRate', '-0%', 'must be written like "-10%": more than 0 and at most 99.99, got "-0%"'], // nothing
    ['requestRate', '-99.999%', 'must be written like "-10%": more than 0 and at most 99.99, got "-99.999%"'], // three decimals
    ['requestRate', '-010%', 'must be written like "-10%": more than 0 and at most 99.99, got "-010%"'], // three digits, though worth 10
    ['requestRate', '-.5%', 'must be written like "-10%": more than 0 and at most 99.99, got "-.5%"'],
    ['requestRate', '-10.%', 'must be written like "-10%": more than 0 and at most 99.99, got "-10.%"'],
    ['requestRate', ' -10%', 'must be written like "-10%": more than 0 and at most 99.99, got " -10%"'],
    ['requestRate', '-10% ', 'must be written like "-10%": more than 0 and at most 99.99, got "-10% "'],
    // Only the first 20 characters of what was written are quoted back.
    ['p95', '+10% slower than the baseline', 'must be written like "+10%": more than 0 and at most 1000, got "+10% slower than the"'],
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
