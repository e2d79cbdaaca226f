/**
 * The schedules the deployment config declares: EventBridge Scheduler schedules in a group of their
 * own, each starting the run state machine with the input Admit reads for a schedule (architecture
 * §2): `{ spec, schedule: { name, scheduledTime: <aws.scheduler.scheduled-time> } }`. The run id is a
 * hash of (schedule, scheduled time), so Scheduler's at-least-once delivery makes one run. A retry
 * policy and a dead-letter queue on every target. Scheduler dead-letters with the target's role (CDK
 * makes it: SendMessage on the queue), so under the deployment's customer-managed key that role may
 * use the key through SQS too.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Role } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { ContextAttribute, Schedule, ScheduleExpression, ScheduleGroup, ScheduleTargetInput, type CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { TimeZone } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { ConfiguredSchedule, DeployConfig } from '../config/deploy-config';
import { deadLetterQueueEncryption } from './encryption-key';
import { queueSendKeyStatement } from './permissions';

/** The input a schedule's target gives the run state machine (lambdas/core/execution-input.ts). */
export function scheduleInput(schedule: Pick<ConfiguredSchedule, 'name' | 'spec'>): { spec: unknown; schedule: { name: string; scheduledTime: string } } {
  return { spec: schedule.spec, schedule: { name: schedule.name, scheduledTime: ContextAttribute.scheduledTime } };
}

export interface ConfigSchedulesProps {
  config: DeployConfig;
  stateMachine: IStateMachine;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the dead-letter queue. */
  encryptionKey?: IKey;
}

export class ConfigSchedules extends Construct {
  readonly group: ScheduleGroup;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: ConfigSchedulesProps) {
    super(scope, id);
    // Deleted with the stack (its schedules are the stack's): a redeploy under the same name can create it again.
    this.group = new ScheduleGroup(this, 'Group', { scheduleGroupName: `${props.config.stackName}-schedules`, removalPolicy: RemovalPolicy.DESTROY });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...deadLetterQueueEncryption(props.encryptionKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // A dead-letter queue itself (CT.SQS.PR.1 asks every other queue to have one).
      redriveAllowPolicy: { redrivePermission: RedrivePermission.ALLOW_ALL },
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the schedules (starts Scheduler could not deliver); its depth raises an alarm.',
    });
    const schedules = props.config.schedules.map(
      (schedule) =>
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
        }),
    );
    const key = props.encryptionKey;
    if (key) for (const role of scheduleTargetRoles(schedules)) role.addToPrincipalPolicy(queueSendKeyStatement(key.keyArn));
  }
}

/**
 * The roles the schedules' targets run with: CDK's aws-scheduler-targets makes one per target ARN at
 * the stack's root and does not hand it out, so they are found by the role ARN each schedule names.
 */
function scheduleTargetRoles(schedules: Schedule[]): Role[] {
  if (schedules.length === 0) return [];
  const stack = Stack.of(schedules[0]!);
  const arnOf = (value: unknown) => JSON.stringify(stack.resolve(value));
  const named = new Set(schedules.map((s) => arnOf(((s.node.defaultChild as CfnSchedule).target as CfnSchedule.TargetProperty).roleArn)));
  const roles = stack.node.children.filter((c): c is Role => c instanceof Role && named.has(arnOf(c.roleArn)));
  if (roles.length !== named.size) throw new Error(`found ${roles.length} of the ${named.size} roles the schedules' targets name`);
  return roles;
}
