import { describe, expect, it } from 'vitest';
import { SpecInvalid } from '../../lambdas/core/errors';
import {
  fireTimesBetween,
  nextFireTimes,
  scheduleExpressionProblem,
  strictScheduleExpressionProblem,
  timeZoneProblem,
} from '../../lambdas/core/schedule-expression';

const at = (iso: string) => Date.parse(iso);
const isos = (times: number[]) => times.map((t) => new Date(t).toISOString().replace('.000Z', 'Z'));
const next = (expression: string, after: string, count: number, timeZone?: string) =>
  isos(nextFireTimes({ expression, after: at(after), count, ...(timeZone && { timeZone }) }));

describe('cron in UTC', () => {
  it('fires every day at the hour and minute given, strictly after `after`', () => {
    expect(next('cron(0 2 * * ? *)', '2026-03-15T02:00:00Z', 3)).toEqual(['2026-03-16T02:00:00Z', '2026-03-17T02:00:00Z', '2026-03-18T02:00:00Z']);
    expect(next('cron(0 2 * * ? *)', '2026-03-15T01:59:59.999Z', 1)).toEqual(['2026-03-15T02:00:00Z']);
  });

  it('fires on weekdays only with MON-FRI (2026-03-20 is a Friday)', () => {
    expect(next('cron(0 18 ? * MON-FRI *)', '2026-03-20T12:00:00Z', 3)).toEqual(['2026-03-20T18:00:00Z', '2026-03-23T18:00:00Z', '2026-03-24T18:00:00Z']);
    expect(next('cron(0 18 ? * 2-6 *)', '2026-03-20T12:00:00Z', 3)).toEqual(next('cron(0 18 ? * MON-FRI *)', '2026-03-20T12:00:00Z', 3));
  });

  it('reads day-of-week 1-7 as SUN-SAT', () => {
    expect(next('cron(0 9 ? * 1 *)', '2026-03-15T12:00:00Z', 1)).toEqual(['2026-03-22T09:00:00Z']); // a Sunday
    expect(next('cron(0 9 ? * 7 *)', '2026-03-15T12:00:00Z', 1)).toEqual(['2026-03-21T09:00:00Z']); // a Saturday
  });

  it('steps minutes within hours: every 15 minutes from 8 to 9', () => {
    expect(next('cron(0/15 8-9 * * ? *)', '2026-03-15T09:40:00Z', 3)).toEqual(['2026-03-15T09:45:00Z', '2026-03-16T08:00:00Z', '2026-03-16T08:15:00Z']);
  });

  it('L: the last day of the month, and L-2 two days before it', () => {
    expect(next('cron(0 12 L * ? *)', '2026-01-31T12:00:00Z', 3)).toEqual(['2026-02-28T12:00:00Z', '2026-03-31T12:00:00Z', '2026-04-30T12:00:00Z']);
    expect(next('cron(0 12 L-2 * ? *)', '2026-02-01T00:00:00Z', 1)).toEqual(['2026-02-26T12:00:00Z']);
  });

  it('nL: the last Friday of the month', () => {
    expect(next('cron(15 10 ? * 6L 2027)', '2026-06-01T00:00:00Z', 3)).toEqual(['2027-01-29T10:15:00Z', '2027-02-26T10:15:00Z', '2027-03-26T10:15:00Z']);
    expect(next('cron(15 10 ? * FRIL 2027)', '2026-06-01T00:00:00Z', 3)).toEqual(next('cron(15 10 ? * 6L 2027)', '2026-06-01T00:00:00Z', 3));
  });

  it('#: the first Monday of the month, the third Friday', () => {
    expect(next('cron(0 9 ? * 2#1 *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-05T09:00:00Z', '2026-02-02T09:00:00Z', '2026-03-02T09:00:00Z']);
    expect(next('cron(0 9 ? * FRI#3 *)', '2026-03-01T00:00:00Z', 1)).toEqual(['2026-03-20T09:00:00Z']);
  });

  it('W: the weekday nearest the 15th, within the month', () => {
    // 2026-03-15 is a Sunday (→ Monday 16th); 2026-08-15 a Saturday (→ Friday 14th).
    expect(next('cron(0 9 15W * ? *)', '2026-03-01T00:00:00Z', 1)).toEqual(['2026-03-16T09:00:00Z']);
    expect(next('cron(0 9 15W * ? *)', '2026-08-01T00:00:00Z', 1)).toEqual(['2026-08-14T09:00:00Z']);
  });

  it('skips days a month does not have (31 April is not 1 May; 29 February only in leap years)', () => {
    expect(next('cron(0 0 31 * ? *)', '2026-03-31T12:00:00Z', 2)).toEqual(['2026-05-31T00:00:00Z', '2026-07-31T00:00:00Z']);
    expect(next('cron(0 0 29 2 ? *)', '2097-01-01T00:00:00Z', 2)).toEqual(['2104-02-29T00:00:00Z', '2108-02-29T00:00:00Z']);
    expect(next('cron(0 0 30 2 ? *)', '2026-01-01T00:00:00Z', 1)).toEqual([]);
  });

  it('ends when the year field runs out', () => {
    expect(next('cron(0 0 1 1 ? 2027)', '2026-01-01T00:00:00Z', 5)).toEqual(['2027-01-01T00:00:00Z']);
  });

  it('reads month names and is not fooled by repeated names', () => {
    expect(next('cron(0 0 1 JAN,jul ? *)', '2026-02-01T00:00:00Z', 2)).toEqual(['2026-07-01T00:00:00Z', '2027-01-01T00:00:00Z']);
    expect(next('cron(0 0 ? * MON,WED,MON *)', '2026-03-16T12:00:00Z', 2)).toEqual(['2026-03-18T00:00:00Z', '2026-03-23T00:00:00Z']);
  });
});

describe('cron in a time zone (Europe/Berlin: CET +1, CEST +2 from 2026-03-29 02:00 to 2026-10-25 03:00)', () => {
  it('fires at the wall-clock time, whatever the offset', () => {
    expect(next('cron(30 2 * * ? *)', '2026-03-26T12:00:00Z', 2, 'Europe/Berlin')).toEqual(['2026-03-27T01:30:00Z', '2026-03-28T01:30:00Z']);
    expect(next('cron(0 9 * * ? *)', '2026-03-28T12:00:00Z', 2, 'Europe/Berlin')).toEqual(['2026-03-29T07:00:00Z', '2026-03-30T07:00:00Z']);
  });

  it('does not fire on the day the clock skips the time (spring)', () => {
    expect(next('cron(30 2 * * ? *)', '2026-03-27T12:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-03-28T01:30:00Z',
      // 2026-03-29 02:30 does not exist in Berlin.
      '2026-03-30T00:30:00Z',
      '2026-03-31T00:30:00Z',
    ]);
  });

  it('fires once in the hour the clock repeats (autumn), at its first occurrence', () => {
    expect(next('cron(30 2 * * ? *)', '2026-10-24T12:00:00Z', 3, 'Europe/Berlin')).toEqual([
      '2026-10-25T00:30:00Z', // 02:30 CEST, not 02:30 CET an hour later
      '2026-10-26T01:30:00Z',
      '2026-10-27T01:30:00Z',
    ]);
    expect(next('cron(0/20 * * * ? *)', '2026-10-24T23:50:00Z', 6, 'Europe/Berlin')).toEqual([
      '2026-10-25T00:00:00Z', // 02:00 CEST
      '2026-10-25T00:20:00Z',
      '2026-10-25T00:40:00Z',
      // 02:00-02:59 CET (01:00-01:59 UTC) is the repeat: nothing.
      '2026-10-25T02:00:00Z', // 03:00 CET
      '2026-10-25T02:20:00Z',
      '2026-10-25T02:40:00Z',
    ]);
  });

  it('asked from inside the repeated hour, waits for the next new wall-clock time', () => {
    // 01:30 UTC is 02:30 CET, the second pass: 02:40 has been (as CEST), 03:00 CET has not.
    expect(next('cron(0/20 * * * ? *)', '2026-10-25T01:30:00Z', 1, 'Europe/Berlin')).toEqual(['2026-10-25T02:00:00Z']);
  });

  it('counts weekdays on the wall clock (Monday 00:30 in Berlin is Sunday in UTC)', () => {
    expect(next('cron(30 0 ? * MON *)', '2026-03-15T00:00:00Z', 1, 'Europe/Berlin')).toEqual(['2026-03-15T23:30:00Z']);
  });

  it('handles zones with a half-hour offset', () => {
    expect(next('cron(0 9 * * ? *)', '2026-03-15T00:00:00Z', 1, 'Asia/Kolkata')).toEqual(['2026-03-15T03:30:00Z']);
  });
});

describe('rate', () => {
  it('fires at anchor + k × period, k ≥ 1', () => {
    const anchor = at('2026-03-15T10:07:30Z');
    const times = nextFireTimes({ expression: 'rate(15 minutes)', anchor, after: anchor, count: 3 });
    expect(isos(times)).toEqual(['2026-03-15T10:22:30Z', '2026-03-15T10:37:30Z', '2026-03-15T10:52:30Z']);
  });

  it('from any `after`, the next multiple of the period past the anchor', () => {
    const anchor = at('2026-03-15T10:07:30Z');
    expect(isos(nextFireTimes({ expression: 'rate(2 hours)', anchor, after: at('2026-03-16T00:00:00Z'), count: 2 }))).toEqual([
      '2026-03-16T00:07:30Z',
      '2026-03-16T02:07:30Z',
    ]);
    expect(isos(nextFireTimes({ expression: 'rate(2 hours)', anchor, after: at('2026-03-16T00:07:30Z'), count: 1 }))).toEqual(['2026-03-16T02:07:30Z']);
    // Asked before its anchor, the first fire is one period after it, never the anchor itself.
    expect(isos(nextFireTimes({ expression: 'rate(1 hour)', anchor, after: anchor - 86_400_000, count: 1 }))).toEqual(['2026-03-15T11:07:30Z']);
  });

  it('counts a day as 24 hours across a DST change (the time zone does not apply)', () => {
    const anchor = at('2026-03-28T09:00:00Z');
    expect(isos(nextFireTimes({ expression: 'rate(1 day)', timeZone: 'Europe/Berlin', anchor, after: anchor, count: 2 }))).toEqual([
      '2026-03-29T09:00:00Z',
      '2026-03-30T09:00:00Z',
    ]);
  });

  it('without an anchor, counts from the epoch', () => {
    expect(next('rate(1 hour)', '2026-03-15T10:07:30Z', 1)).toEqual(['2026-03-15T11:00:00Z']);
  });
});

describe('at', () => {
  it('fires once, at the wall-clock time of its time zone', () => {
    expect(next('at(2026-07-01T09:00:00)', '2026-01-01T00:00:00Z', 5, 'Europe/Berlin')).toEqual(['2026-07-01T07:00:00Z']);
    expect(next('at(2026-07-01T09:00:00)', '2026-01-01T00:00:00Z', 5)).toEqual(['2026-07-01T09:00:00Z']);
  });

  it('never again once it has passed', () => {
    expect(next('at(2026-07-01T09:00:00)', '2026-07-01T09:00:00Z', 5)).toEqual([]);
  });

  it('a time the clock skips never fires; a repeated one fires at its first occurrence', () => {
    expect(next('at(2026-03-29T02:30:00)', '2026-01-01T00:00:00Z', 1, 'Europe/Berlin')).toEqual([]);
    expect(next('at(2026-10-25T02:30:00)', '2026-01-01T00:00:00Z', 1, 'Europe/Berlin')).toEqual(['2026-10-25T00:30:00Z']);
  });
});

describe('fireTimesBetween', () => {
  it('gives the fire times in (from, to]', () => {
    const times = fireTimesBetween({ expression: 'cron(* * * * ? *)', from: at('2026-03-15T10:00:00Z'), to: at('2026-03-15T10:03:00Z'), max: 100 });
    expect(isos(times)).toEqual(['2026-03-15T10:01:00Z', '2026-03-15T10:02:00Z', '2026-03-15T10:03:00Z']);
  });

  it('at most `max`, the earliest', () => {
    const times = fireTimesBetween({ expression: 'cron(* * * * ? *)', from: at('2026-03-15T10:00:00Z'), to: at('2026-03-15T12:00:00Z'), max: 2 });
    expect(isos(times)).toEqual(['2026-03-15T10:01:00Z', '2026-03-15T10:02:00Z']);
  });

  it('is empty for an empty interval', () => {
    expect(fireTimesBetween({ expression: 'cron(* * * * ? *)', from: at('2026-03-15T10:00:00Z'), to: at('2026-03-15T10:00:00Z'), max: 5 })).toEqual([]);
    expect(fireTimesBetween({ expression: 'cron(* * * * ? *)', from: at('2026-03-15T10:00:00Z'), to: at('2026-03-15T10:00:59Z'), max: 5 })).toEqual([]);
  });

  it('applies the rate anchor', () => {
    const anchor = at('2026-03-15T10:00:20Z');
    const times = fireTimesBetween({ expression: 'rate(1 minute)', anchor, from: at('2026-03-15T10:00:00Z'), to: at('2026-03-15T10:02:30Z'), max: 10 });
    expect(isos(times)).toEqual(['2026-03-15T10:01:20Z', '2026-03-15T10:02:20Z']);
  });
});

describe('refusals', () => {
  it.each([
    ['cron(0 2 * * ?)', /six fields/],
    ['cron(0 2 * * * *)', /\? in exactly one/],
    ['rate(0 minutes)', /at least 1/],
    ['rate(1 hours)', /singular for 1 only/],
    ['rate(5 weeks)', /must be cron\(.+\), rate\(.+\) or at\(.+\)/],
    ['0 2 * * *', /must be cron/],
  ])('%s: the form (scheduleExpressionProblem)', (expression, reason) => {
    expect(scheduleExpressionProblem(expression)).toMatch(reason);
    expect(strictScheduleExpressionProblem(expression)).toBe(scheduleExpressionProblem(expression));
  });

  it.each([
    ['cron(61 2 * * ? *)', /minutes "61": values are 0-59/],
    ['cron(0 24 * * ? *)', /hours "24": values are 0-23/],
    ['cron(0 2 32 * ? *)', /day-of-month "32": values are 1-31/],
    ['cron(0 2 * 13 ? *)', /month "13": values are 1-12 or JAN-DEC/],
    ['cron(0 2 ? * 8 *)', /day-of-week "8": values are 1-7 or SUN-SAT/],
    ['cron(0 2 ? * FUN *)', /day-of-week "FUN"/],
    ['cron(0 2 * * ? 1969)', /year "1969": values are 1970-2199/],
    ['cron(0 2 ? * FRI-MON *)', /runs backwards/],
    ['cron(0 2 ? * 2#6 *)', /1st to 5th/],
    ['cron(0 2 LW * ? *)', /LW is not supported/],
    ['cron(0 2 1,15W * ? *)', /alone in the field/],
    ['cron(0 ? * * ? *)', /\? is only for day-of-month or day-of-week/],
    ['cron(0/0 2 * * ? *)', /step must be 1-59/],
    ['at(2026-02-30T00:00:00)', /not one/],
    ['at(2026-01-01T24:00:00)', /not one/],
  ])('%s: the values (strictScheduleExpressionProblem)', (expression, reason) => {
    expect(scheduleExpressionProblem(expression)).toBeUndefined();
    expect(strictScheduleExpressionProblem(expression)).toMatch(reason);
  });

  it('names every bad field at once', () => {
    expect(strictScheduleExpressionProblem('cron(61 25 * * ? *)')).toMatch(/minutes "61".*; hours "25"/);
  });

  it.each([
    'cron(0 2 * * ? *)',
    'cron(0/5 8-17 ? * MON-FRI *)',
    'cron(15 10 ? * 6L 2027)',
    'cron(0 12 L * ? *)',
    'cron(0 9 ? * 2#1 *)',
    'cron(0 9 15W * ? *)',
    'cron(0 9 ? * L *)',
    'rate(1 minute)',
    'at(2027-03-22T18:59:43)',
  ])('accepts %s', (expression) => {
    expect(strictScheduleExpressionProblem(expression)).toBeUndefined();
    expect(nextFireTimes({ expression, after: at('2026-01-01T00:00:00Z'), count: 1 })).toHaveLength(1);
  });

  it('nextFireTimes throws SpecInvalid naming the expression and the reason', () => {
    expect(() => nextFireTimes({ expression: 'cron(61 2 * * ? *)', after: 0, count: 1 })).toThrow(SpecInvalid);
    expect(() => nextFireTimes({ expression: 'cron(61 2 * * ? *)', after: 0, count: 1 })).toThrow(
      /^expression: "cron\(61 2 \* \* \? \*\)" must be a valid cron expression: minutes "61"/,
    );
    expect(() => nextFireTimes({ expression: 'rate(1 day)', timeZone: 'europe/berlin', after: 0, count: 1 })).toThrow(
      /^timeZone: "europe\/berlin" must be written as the IANA database spells it/,
    );
  });

  it('time zones: unknown and miscased ones are refused', () => {
    expect(timeZoneProblem('Mars/Olympus')).toMatch(/is not an IANA time zone/);
    expect(timeZoneProblem('europe/berlin')).toMatch(/e\.g\. Europe\/Berlin$/);
    expect(timeZoneProblem('America/Port-au-Prince')).toBeUndefined();
  });

  it('time zones: abbreviations Node reads with surprising meanings are refused, naming what Node would read', () => {
    expect(timeZoneProblem('BST')).toMatch(
      /^"BST" is not an IANA time zone name \(Area\/Location, e\.g\. Europe\/Berlin, or UTC\): .*BST would be read as Asia\/Dhaka/,
    );
    for (const tz of ['IST', 'CST', 'EST', 'PST', 'GMT', 'EST5EDT', 'Japan']) expect(timeZoneProblem(tz), tz).toMatch(/is not an IANA time zone name/);
  });

  it('time zones: wrong case is refused whatever the case, with the database spelling', () => {
    expect(timeZoneProblem('EUROPE/BERLIN')).toBe('"EUROPE/BERLIN" must be written as the IANA database spells it, e.g. Europe/Berlin');
    expect(timeZoneProblem('Europe/BERLIN')).toMatch(/e\.g\. Europe\/Berlin$/);
    expect(timeZoneProblem('America/Port-Au-Prince')).toMatch(/e\.g\. America\/Port-au-Prince$/);
    expect(timeZoneProblem('ETC/GMT+5')).toMatch(/e\.g\. Etc\/GMT\+5$/);
    expect(timeZoneProblem('Utc')).toMatch(/e\.g\. UTC$/);
    // Database names Node 20 does not list (it lists Asia/Calcutta): spelled right, accepted; in capitals, refused.
    expect(timeZoneProblem('ASIA/KOLKATA')).toMatch(/must be written as the IANA database spells it/);
    for (const tz of ['UTC', 'Etc/UTC', 'Etc/GMT-14', 'Asia/Kolkata', 'Europe/Kyiv', 'US/Eastern', 'America/Argentina/Buenos_Aires'])
      expect(timeZoneProblem(tz), tz).toBeUndefined();
  });

  it('rate(): at most 365 days (8760 hours, 525600 minutes), so every fire time is a date', () => {
    expect(strictScheduleExpressionProblem('rate(365 days)')).toBeUndefined();
    expect(strictScheduleExpressionProblem('rate(525600 minutes)')).toBeUndefined();
    expect(strictScheduleExpressionProblem('rate(100000000 days)')).toBe(
      'must be a rate of at most 365 days (8760 hours, 525600 minutes), got rate(100000000 days): for rarer runs use cron(...) or at(...)',
    );
    expect(strictScheduleExpressionProblem('rate(8761 hours)')).toMatch(/at most 365 days/);
    expect(isos(nextFireTimes({ expression: 'rate(365 days)', anchor: at('2026-01-01T00:00:00Z'), after: at('2026-01-01T00:00:00Z'), count: 1 }))).toEqual([
      '2027-01-01T00:00:00Z',
    ]);
    // An anchor Date cannot hold (a stored updatedAt that is not a time) has no fire times, not invalid ones.
    expect(nextFireTimes({ expression: 'rate(1 day)', anchor: Number.NaN, after: 0, count: 1 })).toEqual([]);
  });
});

describe('months with no matching day (the parser gives up on them: the search goes on, and ends)', () => {
  const iso = (times: number[]) => times.map((t) => new Date(t).toISOString());
  it.each([
    ['cron(0 0 30W * ? *)', '2026-01-31T23:59:00Z', ['2026-03-30T00:00:00.000Z', '2026-04-30T00:00:00.000Z']],
    ['cron(0 0 30W * ? *)', '2026-10-15T00:00:00Z', ['2026-10-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z']],
    ['cron(0 9 ? 2 6#5 *)', '2026-01-15T00:00:00Z', ['2036-02-29T09:00:00.000Z', '2064-02-29T09:00:00.000Z']],
    ['cron(0 0 L-30 2 ? *)', '2026-01-15T00:00:00Z', []],
  ])('%s after %s', (expression, after, expected) => {
    expect(iso(nextFireTimes({ expression, after: Date.parse(after), count: 2 }))).toEqual(expected);
  });
});
