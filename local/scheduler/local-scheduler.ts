/**
 * `loadplane serve`'s stand-in for EventBridge Scheduler (architecture §9): the schedules of the
 * ledger (and whatever else `list` returns) fire locally with the fire times Scheduler would give them
 * (lambdas/core/schedule-expression.ts), and each fire starts an execution with the input Scheduler
 * sends, `{ schedule: { name, scheduledTime } }`.
 *
 * At least once, like Scheduler: a failed delivery is tried again on the next ticks (up to
 * MAX_DELIVERY_ATTEMPTS), and `deliveries` > 1 delivers every fire time that many times at once, to
 * show that a double delivery is one run (the run id comes from the schedule and the time).
 *
 * Each tick delivers the fire times in (last tick, now]. The clock is the caller's (`now()`), so
 * tests move time by hand. Time the process was not ticking (a laptop asleep) is not replayed in
 * full: at most `maxCatchUp` fire times per schedule per tick, the latest; the earlier are logged as
 * skipped. A schedule's times before its anchor (its creation) never fire; a disabled or vanished
 * schedule fires nothing, and its pending retries are dropped.
 */
import { fireTimesBetween } from '../../lambdas/core/schedule-expression';

export interface LocalScheduleDefinition {
  name: string;
  expression: string;
  /** IANA time zone of a cron or at expression; UTC by default. */
  timeZone?: string;
  enabled: boolean;
  /** Epoch ms the schedule counts from (its creation): rate() fires at anchor + k × period; nothing fires before it. */
  anchor?: number;
}

export interface LocalSchedulerOptions {
  /** The current schedules (under `serve`: the ledger's), read each tick. */
  list(): Promise<LocalScheduleDefinition[]>;
  /** Starts an execution for one fire time (Scheduler's target input). */
  deliver(input: { schedule: { name: string; scheduledTime: string } }): Promise<void>;
  /** The scheduler's clock (epoch ms). */
  now(): number;
  /** How many times each fire time is delivered, at once (default 1; 2+ shows the dedupe). */
  deliveries?: number;
  /** Fire times after this are due (default: now() at creation). */
  startAt?: number;
  /** Most fire times per schedule per tick (default 10): a long sleep does not flood. */
  maxCatchUp?: number;
  log?(event: { message: string; [k: string]: unknown }): void;
}

export interface TickDelivery {
  name: string;
  /** ISO UTC without milliseconds, as `<aws.scheduler.scheduled-time>`. */
  scheduledTime: string;
  /** Calls of `deliver` made for it in this tick. */
  deliveries: number;
  /** The failed calls' messages; the time is delivered when fewer failed than were made. */
  errors: string[];
  /** 1 for the first try, 2+ for a retry of an earlier tick's failure. */
  attempt: number;
}

export interface LocalScheduler {
  /** Delivers every fire time in (last tick, now()], and the retries that are due. */
  tick(): Promise<TickDelivery[]>;
  /** Ticks on a real timer (unref'd); errors are logged, never thrown. */
  start(intervalMs: number): void;
  /** Stops the timer; waits for a tick in flight. */
  stop(): Promise<void>;
}

/** Tries of one fire time before it is given up (logged). */
export const MAX_DELIVERY_ATTEMPTS = 3;
export const DEFAULT_MAX_CATCH_UP = 10;
/** Fire times one catch-up window is scanned for at most. */
const SCAN_LIMIT = 10_000;
const MINUTE_MS = 60_000;

/** `2026-03-22T18:59:43Z`: Scheduler's scheduled-time, whole seconds. */
export const scheduledTimeOf = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/**
 * The latest `max` fire times in (from, to] and whether earlier ones were left out. Windows ending at
 * `to` double from a minute until one holds more than `max` or reaches `from`, so a long gap costs
 * about as much as its last few fire times, not all of them.
 */
function latestFireTimes(schedule: LocalScheduleDefinition, from: number, to: number, max: number): { times: number[]; skipped: boolean } {
  const input = { expression: schedule.expression, timeZone: schedule.timeZone, anchor: schedule.anchor };
  for (let span = MINUTE_MS; ; span *= 2) {
    const start = Math.max(from, to - span);
    const times = fireTimesBetween({ ...input, from: start, to, max: SCAN_LIMIT });
    if (times.length > max || start === from) return { times: times.slice(-max), skipped: times.length > max };
  }
}

interface Due {
  name: string;
  time: number;
  attempt: number;
}

const keyOf = (name: string, time: number) => `${name}\u0000${time}`;
const messageOf = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

export function createLocalScheduler(options: LocalSchedulerOptions): LocalScheduler {
  const copies = Math.max(1, options.deliveries ?? 1);
  const maxCatchUp = Math.max(1, options.maxCatchUp ?? DEFAULT_MAX_CATCH_UP);
  const log = (event: { message: string; [k: string]: unknown }) => options.log?.(event);
  let since = options.startAt ?? options.now();
  /** Failed fire times waiting for their next try, by schedule and time. */
  const retries = new Map<string, Due>();
  let last: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setInterval> | undefined;
  let busy = false;

  async function deliverOne(due: Due): Promise<TickDelivery> {
    const scheduledTime = scheduledTimeOf(due.time);
    const settled = await Promise.allSettled(Array.from({ length: copies }, () => options.deliver({ schedule: { name: due.name, scheduledTime } })));
    const errors = settled.flatMap((s) => (s.status === 'rejected' ? [messageOf(s.reason)] : []));
    const key = keyOf(due.name, due.time);
    if (errors.length < copies) retries.delete(key);
    else if (due.attempt < MAX_DELIVERY_ATTEMPTS) retries.set(key, due);
    else {
      retries.delete(key);
      log({ message: 'schedule delivery given up', schedule: due.name, scheduledTime, attempts: due.attempt, error: errors[0] });
    }
    return { name: due.name, scheduledTime, deliveries: copies, errors, attempt: due.attempt };
  }

  async function runTick(): Promise<TickDelivery[]> {
    const now = options.now();
    const schedules = await options.list();
    const live = new Map(schedules.filter((s) => s.enabled).map((s) => [s.name, s]));
    const due: Due[] = [];
    for (const [key, retry] of retries) {
      if (live.has(retry.name)) due.push({ ...retry, attempt: retry.attempt + 1 });
      else {
        retries.delete(key);
        log({ message: 'schedule retry dropped: the schedule is gone or disabled', schedule: retry.name, scheduledTime: scheduledTimeOf(retry.time) });
      }
    }
    for (const schedule of live.values()) {
      const from = Math.max(since, schedule.anchor ?? -Infinity);
      if (from >= now) continue;
      try {
        const { times, skipped } = latestFireTimes(schedule, from, now, maxCatchUp);
        if (skipped)
          log({
            message: 'schedule fire times skipped: too many since the last tick',
            schedule: schedule.name,
            delivered: times.length,
            from: scheduledTimeOf(from),
          });
        for (const time of times) due.push({ name: schedule.name, time, attempt: 1 });
      } catch (err) {
        log({ message: 'schedule cannot be evaluated', schedule: schedule.name, error: messageOf(err) });
      }
    }
    since = now;
    // Schedules at once, each one's times in order.
    const bySchedule = new Map<string, Due[]>();
    for (const d of due.sort((a, b) => a.time - b.time)) bySchedule.set(d.name, [...(bySchedule.get(d.name) ?? []), d]);
    const results = await Promise.all(
      [...bySchedule.values()].map(async (list) => {
        const out: TickDelivery[] = [];
        for (const d of list) out.push(await deliverOne(d));
        return out;
      }),
    );
    return results.flat();
  }

  const scheduler: LocalScheduler = {
    tick() {
      // One tick at a time: a second waits for the first, then covers only what came after it.
      const next = last.catch(() => undefined).then(runTick);
      last = next;
      return next;
    },
    start(intervalMs) {
      if (timer) clearInterval(timer);
      timer = setInterval(() => {
        if (busy) return;
        busy = true;
        scheduler
          .tick()
          .catch((err: unknown) => log({ message: 'scheduler tick failed', error: messageOf(err) }))
          .finally(() => {
            busy = false;
          });
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await last.catch(() => undefined);
    },
  };
  return scheduler;
}
