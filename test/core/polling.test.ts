import { describe, expect, it } from 'vitest';
import { Phase, runDeadline } from '../../lambdas/core/deadlines';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import {
  CRUISE_POLL_BUDGET,
  CRUISE_POLL_SECONDS,
  CRUISE_WINDOW_OWN_EVENTS,
  CRUISE_WINDOW_POLLS,
  cruisePollSeconds,
  estimateCruiseWindowEvents,
  estimateHistoryEvents,
  EVENTS_PER_CRUISE_WINDOW,
  pollsUntilDeadline,
  startsCruiseWindow,
  EVENTS_PER_POLL_CYCLE,
  HISTORY_EVENT_LIMIT,
  nextPollSeconds,
  pollCyclesUntilDeadline,
  QUEUE_CYCLE_BUDGET,
  queuePollSeconds,
  type PollInput,
} from '../../lambdas/core/polling';

const S = 1000;
const HOUR = 3600;

/** The waits a phase makes from its start until a poll reaches the deadline, as the state machine would. */
function schedule(input: Omit<PollInput, 'now'>): { at: number; wait: number }[] {
  const polls: { at: number; wait: number }[] = [];
  for (let now = input.phaseStartedAt; now < input.deadline;) {
    const wait = nextPollSeconds({ ...input, now });
    polls.push({ at: now, wait });
    now += wait * S;
  }
  return polls;
}

/** A 10-minute test started at 0, with the run deadline the lifecycle would give it. */
const tenMinuteRun = { phase: Phase.run, phaseStartedAt: 0, expectedEndAt: 600 * S, deadline: runDeadline(0, {}, 600, Infinity) };

describe('nextPollSeconds', () => {
  it('is sparse while the test is far from its end and dense near it', () => {
    const atStart = nextPollSeconds({ ...tenMinuteRun, now: 0 });
    const nearEnd = nextPollSeconds({ ...tenMinuteRun, now: 590 * S });
    expect(atStart).toBe(60);
    expect(nearEnd).toBe(5);
    // Approaching the end, each wait is no longer than the one before.
    const approach = schedule(tenMinuteRun).filter((p) => p.at < 600 * S);
    for (let i = 1; i < approach.length; i++) expect(approach[i]!.wait).toBeLessThanOrEqual(approach[i - 1]!.wait);
    // And the last poll before the end is at most the minimum interval away from it.
    expect(600 * S - approach[approach.length - 1]!.at).toBeLessThanOrEqual(10 * S);
  });

  it('polls densely just after the expected end, then backs off if the test overruns', () => {
    expect(nextPollSeconds({ ...tenMinuteRun, now: 600 * S })).toBe(5);
    expect(nextPollSeconds({ ...tenMinuteRun, now: 610 * S })).toBe(5);
    expect(nextPollSeconds({ ...tenMinuteRun, now: 640 * S })).toBe(10);
    const overrun = schedule(tenMinuteRun).filter((p) => p.at >= 600 * S);
    expect(overrun.length).toBeGreaterThan(3);
  });

  it.each([
    ['prepare', Phase.prepare, 0, 2],
    ['prepare after 50 s', Phase.prepare, 50, 5],
    ['prepare after 5 min', Phase.prepare, 300, 10],
    ['ready', Phase.ready, 0, 2],
    ['ready after 9 min', Phase.ready, 540, 10],
  ])('waiting phases start at 2 s and grow to 10 s: %s', (_label, phase, ageSeconds, wait) => {
    expect(nextPollSeconds({ phase, now: ageSeconds * S, phaseStartedAt: 0, deadline: 600 * S })).toBe(wait);
  });

  it('a run without an expected end backs off with its age, within the run bounds', () => {
    const base = { phase: Phase.run, phaseStartedAt: 0, deadline: 24 * HOUR * S };
    expect(nextPollSeconds({ ...base, now: 0 })).toBe(5);
    expect(nextPollSeconds({ ...base, now: 300 * S })).toBe(30);
    expect(nextPollSeconds({ ...base, now: 10 * HOUR * S })).toBe(72);
  });

  it('never waits past the deadline: the last poll lands on it', () => {
    const cases: Omit<PollInput, 'now'>[] = [
      tenMinuteRun,
      { ...tenMinuteRun, deadline: 300 * S }, // deadline before the expected end
      { phase: Phase.run, phaseStartedAt: 0, deadline: 7 * HOUR * S + 123 },
      { phase: Phase.prepare, phaseStartedAt: 0, deadline: 97_500 },
      { phase: Phase.ready, phaseStartedAt: 5 * S, deadline: 601_250 },
    ];
    for (const input of cases) {
      const polls = schedule(input);
      for (const { at, wait } of polls) expect(wait).toBeLessThanOrEqual(Math.ceil((input.deadline - at) / S));
      const last = polls[polls.length - 1]!;
      const reached = last.at + last.wait * S;
      expect(reached).toBeGreaterThanOrEqual(input.deadline);
      expect(reached - input.deadline).toBeLessThan(S);
    }
  });

  it('returns whole seconds, at least 1, whatever the inputs', () => {
    const offsets = [-5000, -1, 0, 1, 499, 999, 1001, 61_234, 3_600_000, 90_000_000];
    for (const phase of Object.values(Phase)) {
      for (const now of offsets) {
        for (const deadline of offsets) {
          for (const expectedEndAt of [undefined, ...offsets]) {
            const input = { phase, now, phaseStartedAt: 0, deadline, ...(expectedEndAt === undefined ? {} : { expectedEndAt }) };
            const wait = nextPollSeconds(input);
            expect(Number.isInteger(wait), JSON.stringify(input)).toBe(true);
            expect(wait, JSON.stringify(input)).toBeGreaterThanOrEqual(1);
          }
        }
      }
    }
  });
});

describe('execution history budget', () => {
  it('counts 9 events per poll cycle (Lambda Task 5, Choice 2, Wait 2)', () => {
    expect(EVENTS_PER_POLL_CYCLE).toBe(9);
  });

  it.each([
    ['1 min', 60],
    ['1 h', HOUR],
    ['24 h (the default maximum run)', 24 * HOUR],
    ['72 h (a raised maximum)', 72 * HOUR],
  ])('a %s test stays well under 25,000 events even when it runs to its deadline', (_label, seconds) => {
    // On a deployment that allows it: a longer maximum run makes the cruise interval longer.
    const limits = { maxRunDurationSeconds: Math.max(seconds, DEFAULT_CONFIG.maxRunDurationSeconds) };
    const events = estimateHistoryEvents(seconds, { limits });
    expect(events).toBeLessThan(HISTORY_EVENT_LIMIT * 0.6);
  });

  it('is a simulation of the schedule: it grows with the run until the budget caps it', () => {
    const [minute, hour, day, threeDays] = [60, HOUR, 24 * HOUR, 72 * HOUR].map((s) => estimateHistoryEvents(s)) as [number, number, number, number];
    expect(minute).toBeLessThan(hour);
    expect(hour).toBeLessThan(day);
    expect(day).toBeLessThanOrEqual(threeDays);
    // A day-long run's own history holds a window's 10 events an hour, not its 60 polls' 540.
    expect(day - hour).toBeLessThan(24 * (EVENTS_PER_CRUISE_WINDOW + 2 * EVENTS_PER_POLL_CYCLE));
  });

  it("keeps a 24-hour test's execution under 2,500 events and each cruise window under 600: the windows hold the minute-by-minute polls", () => {
    // Worked example: the run phase of a 24 h test runs on to its deadline (24 h + 10 % grace = 95,040 s).
    const polls = pollsUntilDeadline(Phase.run, 24 * HOUR * 1.1, 24 * HOUR, CRUISE_POLL_SECONDS);
    // Polled once a minute throughout but for the approach to the end: at least 1,500 polls.
    expect(polls.waits + polls.cruises).toBeGreaterThan(1_500);
    // One window an hour, its first poll (and the approach to the end) the run's own.
    expect(polls.windows).toBeGreaterThanOrEqual(26);
    expect(polls.windows).toBeLessThanOrEqual(27);
    expect(polls.longestWindow).toBe(CRUISE_WINDOW_POLLS - 1);
    expect(polls.cruises).toBeGreaterThan(polls.waits * 20);
    expect(estimateHistoryEvents(24 * HOUR)).toBeLessThan(2_500);
    expect(estimateCruiseWindowEvents(24 * HOUR)).toBe((CRUISE_WINDOW_POLLS - 1) * EVENTS_PER_POLL_CYCLE + CRUISE_WINDOW_OWN_EVENTS);
    expect(estimateCruiseWindowEvents(24 * HOUR)).toBeLessThan(600);
  });

  it('a short test needs no cruise window: every poll is a Wait of the run', () => {
    const polls = pollsUntilDeadline(Phase.run, 120, 60, CRUISE_POLL_SECONDS);
    expect(polls).toMatchObject({ cruises: 0, windows: 0, longestWindow: 0 });
    expect(estimateCruiseWindowEvents(60)).toBe(0);
  });

  it('counts the queue loop: the longest queue and the longest test together still fit', () => {
    const worst = estimateHistoryEvents(DEFAULT_CONFIG.maxRunDurationSeconds, { queueSeconds: DEFAULT_CONFIG.maxQueueSeconds });
    expect(worst).toBeGreaterThan(estimateHistoryEvents(DEFAULT_CONFIG.maxRunDurationSeconds));
    expect(worst).toBeLessThan(HISTORY_EVENT_LIMIT / 2);
  });

  it('polls a long test far less often than a fixed 15 s interval (DLT #335)', () => {
    const fixed15sCycles = (24 * HOUR) / 15;
    expect(fixed15sCycles * EVENTS_PER_POLL_CYCLE).toBeGreaterThan(HISTORY_EVENT_LIMIT);
    expect(estimateHistoryEvents(24 * HOUR)).toBeLessThan(HISTORY_EVENT_LIMIT / 2);
  });

  it('bounds every phase by its cycle budget however long it is, so any execution fits', () => {
    // The worst imaginable: every phase lasts 72 h and never finishes early.
    const long = 72 * HOUR;
    const cycles =
      pollCyclesUntilDeadline(Phase.prepare, long) + pollCyclesUntilDeadline(Phase.ready, long) + pollCyclesUntilDeadline(Phase.run, long + long / 10, long);
    expect(cycles * EVENTS_PER_POLL_CYCLE).toBeLessThan(HISTORY_EVENT_LIMIT * 0.8);
    // Short phases keep their fine intervals: a 10-minute prepare still polls every 10 s at most.
    expect(pollCyclesUntilDeadline(Phase.prepare, 600)).toBeGreaterThan(600 / 10);
  });
});

describe('cruise polls (Watch answers cruising; a cruise window polls on every cruise interval)', () => {
  it('is a minute for the default limits, so a runner that fails mid-test is seen within a minute', () => {
    expect(cruisePollSeconds(DEFAULT_CONFIG)).toBe(60);
  });

  it('slows down only for deployments whose longest test would spend more than its budget of polls', () => {
    const week = { maxRunDurationSeconds: 7 * 24 * HOUR };
    const seconds = cruisePollSeconds(week);
    expect(seconds).toBeGreaterThan(60);
    expect((week.maxRunDurationSeconds * 1.1) / seconds).toBeLessThanOrEqual(CRUISE_POLL_BUDGET);
  });

  it('ends a cruise window (the poll answers waiting, a Wait of the run) every sixty cruise intervals: hourly at a minute', () => {
    const starts = Array.from({ length: 180 }, (_, i) => i).filter((i) => startsCruiseWindow(i * 60_000, 60));
    expect(starts).toEqual([0, 60, 120]);
    // Late polls (a Lambda's own time, retries) still start each window once.
    const late = Array.from({ length: 180 }, (_, i) => i).filter((i) => startsCruiseWindow(i * 60_000 + 1_700, 60));
    expect(late).toEqual([0, 60, 120]);
  });
});

describe('queuePollSeconds (Acquire: a run waiting for a concurrency slot)', () => {
  /** Poll cycles from joining the queue until its deadline, with no slot ever free. */
  function cycles(queueSeconds: number): { count: number; waits: number[] } {
    const queueBy = queueSeconds * 1000;
    const waits: number[] = [];
    for (let now = 0; now < queueBy; now += waits[waits.length - 1]! * 1000) waits.push(queuePollSeconds({ now, queuedAt: 0, queueBy }));
    return { count: waits.length, waits };
  }

  it('waits 5 to 30 s in a queue of up to 2.5 h, the last wait landing on the deadline', () => {
    const { waits } = cycles(3600);
    expect(Math.min(...waits.slice(0, -1))).toBe(5);
    expect(Math.max(...waits)).toBe(30);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(3600);
  });

  it('spends about 330 poll cycles at most, however long the queue (the execution history stays bounded)', () => {
    const counts = [600, 3600, 9000, 6 * 3600, 24 * 3600].map((s) => cycles(s).count);
    expect(Math.max(...counts)).toBeLessThanOrEqual(QUEUE_CYCLE_BUDGET + 45);
    expect(cycles(6 * 3600).count).toBeGreaterThan(QUEUE_CYCLE_BUDGET); // the young queue's short waits come on top
  });
});
