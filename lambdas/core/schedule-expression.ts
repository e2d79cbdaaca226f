/**
 * EventBridge Scheduler's schedule expressions (architecture §4, §9): what is wrong with one, and
 * when one fires. The deploy config and the API check expressions here; `loadplane serve`'s local
 * scheduler computes fire times here, so a schedule fires locally when Scheduler would fire it.
 *
 * - `cron(minutes hours day-of-month month day-of-week year)`, AWS's flavour: `?` in exactly one of
 *   the day fields, `L` (last day of the month; `6L` the last Friday), `W` (nearest weekday), `#`
 *   (`2#1` the first Monday), day-of-week 1-7 = SUN-SAT. Evaluated on the wall clock of the
 *   schedule's time zone.
 * - `rate(n minutes|hours|days)`: every n units of elapsed time (a day is 24 hours, DST or not, as
 *   Scheduler does), counted from an anchor (the schedule's creation).
 * - `at(yyyy-mm-ddThh:mm:ss)`: once, at that wall-clock time in the schedule's time zone.
 *
 * Daylight saving time, as Scheduler documents it: a cron or at() time that the clock skips in
 * spring does not fire that day; a time the clock passes twice in autumn fires once, at its first
 * occurrence (the earlier instant, still on summer time). The calendar is computed by
 * `aws-cron-parser`, fed wall-clock fields; time zones come from Intl (no zone data of our own).
 */
import awsCron from 'aws-cron-parser';
import { SpecInvalid } from './errors';
import { excerpt } from './excerpt';

/**
 * What is wrong with a time zone, as Scheduler takes them: an IANA name `Area/Location` (or `UTC`),
 * spelled as the database spells it (`Europe/Berlin`, `Etc/GMT+5`, `America/Port-au-Prince`).
 *
 * Node (ICU) also takes abbreviations with surprising meanings (`BST` is Asia/Dhaka, `IST`
 * Asia/Calcutta, `EST` a fixed -05:00 without daylight saving) and any case (`EUROPE/BERLIN`): both
 * are refused. A name without a `/` other than `UTC` is an abbreviation or a legacy zone (`GMT`,
 * `EST5EDT`, `Japan`): `UTC`, `Etc/UTC` or `Etc/GMT±n` say a fixed offset plainly. The spelling is checked
 * against the names Intl lists and resolves to, compared case-insensitively: Node's list lags the
 * database (Node 20 lists `Asia/Calcutta`, not `Asia/Kolkata`), so a database alias Node does not
 * list is checked by the database's spelling rule instead (each part starts with a capital).
 */
export function timeZoneProblem(tz: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return `${JSON.stringify(tz)} is not an IANA time zone name (e.g. Europe/Berlin, UTC)`;
  }
  const misspelled = (spelling: string) => `${JSON.stringify(tz)} must be written as the IANA database spells it, e.g. ${spelling}`;
  if (tz !== 'UTC' && !tz.includes('/')) {
    if (tz.toUpperCase() === 'UTC') return misspelled('UTC');
    return `${JSON.stringify(tz)} is not an IANA time zone name (Area/Location, e.g. Europe/Berlin, or UTC): abbreviations are ambiguous (${tz} would be read as ${resolved})`;
  }
  const spelled = knownSpelling(tz) ?? (resolved.toLowerCase() === tz.toLowerCase() ? resolved : undefined);
  if (spelled !== undefined) return spelled === tz ? undefined : misspelled(spelled);
  // A database name Node does not list (Asia/Kolkata on Node 20): each part starts with a capital, none is in capitals (`KOLKATA`).
  return tz.split('/').every((part) => /^[A-Z]/.test(part) && !/^[A-Z]{3,}$/.test(part)) ? undefined : misspelled(resolved);
}

let spellings: Map<string, string> | undefined;

/** The spelling Intl lists for `tz` (any case), or undefined when Intl does not list it. */
function knownSpelling(tz: string): string | undefined {
  spellings ??= new Map([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC'].map((name) => [name.toLowerCase(), name]));
  return spellings.get(tz.toLowerCase());
}

/**
 * The longest rate() period: a year. Scheduler documents no maximum; this one keeps every fire time
 * a date (a rate of 10^8 days would put the first past year 275760, which Date cannot hold) and is
 * far beyond any load-test cadence (rarer runs are a cron or an at()).
 */
export const MAX_RATE_DAYS = 365;
const MAX_RATE: Record<string, number> = { day: MAX_RATE_DAYS, hour: MAX_RATE_DAYS * 24, minute: MAX_RATE_DAYS * 24 * 60 };

const CRON = /^cron\((.*)\)$/;
const CRON_FIELD = /^[0-9A-Za-z,*/?LW#-]+$/;
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;

/**
 * The common mistakes EventBridge Scheduler would refuse at deploy (and roll the stack back for), said
 * at synth: the form of cron (six fields, one `?`), rate and at. Field ranges and calendar dates are
 * left to Scheduler (strictScheduleExpressionProblem checks them too).
 */
export function scheduleExpressionProblem(expression: string): string | undefined {
  const cron = CRON.exec(expression);
  if (cron) {
    const fields = cron[1]!.trim().split(/\s+/);
    if (fields.length !== 6 || !fields.every((f) => CRON_FIELD.test(f))) {
      return 'must be cron(minutes hours day-of-month month day-of-week year): six fields, e.g. cron(0 2 * * ? *)';
    }
    if ((fields[2] === '?') === (fields[4] === '?')) return 'must have ? in exactly one of day-of-month and day-of-week, e.g. cron(0 2 * * ? *)';
    return undefined;
  }
  const rate = RATE.exec(expression);
  if (rate) {
    const value = Number(rate[1]);
    if (value < 1) return 'must be a rate of at least 1, e.g. rate(5 minutes)';
    const unit = rate[2]!.replace(/s$/, '');
    if (value > MAX_RATE[unit]!) {
      return `must be a rate of at most ${MAX_RATE_DAYS} days (${MAX_RATE.hour} hours, ${MAX_RATE.minute} minutes), got rate(${rate[1]!.length > 15 ? `${rate[1]!.slice(0, 15)}…` : rate[1]} ${rate[2]}): for rarer runs use cron(...) or at(...)`;
    }
    if ((value === 1) !== !rate[2]!.endsWith('s'))
      return `must say ${value === 1 ? 'rate(1 minute|hour|day)' : `rate(${value} minutes|hours|days)`}: the unit is singular for 1 only`;
    return undefined;
  }
  if (AT.test(expression)) return undefined;
  return 'must be cron(minutes hours day-of-month month day-of-week year), rate(<n> minutes|hours|days) or at(yyyy-mm-ddThh:mm:ss)';
}

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Names that stand for numbers (JAN = 1, SUN = 1), upper case. */
  names?: readonly string[];
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { name: 'day-of-week', min: 1, max: 7, names: DAY_NAMES },
  { name: 'year', min: 1970, max: 2199 },
];
const DAY_OF_MONTH = 2;
const DAY_OF_WEEK = 4;

/** A value of `field` as a number: digits or one of its names; undefined when it is neither or out of range. */
function fieldValue(field: CronField, text: string): number | undefined {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  const value = named >= 0 ? named + 1 : /^\d+$/.test(text) ? Number(text) : undefined;
  return value !== undefined && value >= field.min && value <= field.max ? value : undefined;
}

const rangeText = (field: CronField) => `${field.min}-${field.max}${field.names ? ` or ${field.names[0]}-${field.names[field.names.length - 1]}` : ''}`;

/**
 * One field as numbers the calendar code takes (names replaced, `L` of day-of-week as 7), or what is
 * wrong with it. The grammar is Scheduler's: `*`, `a`, `a-b`, `a/step`, `*\/step`, `a-b/step` joined by
 * commas; day-of-month also `?`, `L`, `L-n`, `nW`; day-of-week also `?`, `L`, `nL`, `n#k`.
 */
function normalizeCronField(index: number, text: string): { ok: true; text: string } | { ok: false; problem: string } {
  const field = CRON_FIELDS[index]!;
  const bad = (why: string) => ({ ok: false as const, problem: `${field.name} ${excerpt(text)}: ${why}` });
  const upper = text.toUpperCase();
  if (upper === '?') return index === DAY_OF_MONTH || index === DAY_OF_WEEK ? { ok: true, text } : bad('? is only for day-of-month or day-of-week');
  if (index === DAY_OF_MONTH) {
    if (upper === 'L') return { ok: true, text: 'L' };
    const before = /^L-(\d+)$/.exec(upper);
    if (before)
      return Number(before[1]) >= 1 && Number(before[1]) <= 30
        ? { ok: true, text: `L-${Number(before[1])}` }
        : bad('L-n counts 1-30 days back from the last day');
    const weekday = /^(\d+)W$/.exec(upper);
    if (weekday) return fieldValue(field, weekday[1]!) !== undefined ? { ok: true, text: `${Number(weekday[1])}W` } : bad('nW takes a day 1-31');
    if (upper.includes('W') || upper.includes('L')) return bad('L and W are written L, L-n or nW (LW is not supported), alone in the field');
  }
  if (index === DAY_OF_WEEK) {
    if (upper === 'L') return { ok: true, text: '7' };
    const last = /^([A-Z]+|\d+)L$/.exec(upper);
    if (last) {
      const day = fieldValue(field, last[1]!);
      return day !== undefined ? { ok: true, text: `${day}L` } : bad(`nL takes a day ${rangeText(field)}`);
    }
    const nth = /^([A-Z]+|\d+)#(\d+)$/.exec(upper);
    if (nth) {
      const day = fieldValue(field, nth[1]!);
      const k = Number(nth[2]);
      if (day === undefined) return bad(`n#k takes a day ${rangeText(field)}`);
      return k >= 1 && k <= 5 ? { ok: true, text: `${day}#${k}` } : bad('n#k counts the 1st to 5th such day of the month');
    }
    if (upper.includes('#') || /\dL|L$/.test(upper)) return bad('L and # are written L, nL or n#k, alone in the field');
  }
  const items: string[] = [];
  for (const item of upper.split(',')) {
    const step = /^(.*)\/(\d+)$/.exec(item);
    const base = step ? step[1]! : item;
    if (step && (Number(step[2]) < 1 || Number(step[2]) > field.max)) return bad(`a step must be 1-${field.max}`);
    let out: string;
    if (base === '*') out = `${field.min}-${field.max}`;
    else {
      const [from, to, extra] = base.split('-');
      const a = fieldValue(field, from ?? '');
      const b = to === undefined ? undefined : fieldValue(field, to);
      if (a === undefined || extra !== undefined || (to !== undefined && b === undefined)) return bad(`values are ${rangeText(field)}, as a, a-b, a/step or *`);
      if (b !== undefined && b < a) return bad(`the range ${excerpt(base)} runs backwards`);
      // `a/step` runs from a to the field's end, as Scheduler reads it.
      out = b !== undefined ? `${a}-${b}` : step ? `${a}-${field.max}` : `${a}`;
    }
    items.push(step ? `${out}/${Number(step[2])}` : out);
  }
  return { ok: true, text: items.join(',') };
}

/** The six fields normalized for aws-cron-parser, or every problem with them. */
function normalizeCron(body: string): { ok: true; text: string } | { ok: false; problem: string } {
  const problems: string[] = [];
  const fields = body
    .trim()
    .split(/\s+/)
    .map((text, index) => {
      const field = normalizeCronField(index, text);
      if (!field.ok) problems.push(field.problem);
      return field.ok ? field.text : text;
    });
  return problems.length > 0 ? { ok: false, problem: problems.join('; ') } : { ok: true, text: fields.join(' ') };
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * scheduleExpressionProblem, then what Scheduler would also refuse and what the fire-time
 * computation cannot evaluate: cron values out of their field's range, malformed L/W/#, backward
 * ranges, an at() date the calendar does not have. An expression this passes has fire times.
 */
export function strictScheduleExpressionProblem(expression: string): string | undefined {
  const formProblem = scheduleExpressionProblem(expression);
  if (formProblem) return formProblem;
  const cron = CRON.exec(expression);
  if (cron) {
    const normalized = normalizeCron(cron[1]!);
    return normalized.ok ? undefined : `must be a valid cron expression: ${normalized.problem}`;
  }
  const at = AT.exec(expression);
  if (at) {
    const [year, month, day, hour, minute, second] = at.slice(1).map(Number) as [number, number, number, number, number, number];
    if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) {
      return `must be at() of a real date and time: ${excerpt(expression)} is not one`;
    }
  }
  return undefined;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const RATE_UNIT_MS: Record<string, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };

/**
 * A time zone's wall clock. Wall-clock times are held as "fake UTC" epoch ms (the wall fields read
 * as if they were UTC), the form aws-cron-parser computes in.
 */
interface WallClock {
  /** The wall-clock time at `instant`. */
  wallOf(instant: number): number;
  /** The instants whose wall-clock time is `wall`, ascending: none in a spring gap, two in autumn's repeated hour. */
  instantsOf(wall: number): number[];
}

const UTC_CLOCK: WallClock = { wallOf: (instant) => instant, instantsOf: (wall) => [wall] };
const clocks = new Map<string, WallClock>();

function wallClock(timeZone: string): WallClock {
  if (timeZone === 'UTC') return UTC_CLOCK;
  const known = clocks.get(timeZone);
  if (known) return known;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const wallOf = (instant: number): number => {
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(instant)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
    const wholeSecond = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
    return wholeSecond + (((instant % 1000) + 1000) % 1000);
  };
  const clock: WallClock = {
    wallOf,
    instantsOf: (wall) => {
      // An offset is at most ±14 h: the probes a day either side lie before and after any transition near `wall`.
      const before = wallOf(wall - DAY_MS) - (wall - DAY_MS);
      const after = wallOf(wall + DAY_MS) - (wall + DAY_MS);
      // No transition within a day either side (the common case): one instant.
      if (before === after) return [wall - before];
      const offsets = new Set([before, after, wallOf(wall) - wall]);
      const instants = [...offsets].map((offset) => wall - offset).filter((instant) => wallOf(instant) === wall);
      return [...new Set(instants)].sort((a, b) => a - b);
    },
  };
  clocks.set(timeZone, clock);
  return clock;
}

type ParsedCron = ReturnType<typeof awsCron.parse>;

/**
 * Whether the parser's answer is a real match: it takes a day-of-month list as it is, so day 31 of
 * April comes back as 1 May (and 29 February of 2027 as 1 March). L, W, # and day-of-week lists are
 * computed from the calendar and cannot overflow.
 */
function isRealMatch(cron: ParsedCron, at: Date): boolean {
  const days = cron.daysOfMonth;
  if (!cron.months.includes(at.getUTCMonth() + 1)) return false;
  return days.length === 0 || typeof days[0] !== 'number' || days.includes(at.getUTCDate());
}

/** The first wall-clock minute matching `cron` strictly after `wall`, or undefined when there is none (before 2200). */
function nextCronWall(cron: ParsedCron, wall: number): number | undefined {
  let from = wall;
  // Each round moves `from` forward (a match, or a month); 200 years of months bound the search.
  for (let round = 0; round < MAX_SEARCH_ROUNDS; round++) {
    try {
      const next = awsCron.next(cron, new Date(from));
      if (!next) return undefined;
      // Nothing matched before an overflowed day: go on from it.
      if (isRealMatch(cron, next)) return next.getTime();
      from = next.getTime();
    } catch {
      // The parser gives up after ten skips (months without a matching day): nothing matched in
      // `from`'s month after `from`, so the search goes on from the next month's start.
      // From the last minute of a month, "the next month" is the one after the minute that follows.
      const at = new Date(from + MINUTE_MS);
      const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1) - MINUTE_MS;
      from = Math.max(next, from + MINUTE_MS);
      if (new Date(from).getUTCFullYear() > 2199) return undefined;
    }
  }
  return undefined;
}

/** Rounds of nextCronWall's search at most: a match or a month each, 200 years of months and more. */
const MAX_SEARCH_ROUNDS = 200 * 12 * 4;

function* cronFireTimes(body: string, clock: WallClock, after: number): Generator<number> {
  const cron = awsCron.parse(body);
  let wall = clock.wallOf(after);
  for (;;) {
    const next = nextCronWall(cron, wall);
    if (next === undefined) return;
    wall = next;
    // A skipped wall time has no instant; a repeated one fires at its first.
    const first = clock.instantsOf(next)[0];
    if (first !== undefined && first > after) {
      after = first;
      yield first;
    }
  }
}

/** The latest instant a Date holds (year 275760). */
const MAX_DATE_MS = 8.64e15;

function* rateFireTimes(period: number, anchor: number, after: number): Generator<number> {
  // Ends where Date does (a rate stored before MAX_RATE_DAYS, an anchor out of range): no time is not a date.
  if (!Number.isFinite(anchor) || Math.abs(anchor) > MAX_DATE_MS) return;
  for (let k = Math.max(1, Math.floor((after - anchor) / period) + 1); anchor + k * period <= MAX_DATE_MS; k++) yield anchor + k * period;
}

function fail(path: string, message: string): never {
  throw new SpecInvalid([{ path, message }]);
}

export interface FireTimesInput {
  /** cron(...), rate(...) or at(...). */
  expression: string;
  /** IANA time zone of a cron or at expression; UTC by default. rate() ignores it. */
  timeZone?: string;
  /**
   * Epoch ms a rate() schedule counts from (its creation): it fires at anchor + k × period, k ≥ 1.
   * Without one, rate() counts from the epoch (so rate(1 hour) fires on the hour, UTC).
   */
  anchor?: number;
}

/** Every fire time strictly after `after`, ascending, for as long as the caller reads. */
function fireTimesAfter(input: FireTimesInput, after: number): Generator<number> {
  const problem = strictScheduleExpressionProblem(input.expression);
  if (problem) fail('expression', `${excerpt(input.expression)} ${problem}`);
  const timeZone = input.timeZone ?? 'UTC';
  const zoneProblem = timeZone === 'UTC' ? undefined : timeZoneProblem(timeZone);
  if (zoneProblem) fail('timeZone', zoneProblem);
  const clock = wallClock(timeZone);
  const cron = CRON.exec(input.expression);
  if (cron) return cronFireTimes((normalizeCron(cron[1]!) as { text: string }).text, clock, after);
  const rate = RATE.exec(input.expression);
  if (rate) return rateFireTimes(Number(rate[1]) * RATE_UNIT_MS[rate[2]!.replace(/s$/, '')]!, input.anchor ?? 0, after);
  const [year, month, day, hour, minute, second] = AT.exec(input.expression)!.slice(1).map(Number) as number[];
  const once = clock.instantsOf(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!))[0];
  return (function* () {
    if (once !== undefined && once > after) yield once;
  })();
}

/**
 * The next `count` fire times strictly after `after` (epoch ms), ascending; fewer when the schedule
 * ends (an at() fires once, a cron's years run out). SpecInvalid for an expression or time zone
 * strictScheduleExpressionProblem or timeZoneProblem refuses.
 */
export function nextFireTimes(input: FireTimesInput & { after: number; count: number }): number[] {
  const times: number[] = [];
  if (input.count <= 0) return times;
  for (const time of fireTimesAfter(input, input.after)) {
    times.push(time);
    if (times.length >= input.count) break;
  }
  return times;
}

/** The fire times in (from, to] (epoch ms), ascending, at most `max` of them (the earliest). */
export function fireTimesBetween(input: FireTimesInput & { from: number; to: number; max: number }): number[] {
  const times: number[] = [];
  if (input.max <= 0 || input.to <= input.from) return times;
  for (const time of fireTimesAfter(input, input.from)) {
    if (time > input.to) break;
    times.push(time);
    if (times.length >= input.max) break;
  }
  return times;
}
