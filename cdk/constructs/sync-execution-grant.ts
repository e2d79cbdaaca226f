/**
 * What a state machine's role needs to run another state machine's executions to their end from a
 * Task (`arn:aws:states:::states:startExecution.sync:2`), exactly as AWS documents it for a
 * synchronous nested execution ("IAM policies for integrated services", Step Functions developer
 * guide): StartExecution on the child machine; DescribeExecution and StopExecution on its executions
 * (Step Functions watches the child and stops it when the parent stops); and PutTargets, PutRule and
 * DescribeRule on the EventBridge rule Step Functions manages in the account to learn of the child's end.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { nagArn } from './permissions';

/** The rule Step Functions manages for `.sync` child executions (one per account and region). */
export const SYNC_EXECUTION_EVENTS_RULE = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

export interface SyncExecutionChild {
  stateMachineArn: string;
  /** Its fixed name: its executions' ARNs are `execution:<name>:<execution name>`. */
  stateMachineName: string;
}

/** The statements of a synchronous nested execution of `child`, as AWS documents them. */
export function startExecutionSyncStatements(scope: Role, child: SyncExecutionChild): PolicyStatement[] {
  const stack = Stack.of(scope);
  return [
    new PolicyStatement({ actions: ['states:StartExecution'], resources: [child.stateMachineArn] }),
    new PolicyStatement({
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      resources: [
        stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${child.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      ],
    }),
    new PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: SYNC_EXECUTION_EVENTS_RULE })],
    }),
  ];
}

/** Lets `role` run `child`'s executions synchronously from a Task, and acknowledges the one wildcard. */
export function grantStartExecutionSync(role: Role, child: SyncExecutionChild): void {
  for (const statement of startExecutionSyncStatements(role, child)) role.addToPrincipalPolicy(statement);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagArn(role, 'states', `execution:${child.stateMachineName}:*`)}]`,
    reason: `Step Functions names each child execution it starts for a .sync Task itself: the grant is ${child.stateMachineName}'s executions (its name, then *), for DescribeExecution and StopExecution only, as AWS documents for nested executions.`,
  });
}
