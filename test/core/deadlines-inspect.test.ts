/**
 * What the deadlines read of `k6 inspect --execution-requirements` (core/deadlines.ts), at the edges
 * its parsing guards: each case's answer is stated here from k6's rules (a time-bound executor runs its
 * duration, a staged one its stages, ramping-vus to its last stage with VUs; anything unreadable is no
 * answer, never a throw or a NaN). Each row kills a mutant `npm run mutate` found surviving.
 */
import { describe, expect, it } from 'vitest';
import { minimumDurationFromInspect, parseK6Duration, scheduledDurationFromInspect } from '../../lambdas/core/deadlines';

const inspect = (scenarios: unknown, totalDuration = '1h0m0s') => ({ scenarios, totalDuration });

describe('parseK6Duration: fractions with a leading dot, as Go reads them', () => {
  it.each([
    ['.5s', 0.5],
    ['.55s', 0.55],
    ['1.25m', 75],
    ['.5', undefined], // no unit
    ['.s', undefined], // no digit after the dot
  ] as const)('%s → %s', (text, seconds) => {
    expect(parseK6Duration(text)).toBe(seconds);
  });
});

describe('scheduledDurationFromInspect: only when every scenario runs for a known time', () => {
  it.each([
    ['no scenarios', {}, undefined],
    ['scenarios null', null, undefined],
    ['a scenario that is null', { a: null }, undefined],
    ['externally-controlled runs its duration', { a: { executor: 'externally-controlled', duration: '10s' } }, 10],
    ['one time-bound and one iteration-based: unknown', { a: { executor: 'constant-vus', duration: '10s' }, b: { executor: 'shared-iterations' } }, undefined],
    ['iteration-based only: unknown', { a: { executor: 'per-vu-iterations' } }, undefined],
  ] as const)('%s', (_, scenarios, expected) => {
    expect(scheduledDurationFromInspect(inspect(scenarios))).toBe(expected);
  });

  it('no inspect output at all (null): no answer, no throw', () => {
    expect(scheduledDurationFromInspect(null)).toBeUndefined();
  });
});

describe('minimumDurationFromInspect: unreadable is no answer; ramps as k6 runs them', () => {
  it.each([
    ['scenarios null', null, undefined],
    ['a startTime that is not text', { a: { executor: 'constant-vus', startTime: 5, duration: '10s' } }, undefined],
    ['a startTime that is no duration', { a: { executor: 'constant-vus', startTime: 'soon', duration: '10s' } }, undefined],
    ['no executor', { a: { startTime: '5s' } }, undefined],
    ['a staged executor without stages', { a: { executor: 'ramping-vus' } }, undefined],
    ['a stage that is no duration', { a: { executor: 'ramping-vus', stages: [{ duration: 'long', target: 2 }] } }, undefined],
    // k6's default startVUs is 1: a first stage to 0 VUs still runs (VUs ramp down over it).
    ['ramping-vus without startVUs, one stage to 0', { a: { executor: 'ramping-vus', stages: [{ duration: '10s', target: 0 }] } }, 10],
    ['ramping-vus from 0 up to 5', { a: { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '10s', target: 5 }] } }, 10],
    // A target that is not a number is 0 VUs: from 0 to 0 runs nothing.
    ['ramping-vus from 0 to a target that is no number', { a: { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '10s', target: '3' }] } }, 0],
    // A stage that is null lasts nothing and targets 0; the next one still counts.
    ['ramping-vus with a null stage', { a: { executor: 'ramping-vus', stages: [null, { duration: '5s', target: 2 }] } }, 5],
    // An arrival-rate ramp runs every stage, trailing zeros too (ramping-vus would stop at its last VU).
    [
      'ramping-arrival-rate at rate 0 throughout',
      {
        a: {
          executor: 'ramping-arrival-rate',
          stages: [
            { duration: '10s', target: 0 },
            { duration: '10s', target: 0 },
          ],
        },
      },
      20,
    ],
  ] as const)('%s', (_, scenarios, expected) => {
    expect(minimumDurationFromInspect(inspect(scenarios))).toBe(expected);
  });
});
