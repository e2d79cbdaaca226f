/**
 * The reaper's delivery (architecture §6): an EventBridge rule on this run state machine's
 * executions that FAILED, TIMED_OUT or were ABORTED starts a small Standard state machine that
 * invokes the reaper function with exactly the retry the stage timing table computes (reaperRetry:
 * long enough to outlast every lease Decide, Notify and Cleanup can meet, and Admit's give-up time).
 * Lambda's own asynchronous retries (two, a few minutes) could not promise that. What still fails
 * goes to a dead-letter queue, as does an event EventBridge could not deliver. Under the deployment's
 * customer-managed key, both writers of the queue may use the key: the machine's role by its own
 * policy, EventBridge by a statement of the key's policy.
 */
import { stateMachineLogGroup } from './vended-log-group';
import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { reaperRetry, reaperTimeoutSeconds } from '../../lambdas/core/stage-timing';
import type { DeployConfig } from '../config/deploy-config';
import { deadLetterQueueEncryption } from './encryption-key';
import { queueSendKeyStatement } from './permissions';

/** The execution statuses the reaper finishes runs for (lambdas/stages/reap.ts). */
export const REAPED_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/** The reaper machine's definition, with `${ReaperFunctionArn}`, `${DeadLetterQueueUrl}` and `${SendMessageResource}` to bind. */
export function reaperDefinition(): Record<string, unknown> {
  return {
    Comment: 'loadplane reaper: finishes a run whose execution ended without its own fail path',
    StartAt: 'Reap',
    States: {
      Reap: {
        Type: 'Task',
        Resource: '${ReaperFunctionArn}',
        TimeoutSeconds: reaperTimeoutSeconds(),
        Retry: [{ ErrorEquals: ['States.ALL'], ...reaperRetry() }],
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.reaperError', Next: 'NotReaped' }],
        End: true,
      },
      NotReaped: {
        Type: 'Task',
        Resource: '${SendMessageResource}',
        Parameters: { QueueUrl: '${DeadLetterQueueUrl}', 'MessageBody.$': '$' },
        Next: 'ReaperGaveUp',
      },
      ReaperGaveUp: { Type: 'Fail', Error: 'ReaperGaveUp', Cause: 'the reaper kept failing; the event is in the dead-letter queue' },
    },
  };
}

export interface ReaperProps {
  config: DeployConfig;
  reaper: NodejsFunction;
  runStateMachineArn: string;
  /** The deployment's customer-managed key (encryption.customerManagedKey): the queue's and the log group's. */
  encryptionKey?: IKey;
}

export class Reaper extends Construct {
  readonly machine: StateMachine;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: ReaperProps) {
    super(scope, id);
    const key = props.encryptionKey;
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...deadLetterQueueEncryption(key),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // A dead-letter queue itself (CT.SQS.PR.1 asks every other queue to have one).
      redriveAllowPolicy: { redrivePermission: RedrivePermission.ALLOW_ALL },
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is the dead-letter queue of the reaper (events it could not finish); its depth raises an alarm.',
    });
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('states.amazonaws.com'), description: 'loadplane reaper machine' });
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.reaper.functionArn] }));
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueue.queueArn] }));
    if (key) role.addToPrincipalPolicy(queueSendKeyStatement(key.keyArn));
    const logs = stateMachineLogGroup(this, 'Logs', `${props.config.stackName}-reaper`, props.config.logging.retentionDays, key);
    this.machine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(reaperDefinition(), null, 2)),
      definitionSubstitutions: {
        ReaperFunctionArn: props.reaper.functionArn,
        DeadLetterQueueUrl: this.deadLetterQueue.queueUrl,
        // The SQS integration's ARN names the partition (aws, aws-cn, aws-us-gov).
        SendMessageResource: `arn:${Aws.PARTITION}:states:::sqs:sendMessage`,
      },
      role,
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
      comment: 'loadplane reaper',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Step Functions log delivery and X-Ray take no resource ARN; AWS documents Resource * for both.',
    });

    const rule = new Rule(this, 'ExecutionEnded', {
      description: 'loadplane: a run execution failed, timed out or was stopped → the reaper',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { status: [...REAPED_STATUSES], stateMachineArn: [props.runStateMachineArn] },
      },
    });
    rule.addTarget(
      new SfnStateMachine(this.machine, {
        input: RuleTargetInput.fromEventPath('$'),
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 185,
        maxEventAge: Duration.hours(24),
      }),
    );
    // EventBridge dead-letters with its own principal (the queue's policy lets the rule send): under a
    // customer-managed key, the key's policy must let it encrypt too (EventBridge guide, targets under
    // KMS encryption: kms:Decrypt and kms:GenerateDataKey), for this account's rules only.
    key?.addToResourcePolicy(
      new PolicyStatement({
        sid: 'EventBridgeDeadLettersOfThisAccount',
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
  }
}
