/**
 * The API's schedules on EventBridge Scheduler (architecture §2 Schedules): one Scheduler schedule per API schedule, in
 * the deployment's schedule group, named by the schedule's name (loadplane names: lowercase letters,
 * digits and '-', at most 40 characters, within Scheduler's 64 of `[0-9a-zA-Z-_.]`). Its target starts
 * the run state machine with `{ schedule: { name, scheduledTime } }` (core/schedules.ts); Admit reads the
 * spec from the ledger, so the Scheduler schedule never carries it.
 *
 * Both calls are idempotent, as the API's retried PUT and DELETE need: put is UpdateSchedule (Scheduler
 * replaces every field), and CreateSchedule when the schedule does not exist yet; a create that races
 * another create (ConflictException) updates instead. Delete treats "not found" as done.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
  type SchedulerClient,
  type UpdateScheduleInput,
} from '@aws-sdk/client-scheduler';
import { scheduleTargetInput, type ScheduleActivation, type ScheduleTargets } from '../core/schedules';

export interface EventBridgeScheduleSettings {
  /** The schedule group the API's schedules live in. */
  groupName: string;
  /** The run state machine the schedules start. */
  stateMachineArn: string;
  /** The role Scheduler assumes to call StartExecution on it. */
  roleArn: string;
  /** Where Scheduler puts a start it could not deliver after its retries (an SQS queue). */
  deadLetterQueueArn: string;
  /** Scheduler's retries of a failed start (0 to 185). Default 10, as the deploy config's schedules. */
  maximumRetryAttempts?: number;
  /** How long Scheduler keeps retrying a start (60 to 86,400 s). Default one hour, as the deploy config's schedules. */
  maximumEventAgeInSeconds?: number;
}

export const DEFAULT_MAXIMUM_RETRY_ATTEMPTS = 10;
export const DEFAULT_MAXIMUM_EVENT_AGE_SECONDS = 3600;

/** The UpdateSchedule/CreateSchedule input for a schedule: the whole definition, every time. */
export function schedulerScheduleInput(schedule: ScheduleActivation, settings: EventBridgeScheduleSettings): UpdateScheduleInput {
  return {
    Name: schedule.name,
    GroupName: settings.groupName,
    Description: `loadplane schedule ${schedule.name}`,
    ScheduleExpression: schedule.expression,
    ScheduleExpressionTimezone: schedule.timeZone,
    State: schedule.enabled ? 'ENABLED' : 'DISABLED',
    // Runs start at their time: a load test's schedule is a time chosen on purpose, not a window.
    FlexibleTimeWindow: { Mode: 'OFF' },
    Target: {
      Arn: settings.stateMachineArn,
      RoleArn: settings.roleArn,
      Input: scheduleTargetInput(schedule.name),
      RetryPolicy: {
        MaximumRetryAttempts: settings.maximumRetryAttempts ?? DEFAULT_MAXIMUM_RETRY_ATTEMPTS,
        MaximumEventAgeInSeconds: settings.maximumEventAgeInSeconds ?? DEFAULT_MAXIMUM_EVENT_AGE_SECONDS,
      },
      DeadLetterConfig: { Arn: settings.deadLetterQueueArn },
    },
  };
}

/** ScheduleTargets over EventBridge Scheduler. */
export function eventBridgeScheduleTargets(client: SchedulerClient, settings: EventBridgeScheduleSettings): ScheduleTargets {
  const update = (input: UpdateScheduleInput) => client.send(new UpdateScheduleCommand(input));
  return {
    async put(schedule) {
      const input = schedulerScheduleInput(schedule, settings);
      try {
        await update(input);
        return;
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException)) throw err;
      }
      try {
        await client.send(new CreateScheduleCommand(input));
      } catch (err) {
        // Created meanwhile by another request for the same schedule: this one's definition goes on top.
        if (!(err instanceof ConflictException)) throw err;
        await update(input);
      }
    },
    async delete(name) {
      try {
        await client.send(new DeleteScheduleCommand({ Name: name, GroupName: settings.groupName }));
      } catch (err) {
        if (err instanceof ResourceNotFoundException) return;
        throw err;
      }
    },
  };
}
