import { describe, expect, it } from 'vitest';
import { Phase, runDeadline } from '../../lambdas/core/deadlines';
import { nextPollSeconds } from '../../lambdas/core/polling';
import { replacementNote, runWindow, type Replacement, type RunWindowInput } from '../../lambdas/core/restart';

const S = 1000;
const HOUR = 3600 * S;

/** A 10-minute test started at 0: Start's run deadline is 11 min (10 min + 1 min of grace). */
const base: Omit<RunWindowInput, 'now' | 'replacements'> = {
  startedAt: 0,
  runBy: runDeadline(0, {}, 600, 6 * HOUR),
  expectedEndAt: 600 * S,
  totalBy: 6 * HOUR,
  timeouts: { ready: 120 },
};

describe('runWindow: the run phase under onRunnerRestart: restart', () => {
  it('without replacements it is Start’s window, polled as before', () => {
    const now = 120 * S;
    expect(runWindow({ ...base, now, replacements: [] })).toEqual({
      runBy: 660 * S,
      expectedEndAt: 600 * S,
      extendedFor: [],
      cappedByTotal: false,
      overdue: [],
      nextPollSeconds: nextPollSeconds({ phase: Phase.run, now, phaseStartedAt: 0, deadline: 660 * S, expectedEndAt: 600 * S }),
    });
  });

  it.each<
    [
      string,
      Partial<RunWindowInput> & { now: number; replacements: Replacement[] },
      { runBy: number; expectedEndAt?: number; extendedFor: number[]; cappedByTotal: boolean },
    ]
  >([
    [
      'a replacement started 5 min in needs its whole share: 5 min + 11 min',
      { now: 400 * S, replacements: [{ index: 1, createdAt: 297 * S, startedAt: 300 * S }] },
      { runBy: 960 * S, expectedEndAt: 900 * S, extendedFor: [1], cappedByTotal: false },
    ],
    [
      'the latest of several replacements sets the deadline',
      {
        now: 500 * S,
        replacements: [
          { index: 3, createdAt: 100 * S, startedAt: 103 * S },
          { index: 1, createdAt: 400 * S, startedAt: 404 * S },
        ],
      },
      { runBy: 1064 * S, expectedEndAt: 1004 * S, extendedFor: [3, 1], cappedByTotal: false },
    ],
    [
      'a replacement not started yet starts no earlier than now',
      { now: 310 * S, replacements: [{ index: 1, createdAt: 300 * S }] },
      { runBy: 970 * S, expectedEndAt: 600 * S, extendedFor: [1], cappedByTotal: false },
    ],
    [
      'an evicted pod the Job has not replaced yet counts as a replacement starting now',
      { now: 310 * S, replacements: [{ index: 1 }] },
      { runBy: 970 * S, expectedEndAt: 600 * S, extendedFor: [1], cappedByTotal: false },
    ],
    [
      'a share that would end after the total deadline is cut to it',
      { now: 545 * S, totalBy: 960 * S, replacements: [{ index: 1, createdAt: 537 * S, startedAt: 540 * S }] },
      { runBy: 960 * S, expectedEndAt: 1140 * S, extendedFor: [1], cappedByTotal: true },
    ],
    [
      'the spec’s run timeout counts from the replacement’s start, as from Start',
      { now: 400 * S, runBy: 900 * S, timeouts: { ready: 120, run: 900 }, replacements: [{ index: 0, createdAt: 297 * S, startedAt: 300 * S }] },
      { runBy: 1200 * S, expectedEndAt: 900 * S, extendedFor: [0], cappedByTotal: false },
    ],
    [
      'without a run timeout or an expected duration the run deadline is the total one already',
      { now: 400 * S, runBy: 6 * HOUR, expectedEndAt: undefined, replacements: [{ index: 0, createdAt: 297 * S, startedAt: 300 * S }] },
      { runBy: 6 * HOUR, extendedFor: [], cappedByTotal: false },
    ],
  ])('%s', (_label, input, expected) => {
    const window = runWindow({ ...base, ...input } as RunWindowInput);
    expect({ runBy: window.runBy, expectedEndAt: window.expectedEndAt, extendedFor: window.extendedFor, cappedByTotal: window.cappedByTotal }).toEqual({
      expectedEndAt: undefined,
      ...expected,
    });
  });

  it.each([
    ['just created', 300, 302, 2],
    ['a minute old', 300, 360, 6],
    ['slow to schedule', 300, 400, 10],
    ['not made by the Job yet', undefined, 400, 2],
  ])('polls densely while a replacement is not running (%s), instead of the sparse mid-test minute', (_label, created, now, wait) => {
    const replacement: Replacement = { index: 2, ...(created !== undefined ? { createdAt: created * S } : {}) };
    expect(runWindow({ ...base, now: now * S, replacements: [] }).nextPollSeconds).toBe(60);
    expect(runWindow({ ...base, now: now * S, replacements: [replacement] }).nextPollSeconds).toBe(wait);
  });

  it('once the replacement runs, polls are sparse again and close in on its end, not Start’s', () => {
    const replacements = [{ index: 1, createdAt: 297 * S, startedAt: 300 * S }];
    expect(runWindow({ ...base, now: 400 * S, replacements }).nextPollSeconds).toBe(60);
    // At Start's expected end the replacement still has 5 min to go.
    expect(runWindow({ ...base, now: 600 * S, replacements }).nextPollSeconds).toBe(60);
    expect(runWindow({ ...base, now: 890 * S, replacements }).nextPollSeconds).toBe(5);
  });

  it('a replacement not running within the ready timeout of its creation is overdue; a missing one never is', () => {
    const waiting = [{ index: 2, createdAt: 300 * S }, { index: 3 }];
    expect(runWindow({ ...base, now: 419 * S, replacements: waiting }).overdue).toEqual([]);
    expect(runWindow({ ...base, now: 420 * S, replacements: waiting }).overdue).toEqual([2]);
    expect(runWindow({ ...base, now: 420 * S, replacements: [{ index: 2, createdAt: 300 * S, startedAt: 419 * S }] }).overdue).toEqual([]);
  });

  it('a replacement that waits out the default 10-minute ready timeout costs AwaitReady’s poll cycles, not thousands', () => {
    const input = { ...base, timeouts: { ready: 600 }, runBy: 6 * HOUR, expectedEndAt: 6 * HOUR - 60 * S };
    const replacements = [{ index: 1, createdAt: HOUR }];
    let cycles = 0;
    for (let now = HOUR; runWindow({ ...input, now, replacements }).overdue.length === 0; cycles++) {
      now += runWindow({ ...input, now, replacements }).nextPollSeconds * S;
    }
    expect(cycles).toBeLessThan(80);
  });
});

describe('replacementNote', () => {
  it.each([
    [[], undefined],
    [[{ index: 0, times: 0, completed: true }], undefined],
    [[{ index: 2, times: 1, completed: true }], 'runner 2 was replaced once and completed'],
    [
      [
        { index: 3, times: 3, completed: false },
        { index: 1, times: 2, completed: true },
      ],
      'runner 1 was replaced twice and completed; runner 3 was replaced 3 times',
    ],
  ])('%j → %s', (replaced, note) => {
    expect(replacementNote(replaced)).toBe(note);
  });
});
