/**
 * Where the schedules the API manages fire (architecture §2 Schedules): a port, so the API's routes do not know whether
 * EventBridge Scheduler (lambdas/api/eventbridge-schedules.ts) or the local scheduler under `serve`
 * starts the run state machine. The schedule's definition and spec live in the ledger; the target
 * only carries the schedule's name and the instant it fired for, and Admit reads the rest from the
 * ledger (architecture §2), so a changed spec never needs the target rewritten with it.
 */

/** What a target needs to fire a schedule: no spec, that stays in the ledger. */
export interface ScheduleActivation {
  name: string;
  /** `cron(...)`, `rate(...)` or `at(...)`, as EventBridge Scheduler takes them. */
  expression: string;
  /** An IANA time zone (`UTC`, `Europe/Berlin`): cron and at are read in it. */
  timeZone: string;
  /** A disabled schedule is kept but does not fire. */
  enabled: boolean;
}

/** Where schedules fire: EventBridge Scheduler on AWS, the local scheduler under `serve`. */
export interface ScheduleTargets {
  /** Create or update the schedule that starts the run state machine with `{"schedule":{"name","scheduledTime"}}`. Idempotent. */
  put(schedule: ScheduleActivation): Promise<void>;
  /** Delete it; absent is fine. */
  delete(name: string): Promise<void>;
}

/** The placeholder EventBridge Scheduler replaces with the instant a schedule fired for (ISO 8601, UTC). */
export const SCHEDULED_TIME_PLACEHOLDER = '<aws.scheduler.scheduled-time>';

/**
 * The execution input a target gives the run state machine for schedule `name` (the shape Admit reads,
 * core/execution-input.ts), with the scheduled time left as Scheduler's placeholder.
 */
export function scheduleTargetInput(name: string): string {
  return JSON.stringify({ schedule: { name, scheduledTime: SCHEDULED_TIME_PLACEHOLDER } });
}

/** The input's shape, with `<name>` for the schedule's name: `{"schedule":{"name":"<name>","scheduledTime":"<aws.scheduler.scheduled-time>"}}`. */
export const SCHEDULE_INPUT_TEMPLATE = scheduleTargetInput('<name>');

/**
 * The input as Scheduler delivers it when schedule `name` fires for `scheduledTime` (what a local
 * scheduler sends): the instant spelled as Scheduler spells it, `2026-12-01T10:00:00Z`.
 */
export function firedScheduleInput(name: string, scheduledTime: Date | number): string {
  const instant = new Date(scheduledTime).toISOString().replace(/\.000Z$/, 'Z');
  return scheduleTargetInput(name).replace(SCHEDULED_TIME_PLACEHOLDER, instant);
}
