/**
 * A state machine's log group, named under `/aws/vendedlogs/states/`. When Step Functions is given a
 * log group outside `/aws/vendedlogs/`, it adds the group to the account's CloudWatch Logs resource
 * policy, which holds at most 5,120 characters for the whole account: in a busy account the deploy
 * fails, and every stack adds to it. Under `/aws/vendedlogs/` no resource policy is needed (AWS:
 * "Enabling logging from AWS services", vended logs). The name ends with the stack's own id (the
 * GUID of its StackId), so a group retained after `cdk destroy` never collides with the next stack
 * of the same name. Under the deployment's customer-managed key when it has one (CloudWatch Logs
 * encrypts what Step Functions delivers with it: encryption-key.ts allows Logs the key).
 */
import { Fn, Stack } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

export const VENDED_STATES_LOG_PREFIX = '/aws/vendedlogs/states/';

export function stateMachineLogGroup(scope: Construct, id: string, name: string, retentionDays: number, encryptionKey?: IKey): LogGroup {
  const stackGuid = Fn.select(2, Fn.split('/', Stack.of(scope).stackId));
  return new LogGroup(scope, id, {
    logGroupName: `${VENDED_STATES_LOG_PREFIX}${name}-${stackGuid}`,
    retention: retentionDays as RetentionDays,
    ...(encryptionKey ? { encryptionKey } : {}),
  });
}
