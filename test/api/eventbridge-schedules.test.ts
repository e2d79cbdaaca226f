/**
 * The API's schedules on EventBridge Scheduler (lambdas/api/eventbridge-schedules.ts), at the SDK's
 * boundary: a real SchedulerClient whose `send` records each command and answers as Scheduler does
 * (no local implementation of Scheduler exists). What is checked is what would be sent to AWS: the
 * commands, their inputs in full, the create fallback, the race with another create, and that a
 * delete of an absent schedule is done.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { describe, expect, it } from 'vitest';
import { eventBridgeScheduleTargets } from '../../lambdas/api/eventbridge-schedules';
import { firedScheduleInput, SCHEDULE_INPUT_TEMPLATE, scheduleTargetInput } from '../../lambdas/core/schedules';
import { executionInputSchema, runIdentity } from '../../lambdas/core/execution-input';

const SETTINGS = {
  groupName: 'loadplane-api-schedules',
  stateMachineArn: 'arn:aws:states:eu-west-1:123456789012:stateMachine:loadplane-run',
  roleArn: 'arn:aws:iam::123456789012:role/loadplane-scheduler',
  deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:123456789012:loadplane-schedule-dlq',
};

type Answer = Error | Record<string, unknown>;

/** A SchedulerClient that records every command and answers with the next of `answers` (an error is thrown). */
function recordingClient(answers: Answer[] = []) {
  const client = new SchedulerClient({ region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  const sent: { command: string; input: unknown }[] = [];
  client.send = (async (command: { constructor: { name: string }; input: unknown }) => {
    sent.push({ command: command.constructor.name, input: command.input });
    const answer = answers.shift() ?? {};
    if (answer instanceof Error) throw answer;
    return answer;
  }) as unknown as SchedulerClient['send'];
  return { client, sent };
}

const notFound = () =>
  new ResourceNotFoundException({
    message: 'Schedule nightly does not exist.',
    Message: 'Schedule nightly does not exist.',
    $metadata: { httpStatusCode: 404 },
  });
const conflict = () =>
  new ConflictException({ message: 'Schedule nightly already exists.', Message: 'Schedule nightly already exists.', $metadata: { httpStatusCode: 409 } });

const NIGHTLY = { name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', enabled: true };

/** The full definition Scheduler receives for NIGHTLY. */
const NIGHTLY_INPUT = {
  Name: 'nightly',
  GroupName: 'loadplane-api-schedules',
  Description: 'loadplane schedule nightly',
  ScheduleExpression: 'cron(0 2 * * ? *)',
  ScheduleExpressionTimezone: 'Europe/Berlin',
  State: 'ENABLED',
  FlexibleTimeWindow: { Mode: 'OFF' },
  Target: {
    Arn: SETTINGS.stateMachineArn,
    RoleArn: SETTINGS.roleArn,
    Input: '{"schedule":{"name":"nightly","scheduledTime":"<aws.scheduler.scheduled-time>"}}',
    RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
    DeadLetterConfig: { Arn: SETTINGS.deadLetterQueueArn },
  },
};

describe('the target input', () => {
  it('is the schedule name and Scheduler’s scheduled-time placeholder, no spec', () => {
    expect(SCHEDULE_INPUT_TEMPLATE).toBe('{"schedule":{"name":"<name>","scheduledTime":"<aws.scheduler.scheduled-time>"}}');
    expect(JSON.parse(scheduleTargetInput('nightly'))).toEqual({ schedule: { name: 'nightly', scheduledTime: '<aws.scheduler.scheduled-time>' } });
  });

  it('as delivered, is an execution input Admit reads as a schedule firing', () => {
    const delivered = firedScheduleInput('nightly', Date.UTC(2026, 11, 1, 1, 0, 0));
    expect(delivered).toBe('{"schedule":{"name":"nightly","scheduledTime":"2026-12-01T01:00:00Z"}}');
    const input = executionInputSchema.parse(JSON.parse(delivered));
    const execution = { arn: 'arn:aws:states:eu-west-1:123456789012:execution:loadplane-run:x', name: 'x' };
    expect(runIdentity(input, execution).origin).toEqual({
      kind: 'schedule',
      schedule: 'nightly',
      scheduledTime: '2026-12-01T01:00:00Z',
    });
  });
});

describe('put', () => {
  it('an existing schedule: one UpdateSchedule with the whole definition', async () => {
    const { client, sent } = recordingClient([{ ScheduleArn: 'arn:aws:scheduler:eu-west-1:123456789012:schedule/loadplane-api-schedules/nightly' }]);
    await eventBridgeScheduleTargets(client, SETTINGS).put(NIGHTLY);
    expect(sent).toEqual([{ command: UpdateScheduleCommand.name, input: NIGHTLY_INPUT }]);
  });

  it('a new schedule: UpdateSchedule finds none, CreateSchedule with the same definition', async () => {
    const { client, sent } = recordingClient([notFound(), {}]);
    await eventBridgeScheduleTargets(client, SETTINGS).put(NIGHTLY);
    expect(sent).toEqual([
      { command: UpdateScheduleCommand.name, input: NIGHTLY_INPUT },
      { command: CreateScheduleCommand.name, input: NIGHTLY_INPUT },
    ]);
  });

  it('a create that races another create updates instead, so this definition is the one kept', async () => {
    const { client, sent } = recordingClient([notFound(), conflict(), {}]);
    await eventBridgeScheduleTargets(client, SETTINGS).put(NIGHTLY);
    expect(sent.map((s) => s.command)).toEqual([UpdateScheduleCommand.name, CreateScheduleCommand.name, UpdateScheduleCommand.name]);
    expect(sent[2]!.input).toEqual(NIGHTLY_INPUT);
  });

  it('disabled, and with its own retry policy: State DISABLED, the policy on the target', async () => {
    const { client, sent } = recordingClient([{}]);
    await eventBridgeScheduleTargets(client, { ...SETTINGS, maximumRetryAttempts: 3, maximumEventAgeInSeconds: 600 }).put({
      name: 'hourly-smoke',
      expression: 'rate(1 hour)',
      timeZone: 'UTC',
      enabled: false,
    });
    expect(sent[0]!.input).toMatchObject({
      Name: 'hourly-smoke',
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'DISABLED',
      Target: {
        Input: '{"schedule":{"name":"hourly-smoke","scheduledTime":"<aws.scheduler.scheduled-time>"}}',
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 600 },
      },
    });
  });

  it('any other failure is raised as it is, and nothing else is tried', async () => {
    const refused = new ValidationException({
      message: 'Invalid Schedule Expression',
      Message: 'Invalid Schedule Expression',
      $metadata: { httpStatusCode: 400 },
    });
    const { client, sent } = recordingClient([refused]);
    await expect(eventBridgeScheduleTargets(client, SETTINGS).put(NIGHTLY)).rejects.toBe(refused);
    expect(sent).toHaveLength(1);

    const failedCreate = recordingClient([notFound(), new Error('socket hang up')]);
    await expect(eventBridgeScheduleTargets(failedCreate.client, SETTINGS).put(NIGHTLY)).rejects.toThrow('socket hang up');
    expect(failedCreate.sent.map((s) => s.command)).toEqual([UpdateScheduleCommand.name, CreateScheduleCommand.name]);
  });
});

describe('delete', () => {
  it('DeleteSchedule in the group; an absent schedule is done, not an error', async () => {
    const { client, sent } = recordingClient([{}, notFound()]);
    const targets = eventBridgeScheduleTargets(client, SETTINGS);
    await targets.delete('nightly');
    await targets.delete('nightly');
    expect(sent).toEqual([
      { command: DeleteScheduleCommand.name, input: { Name: 'nightly', GroupName: 'loadplane-api-schedules' } },
      { command: DeleteScheduleCommand.name, input: { Name: 'nightly', GroupName: 'loadplane-api-schedules' } },
    ]);
  });

  it('other failures are raised', async () => {
    const { client } = recordingClient([new Error('throttled')]);
    await expect(eventBridgeScheduleTargets(client, SETTINGS).delete('nightly')).rejects.toThrow('throttled');
  });
});
