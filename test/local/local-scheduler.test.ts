import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  MAX_DELIVERY_ATTEMPTS,
  createLocalScheduler,
  scheduledTimeOf,
  type LocalScheduleDefinition,
  type LocalSchedulerOptions,
} from '../../local/scheduler/local-scheduler';

const MINUTE = 60_000;
const START = Date.parse('2026-03-15T10:00:00Z');

/** A scheduler on a hand-moved clock, recording what it delivered and logged. */
function harness(schedules: LocalScheduleDefinition[], options: Partial<LocalSchedulerOptions> = {}) {
  let now = START;
  const delivered: string[] = [];
  const logged: Array<{ message: string; [k: string]: unknown }> = [];
  const state = { schedules, failNext: 0 };
  const scheduler = createLocalScheduler({
    list: async () => state.schedules,
    deliver: async ({ schedule }) => {
      if (state.failNext > 0) {
        state.failNext--;
        throw new Error('StartExecution failed');
      }
      delivered.push(`${schedule.name}@${schedule.scheduledTime}`);
    },
    now: () => now,
    log: (event) => logged.push(event),
    ...options,
  });
  return {
    scheduler,
    delivered,
    logged,
    state,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const everyMinute: LocalScheduleDefinition = { name: 'minutely', expression: 'cron(* * * * ? *)', enabled: true };

describe('createLocalScheduler', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a cron every minute over 5 simulated minutes: 5 deliveries, at the right times', async () => {
    const { scheduler, delivered, advance } = harness([everyMinute]);
    expect(await scheduler.tick()).toEqual([]);
    for (let i = 0; i < 5; i++) {
      advance(MINUTE);
      const ticked = await scheduler.tick();
      expect(ticked).toEqual([{ name: 'minutely', scheduledTime: scheduledTimeOf(START + (i + 1) * MINUTE), deliveries: 1, errors: [], attempt: 1 }]);
    }
    expect(delivered).toEqual([
      'minutely@2026-03-15T10:01:00Z',
      'minutely@2026-03-15T10:02:00Z',
      'minutely@2026-03-15T10:03:00Z',
      'minutely@2026-03-15T10:04:00Z',
      'minutely@2026-03-15T10:05:00Z',
    ]);
  });

  it('one tick late delivers every fire time it passed over, in order; a tick between fire times delivers none', async () => {
    const { scheduler, delivered, advance } = harness([everyMinute]);
    advance(30_000);
    expect(await scheduler.tick()).toEqual([]);
    advance(3 * MINUTE);
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T10:01:00Z', 'minutely@2026-03-15T10:02:00Z', 'minutely@2026-03-15T10:03:00Z']);
  });

  it('scheduledTime is UTC without milliseconds, for a cron in another time zone too', async () => {
    const { scheduler, delivered, advance } = harness([{ name: 'berlin', expression: 'cron(5 11 * * ? *)', timeZone: 'Europe/Berlin', enabled: true }]);
    advance(10 * MINUTE);
    await scheduler.tick();
    // 11:05 in Berlin (CET, +1) is 10:05 UTC.
    expect(delivered).toEqual(['berlin@2026-03-15T10:05:00Z']);
  });

  it('deliveries: 2 delivers each fire time twice, at once', async () => {
    let active = 0;
    let mostAtOnce = 0;
    const calls: string[] = [];
    const scheduler = createLocalScheduler({
      list: async () => [everyMinute],
      deliver: async ({ schedule }) => {
        active++;
        mostAtOnce = Math.max(mostAtOnce, active);
        calls.push(schedule.scheduledTime);
        // Yield a few turns: a second call made at once starts before this one ends.
        for (let i = 0; i < 3; i++) await Promise.resolve();
        active--;
      },
      now: () => START + 2 * MINUTE,
      startAt: START,
      deliveries: 2,
    });
    const ticked = await scheduler.tick();
    expect(ticked.map((t) => [t.scheduledTime, t.deliveries])).toEqual([
      ['2026-03-15T10:01:00Z', 2],
      ['2026-03-15T10:02:00Z', 2],
    ]);
    expect(calls).toEqual(['2026-03-15T10:01:00Z', '2026-03-15T10:01:00Z', '2026-03-15T10:02:00Z', '2026-03-15T10:02:00Z']);
    expect(mostAtOnce).toBe(2);
  });

  it('a delivery that fails is retried on the next tick, then not again', async () => {
    const { scheduler, delivered, state, advance } = harness([everyMinute]);
    state.failNext = 1;
    advance(MINUTE);
    expect(await scheduler.tick()).toEqual([
      { name: 'minutely', scheduledTime: '2026-03-15T10:01:00Z', deliveries: 1, errors: ['Error: StartExecution failed'], attempt: 1 },
    ]);
    expect(delivered).toEqual([]);
    advance(MINUTE);
    expect(await scheduler.tick()).toEqual([
      { name: 'minutely', scheduledTime: '2026-03-15T10:01:00Z', deliveries: 1, errors: [], attempt: 2 },
      { name: 'minutely', scheduledTime: '2026-03-15T10:02:00Z', deliveries: 1, errors: [], attempt: 1 },
    ]);
    advance(MINUTE);
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T10:01:00Z', 'minutely@2026-03-15T10:02:00Z', 'minutely@2026-03-15T10:03:00Z']);
  });

  it(`a delivery that keeps failing is given up after ${MAX_DELIVERY_ATTEMPTS} attempts, and logged`, async () => {
    const { scheduler, logged, state, advance } = harness([{ name: 'once', expression: 'at(2026-03-15T10:01:00)', enabled: true }]);
    state.failNext = Infinity;
    const attempts: number[] = [];
    for (let i = 0; i < MAX_DELIVERY_ATTEMPTS + 2; i++) {
      advance(MINUTE);
      for (const t of await scheduler.tick()) attempts.push(t.attempt);
    }
    expect(attempts).toEqual([1, 2, 3]);
    expect(logged).toContainEqual(
      expect.objectContaining({ message: 'schedule delivery given up', schedule: 'once', scheduledTime: '2026-03-15T10:01:00Z', attempts: 3 }),
    );
  });

  it('with deliveries: 2, one failed copy of two is delivered (at least once): no retry', async () => {
    const { scheduler, delivered, state, advance } = harness([everyMinute], { deliveries: 2 });
    state.failNext = 1;
    advance(MINUTE);
    expect((await scheduler.tick())[0]!.errors).toHaveLength(1);
    advance(MINUTE);
    expect((await scheduler.tick()).map((t) => t.scheduledTime)).toEqual(['2026-03-15T10:02:00Z']);
    expect(delivered).toEqual(['minutely@2026-03-15T10:01:00Z', 'minutely@2026-03-15T10:02:00Z', 'minutely@2026-03-15T10:02:00Z']);
  });

  it('rate() fires at anchor + k × period, never before the anchor', async () => {
    const anchor = START + 20_000;
    const { scheduler, delivered, advance } = harness([{ name: 'rate', expression: 'rate(2 minutes)', enabled: true, anchor }]);
    for (let i = 0; i < 5; i++) {
      advance(MINUTE);
      await scheduler.tick();
    }
    expect(delivered).toEqual(['rate@2026-03-15T10:02:20Z', 'rate@2026-03-15T10:04:20Z']);
  });

  it('the anchor holds back a cron too: a schedule created mid-window does not fire for times before it', async () => {
    const { scheduler, delivered, state, advance } = harness([]);
    advance(90_000); // 10:01:30
    await scheduler.tick();
    state.schedules = [{ ...everyMinute, anchor: START + 150_000 }]; // created 10:02:30
    advance(2 * MINUTE); // 10:03:30: 10:02 is before its creation
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T10:03:00Z']);
  });

  it('a disabled schedule does not fire; enabled again, it fires from then on, not the times it missed', async () => {
    const { scheduler, delivered, state, advance } = harness([{ ...everyMinute, enabled: false }]);
    advance(3 * MINUTE);
    expect(await scheduler.tick()).toEqual([]);
    state.schedules = [everyMinute];
    advance(MINUTE);
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T10:04:00Z']);
  });

  it('a schedule that disappears stops firing, and its pending retry is dropped', async () => {
    const { scheduler, delivered, logged, state, advance } = harness([everyMinute, { ...everyMinute, name: 'other' }]);
    state.failNext = 1;
    advance(MINUTE);
    await scheduler.tick(); // one of the two 10:01 deliveries failed
    state.schedules = [];
    advance(MINUTE);
    expect(await scheduler.tick()).toEqual([]);
    expect(delivered).toHaveLength(1);
    expect(logged).toContainEqual(expect.objectContaining({ message: 'schedule retry dropped: the schedule is gone or disabled' }));
  });

  it('maxCatchUp: after a long sleep, at most that many fire times per schedule, the latest, and the rest logged as skipped', async () => {
    const { scheduler, delivered, logged, advance } = harness([everyMinute, { name: 'hourly', expression: 'cron(0 * * * ? *)', enabled: true }], {
      maxCatchUp: 3,
    });
    advance(7 * 24 * 60 * MINUTE); // a week asleep
    await scheduler.tick();
    expect(delivered.filter((d) => d.startsWith('minutely@'))).toEqual([
      'minutely@2026-03-22T09:58:00Z',
      'minutely@2026-03-22T09:59:00Z',
      'minutely@2026-03-22T10:00:00Z',
    ]);
    expect(delivered.filter((d) => d.startsWith('hourly@'))).toEqual([
      'hourly@2026-03-22T08:00:00Z',
      'hourly@2026-03-22T09:00:00Z',
      'hourly@2026-03-22T10:00:00Z',
    ]);
    expect(logged.filter((l) => l.message.startsWith('schedule fire times skipped')).map((l) => l.schedule)).toEqual(['minutely', 'hourly']);
  });

  it('maxCatchUp defaults to 10', async () => {
    const { scheduler, delivered, advance } = harness([everyMinute]);
    advance(60 * MINUTE);
    await scheduler.tick();
    expect(delivered).toHaveLength(10);
    expect(delivered.at(-1)).toBe('minutely@2026-03-15T11:00:00Z');
  });

  it('startAt: fire times after it are due at the first tick', async () => {
    const { scheduler, delivered } = harness([everyMinute], { startAt: START - 2 * MINUTE });
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T09:59:00Z', 'minutely@2026-03-15T10:00:00Z']);
  });

  it('an at() schedule fires once', async () => {
    const { scheduler, delivered, advance } = harness([{ name: 'once', expression: 'at(2026-03-15T10:02:00)', enabled: true }]);
    for (let i = 0; i < 5; i++) {
      advance(MINUTE);
      await scheduler.tick();
    }
    expect(delivered).toEqual(['once@2026-03-15T10:02:00Z']);
  });

  it('a schedule that cannot be evaluated is logged and skipped; the others fire', async () => {
    const { scheduler, delivered, logged, advance } = harness([{ name: 'bad', expression: 'cron(61 * * * ? *)', enabled: true }, everyMinute]);
    advance(MINUTE);
    await scheduler.tick();
    expect(delivered).toEqual(['minutely@2026-03-15T10:01:00Z']);
    expect(logged).toContainEqual(
      expect.objectContaining({ message: 'schedule cannot be evaluated', schedule: 'bad', error: expect.stringMatching(/minutes "61"/) }),
    );
  });

  it('ticks called at once run one after the other: no fire time twice', async () => {
    const { scheduler, delivered, advance } = harness([everyMinute]);
    advance(2 * MINUTE);
    await Promise.all([scheduler.tick(), scheduler.tick(), scheduler.tick()]);
    expect(delivered).toEqual(['minutely@2026-03-15T10:01:00Z', 'minutely@2026-03-15T10:02:00Z']);
  });

  it('a tick whose list fails throws and delivers nothing; the next tick covers the window', async () => {
    let fail = true;
    const delivered: string[] = [];
    let now = START;
    const scheduler = createLocalScheduler({
      list: async () => {
        if (fail) throw new Error('ledger unavailable');
        return [everyMinute];
      },
      deliver: async ({ schedule }) => void delivered.push(schedule.scheduledTime),
      now: () => now,
    });
    now += MINUTE;
    await expect(scheduler.tick()).rejects.toThrow('ledger unavailable');
    fail = false;
    now += MINUTE;
    await scheduler.tick();
    expect(delivered).toEqual(['2026-03-15T10:01:00Z', '2026-03-15T10:02:00Z']);
  });

  it('start ticks on the timer and logs a failed tick instead of throwing; stop ends it', async () => {
    vi.useFakeTimers();
    let now = START;
    let lists = 0;
    const logged: string[] = [];
    const scheduler = createLocalScheduler({
      list: async () => {
        lists++;
        throw new Error('ledger unavailable');
      },
      deliver: async () => {},
      now: () => now,
      log: (event) => logged.push(`${event.message}: ${String(event.error)}`),
    });
    scheduler.start(1_000);
    now += MINUTE;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lists).toBe(1);
    expect(logged).toEqual(['scheduler tick failed: Error: ledger unavailable']);
    await scheduler.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lists).toBe(1);
  });
});
