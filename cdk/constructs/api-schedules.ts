/**
 * Where the schedules the API manages (PUT/DELETE /schedules/{name}, architecture §2 Schedules) live on EventBridge
 * Scheduler: a schedule group of their own, `<stackName>-api-schedules`, apart from the config's
 * `<stackName>-schedules` (config-schedules.ts), so the API function, whose grants stop at its group,
 * can never overwrite or delete a schedule CloudFormation manages. The API function creates the
 * schedules at run time (lambdas/api/eventbridge-schedules.ts) with the role and the dead-letter queue
 * made here: Scheduler assumes the role to start the run state machine, and puts a start it could not
 * deliver after its retries in the queue, whose depth raises an alarm. Under the deployment's
 * customer-managed key the queue is encrypted with it, and the role may use it through SQS.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CfnScheduleGroup, ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Queue, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { API_SCHEDULE_GROUP_SUFFIX, type DeployConfig } from '../config/deploy-config';
import { deadLetterQueueEncryption } from './encryption-key';
import { nagArn, queueSendKeyStatement, startExecutionStatement } from './permissions';

/** The API's schedule group: `<stackName>-api-schedules`. */
export function apiScheduleGroupName(config: Pick<DeployConfig, 'stackName'>): string {
  return `${config.stackName}${API_SCHEDULE_GROUP_SUFFIX}`;
}

/**
 * lambdas/api/eventbridge-schedules.ts: UpdateScheduleCommand, CreateScheduleCommand,
 * DeleteScheduleCommand, on the schedules of the API's group only.
 */
export const SCHEDULE_MANAGEMENT_ACTIONS = ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'] as const;

/** The service that assumes the schedules' role, and the only one the API function may pass it to. */
export const SCHEDULER_SERVICE = 'scheduler.amazonaws.com';

export interface ApiSchedulesProps {
  config: DeployConfig;
  /** The run state machine's ARN: the schedules' only target. */
  stateMachineArn: string;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the dead-letter queue. */
  encryptionKey?: IKey;
}

export class ApiSchedules extends Construct {
  readonly group: ScheduleGroup;
  readonly groupName: string;
  readonly deadLetterQueue: Queue;
  /** The role Scheduler assumes for the API's schedules: StartExecution on the run state machine, SendMessage to the dead-letter queue. */
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ApiSchedulesProps) {
    super(scope, id);
    this.groupName = apiScheduleGroupName(props.config);
    // Deleted with the stack, with the schedules the API made in it: they start a state machine that goes with the stack.
    this.group = new ScheduleGroup(this, 'Group', { scheduleGroupName: this.groupName, removalPolicy: RemovalPolicy.DESTROY });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...deadLetterQueueEncryption(props.encryptionKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // A dead-letter queue itself (CT.SQS.PR.1 asks every other queue to have one).
      redriveAllowPolicy: { redrivePermission: RedrivePermission.ALLOW_ALL },
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the dead-letter queue of the API's schedules (starts Scheduler could not deliver); its depth raises an alarm.",
    });
    this.role = new Role(this, 'Role', {
      // Only Scheduler acting for a schedule of this group (confused deputy: another account's schedule, or
      // another group's, cannot use this role). Scheduler sets aws:SourceArn to the schedule GROUP's ARN,
      // not the schedule's: a condition on schedule ARNs would refuse every assume, and no schedule the
      // API made would ever fire (Scheduler's "Confused deputy prevention"; the config's role does the same).
      assumedBy: new ServicePrincipal(SCHEDULER_SERVICE, {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account, 'aws:SourceArn': this.group.scheduleGroupArn } },
      }),
      description: 'loadplane API schedules: EventBridge Scheduler starts run executions and dead-letters what it could not deliver',
    });
    this.role.addToPrincipalPolicy(startExecutionStatement(props.stateMachineArn));
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueue.queueArn] }));
    if (props.encryptionKey) this.role.addToPrincipalPolicy(queueSendKeyStatement(props.encryptionKey.keyArn));
  }

  /**
   * Lets the API function manage the schedules of this group, and only them: create, update and delete
   * (an ARN per schedule, named at run time: the group's ARN prefix, then `*`), pass the role to Scheduler
   * only, and tells it the group, the role and the queue (lambdas/core/config.ts loadScheduleSettings;
   * the schedules' target is the function's LOADPLANE_STATE_MACHINE_ARN, set by rest-api.ts).
   */
  grantManage(fn: NodejsFunction): void {
    const role = fn.role;
    if (!role) throw new Error(`${fn.node.path} has no role to grant schedule management to`);
    const stack = Stack.of(this);
    const schedules = `schedule/${this.groupName}/*`;
    fn.addToRolePolicy(
      new PolicyStatement({ actions: [...SCHEDULE_MANAGEMENT_ACTIONS], resources: [stack.formatArn({ service: 'scheduler', resource: schedules })] }),
    );
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagArn(role, 'scheduler', schedules)}]`,
      reason: `Schedules are named by API callers at run time: the grant is the schedules of the API's own group ${this.groupName} (its ARN prefix, then *), never the config's group CloudFormation manages.`,
    });
    // CreateSchedule and UpdateSchedule name the role the schedule runs with: Scheduler only, this role only.
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': SCHEDULER_SERVICE } },
      }),
    );
    // The group's Ref (its name), so the function is created after the group it puts schedules in.
    fn.addEnvironment('LOADPLANE_SCHEDULE_GROUP', (this.group.node.defaultChild as CfnScheduleGroup).ref);
    fn.addEnvironment('LOADPLANE_SCHEDULER_ROLE_ARN', this.role.roleArn);
    fn.addEnvironment('LOADPLANE_SCHEDULE_DLQ_ARN', this.deadLetterQueue.queueArn);
  }
}
