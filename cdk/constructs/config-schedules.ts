/**
 * The schedules the deployment config declares: EventBridge Scheduler schedules in a group of their
 * own, each starting the run state machine with the input Admit reads for a schedule (architecture
 * §2): `{ spec, schedule: { name, scheduledTime: <aws.scheduler.scheduled-time> } }`. The run id is a
 * hash of (schedule, scheduled time), so Scheduler's at-least-once delivery makes one run. A retry
 * policy and a dead-letter queue on every target.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { ContextAttribute, Schedule, ScheduleExpression, ScheduleGroup, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { TimeZone } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { ConfiguredSchedule, DeployConfig } from '../config/deploy-config';

/** The input a schedule's target gives the run state machine (lambdas/core/execution-input.ts). */
export function scheduleInput(schedule: Pick<ConfiguredSchedule, 'name' | 'spec'>): { spec: unknown; schedule: { name: string; scheduledTime: string } } {
  return { spec: schedule.spec, schedule: { name: schedule.name, scheduledTime: ContextAttribute.scheduledTime } };
}

export interface ConfigSchedulesProps {
  config: DeployConfig;
  stateMachine: IStateMachine;
}

export class ConfigSchedules extends Construct {
  readonly group: ScheduleGroup;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: ConfigSchedulesProps) {
    super(scope, id);
    // Deleted with the stack (its schedules are the stack's): a redeploy under the same name can create it again.
    this.group = new ScheduleGroup(this, 'Group', { scheduleGroupName: `${props.config.stackName}-schedules`, removalPolicy: RemovalPolicy.DESTROY });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // A dead-letter queue itself (CT.SQS.PR.1 asks every other queue to have one).
      redriveAllowPolicy: { redrivePermission: RedrivePermission.ALLOW_ALL },
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the schedules (starts Scheduler could not deliver); its depth raises an alarm.',
    });
    for (const schedule of props.config.schedules) {
      new Schedule(this, `Schedule-${schedule.name}`, {
        scheduleName: schedule.name,
        scheduleGroup: this.group,
        description: `loadplane schedule ${schedule.name}`,
        schedule: ScheduleExpression.expression(schedule.expression, TimeZone.of(schedule.timeZone)),
        enabled: schedule.enabled,
        target: new StepFunctionsStartExecution(props.stateMachine, {
          input: ScheduleTargetInput.fromObject(scheduleInput(schedule)),
          deadLetterQueue: this.deadLetterQueue,
          retryAttempts: 10,
          maxEventAge: Duration.hours(1),
        }),
      });
    }
  }
}
