/**
 * What a platform team is paged by, all to one SNS topic (optionally with an email subscription):
 * alarms on run executions and cruise windows that timed out, a reaper that gave up, sweeper errors,
 * anything in a dead-letter queue, and API 5xx answers; and each run execution that failed for a
 * control-plane reason, as an event (not a test's own failure: a run that did not succeed ends at the
 * Fail state RunDidNotSucceed, whose error is the run's outcome, e.g. THRESHOLDS_FAILED).
 *
 * The topic has a policy of its own (enforceSSL), which replaces SNS's default: every publisher must be
 * allowed in it. Two are: CloudWatch, for this account's alarms (`aws:SourceAccount`, `aws:SourceArn`
 * on its alarm ARNs: SNS's confused-deputy guidance), and EventBridge, for the run-failed rule only.
 * Without the CloudWatch grant every alarm's publish is refused and no alarm reaches anyone.
 *
 * Under the deployment's customer-managed key (encryption.customerManagedKey) the topic is encrypted
 * with it, and SNS encrypts each publish with the publisher's permissions on the key: both publishers
 * are in the key's policy too (SNS guide, "Enable compatibility between event sources from AWS
 * services and encrypted topics": kms:GenerateDataKey* and kms:Decrypt), for this account's sources.
 */
import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { OUTCOMES, Outcome } from '../../lambdas/core/status';
import type { DeployConfig } from '../config/deploy-config';

/**
 * The outcomes whose execution succeeds (run.asl.json's Finished Choice: Succeeded, and Skipped for a
 * run whose concurrency group was busy).
 */
export const SUCCEEDING_OUTCOMES: readonly string[] = [Outcome.SUCCEEDED, Outcome.SKIPPED];

/**
 * The errors an execution fails with when its run ended without succeeding: the outcome itself
 * (run.asl.json's RunDidNotSucceed takes its error from `$.decision.outcome`). Outcomes, not alarms.
 */
export const TEST_OUTCOME_ERRORS: readonly string[] = OUTCOMES.filter((o) => !SUCCEEDING_OUTCOMES.includes(o));

export interface AlarmsProps {
  config: DeployConfig;
  runStateMachine: StateMachine;
  /** The run's cruise window machine (its child executions): timed out as the run's is. */
  cruiseStateMachine: StateMachine;
  reaperMachine: StateMachine;
  sweeper: NodejsFunction;
  /** One alarm each, `<key>DeadLetters`: the reaper's, the config schedules' and the API schedules' queues. */
  deadLetterQueues: Record<string, Queue>;
  api: RestApi;
  /** The deployment's customer-managed key (encryption.customerManagedKey), for the topic. */
  encryptionKey?: IKey;
}

export class Alarms extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const key = props.encryptionKey;
    this.topic = new Topic(this, 'Topic', { displayName: 'loadplane alarms', enforceSSL: true, ...(key ? { masterKey: key } : {}) });
    if (!key) {
      Validations.of(this.topic).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          "The topic carries alarm states and failed executions' names and errors, never secrets (they are not logged or put in errors); CloudWatch cannot publish to a topic under AWS's managed SNS key (encryption.customerManagedKey puts it under the deployment's key).",
      });
    }
    if (props.config.alarms.email) this.topic.addSubscription(new EmailSubscription(props.config.alarms.email));
    const stack = Stack.of(this);
    /**
     * Lets `service` publish to the topic for this account's sources that `source` names (SNS's
     * confused-deputy conditions), and use the topic's key, if it has one, as `keySid`.
     */
    const allowPublish = (sid: string, keySid: string, service: string, source: Record<string, Record<string, string>>) => {
      this.topic.addToResourcePolicy(
        new PolicyStatement({
          sid,
          principals: [new ServicePrincipal(service)],
          actions: ['sns:Publish'],
          resources: [this.topic.topicArn],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account }, ...source },
        }),
      );
      // The key's policy cannot name the topic or the alarms and rule (each depends on the key): this account's.
      key?.addToResourcePolicy(
        new PolicyStatement({
          sid: keySid,
          principals: [new ServicePrincipal(service)],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
        }),
      );
    };
    allowPublish('CloudWatchAlarmsOfThisAccount', 'AlarmTopicCloudWatchAlarmsOfThisAccount', 'cloudwatch.amazonaws.com', {
      ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
    });
    const action = new SnsAction(this.topic);
    const alarm = (alarmId: string, metric: IMetric, description: string) => {
      const a = new Alarm(this, alarmId, {
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      a.addAlarmAction(action);
      return a;
    };
    const period = Duration.minutes(5);

    alarm(
      'RunTimedOut',
      props.runStateMachine.metricTimedOut({ period, statistic: 'Sum' }),
      "A run's execution reached the state machine's timeout: its own deadlines should have ended it first.",
    );
    // A window ends at its first poll past its end, long before its timeout (cruiseWindowTimeoutSeconds). A
    // timed-out window fails the run's CruiseWindow Task, whose retries may start another and hide it; its
    // other failures are the run's (retried, then caught: the run fails with the window's error, RunFailed).
    alarm(
      'CruiseTimedOut',
      props.cruiseStateMachine.metricTimedOut({ period, statistic: 'Sum' }),
      "A cruise window's execution reached its timeout: its polls should have ended it first.",
    );
    // Each execution that failed for a reason other than its test's outcome, as it happens: the status
    // change event carries the error (the state machine's own logs leave error details out with
    // execution data, and a test's failure is an execution failure too).
    const runFailed = new Rule(this, 'RunFailed', {
      description: `loadplane: a run execution failed for a reason other than its test's outcome (${TEST_OUTCOME_ERRORS.join(', ')})`,
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [props.runStateMachine.stateMachineArn], status: ['FAILED'], error: [{ 'anything-but': [...TEST_OUTCOME_ERRORS] }] },
      },
    });
    // EventBridge's own retries (24 h) cover a failed publish; a dead-letter queue would page through this
    // same topic. Not aws-events-targets' SnsTopic, whose grant to EventBridge has no condition.
    const message = RuleTargetInput.fromText(
      `loadplane: run execution ${EventField.fromPath('$.detail.name')} failed with ${EventField.fromPath('$.detail.error')}: ${EventField.fromPath('$.detail.cause')} (${EventField.fromPath('$.detail.executionArn')})`,
    );
    runFailed.addTarget({ bind: () => ({ arn: this.topic.topicArn, input: message, targetResource: this.topic }) });
    allowPublish('RunFailedRule', 'AlarmTopicEventBridgeRulesOfThisAccount', 'events.amazonaws.com', { ArnEquals: { 'aws:SourceArn': runFailed.ruleArn } });
    alarm(
      'ReaperGaveUp',
      props.reaperMachine.metricFailed({ period, statistic: 'Sum' }),
      'The reaper kept failing for a run whose execution ended; the event is in its dead-letter queue.',
    );
    alarm('SweeperErrors', props.sweeper.metricErrors({ period: Duration.minutes(15), statistic: 'Sum' }), 'A sweep ended with errors (see the sweeper log).');
    for (const [name, queue] of Object.entries(props.deadLetterQueues)) {
      alarm(
        `${name}DeadLetters`,
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        `Messages wait in the ${name} dead-letter queue.`,
      );
    }
    alarm('Api5xx', props.api.metricServerError({ period, statistic: 'Sum' }), 'The API answered 5xx (its log names the error).');
  }
}
