/**
 * The IAM statements the control plane's functions need, each named after what the code calls, so
 * roles are assembled from them and a test can compare a role's actions with the SDK commands its
 * handler's code sends (test/cdk/iam-actions.test.ts). No statement grants `*` actions.
 */
import { ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';
import type { LedgerTable } from './ledger-table';

/** lambdas/ledger: GetCommand, PutCommand, UpdateCommand, QueryCommand (lib-dynamodb). */
export const LEDGER_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'] as const;

export function ledgerStatement(resourceArns: string[]): PolicyStatement {
  return new PolicyStatement({ actions: [...LEDGER_ACTIONS], resources: resourceArns });
}

/**
 * What a reader and writer of a table under a customer-managed key needs on the key: the actions
 * CDK's Table grants give one (Decrypt and DescribeKey to read; Encrypt, ReEncrypt*, GenerateDataKey*
 * to write), spelled out as DynamoDB's guide spells out its minimum (ReEncrypt* is ReEncryptFrom and
 * ReEncryptTo, GenerateDataKey* is GenerateDataKey and GenerateDataKeyWithoutPlaintext). Not
 * kms:CreateGrant: that is for the principal that puts the key on the table (CloudFormation's).
 */
export const LEDGER_KEY_ACTIONS = [
  'kms:Decrypt',
  'kms:DescribeKey',
  'kms:Encrypt',
  'kms:ReEncryptFrom',
  'kms:ReEncryptTo',
  'kms:GenerateDataKey',
  'kms:GenerateDataKeyWithoutPlaintext',
] as const;

/** The ledger's key, through DynamoDB only (encryption.customerManagedKey: the table is under the deployment's key). */
export function ledgerKeyStatement(keyArn: string): PolicyStatement {
  return new PolicyStatement({
    actions: [...LEDGER_KEY_ACTIONS],
    resources: [keyArn],
    conditions: { StringLike: { 'kms:ViaService': 'dynamodb.*.amazonaws.com' } },
  });
}

/** The ledger's statements for a role that reads and writes it: the table and its indexes, and its key if it has one. */
export function ledgerStatements(ledger: Pick<LedgerTable, 'resourceArns' | 'encryptionKey'>): PolicyStatement[] {
  return [ledgerStatement(ledger.resourceArns), ...(ledger.encryptionKey ? [ledgerKeyStatement(ledger.encryptionKey.keyArn)] : [])];
}

/** What a producer needs on a queue's customer-managed key (SQS guide: kms:GenerateDataKey and kms:Decrypt). */
export const QUEUE_SEND_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

/** Sending to a dead-letter queue under the deployment's key, through SQS only. */
export function queueSendKeyStatement(keyArn: string): PolicyStatement {
  return new PolicyStatement({
    actions: [...QUEUE_SEND_KEY_ACTIONS],
    resources: [keyArn],
    conditions: { StringLike: { 'kms:ViaService': 'sqs.*.amazonaws.com' } },
  });
}

/**
 * lambdas/cluster/eks-endpoint.ts: DescribeClusterCommand, on the configured clusters the functions
 * describe as themselves: those of the stack's account, each in its own region (its EKS name). A
 * cluster reached through a roleArn is described as that role (lambdas/cluster/eks-clusters.ts), so
 * the stack's roles get nothing on it but the AssumeRole below. Undefined when no cluster needs it.
 */
export function describeClustersStatement(scope: Construct, clusters: DeployConfig['clusters']): PolicyStatement | undefined {
  const stack = Stack.of(scope);
  const resources = clusters
    .filter((c) => c.roleArn === undefined)
    .map((c) => stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c.eksName ?? c.name, ...(c.region ? { region: c.region } : {}) }));
  return resources.length === 0 ? undefined : new PolicyStatement({ actions: ['eks:DescribeCluster'], resources: [...new Set(resources)] });
}

/**
 * lambdas/cluster/eks-clusters.ts: fromTemporaryCredentials (STS AssumeRole) of each cluster's
 * roleArn, and no other role. Undefined when no cluster names one.
 */
export function assumeClusterRolesStatement(clusters: DeployConfig['clusters']): PolicyStatement | undefined {
  const roles = [...new Set(clusters.flatMap((c) => (c.roleArn === undefined ? [] : [c.roleArn])))];
  return roles.length === 0 ? undefined : new PolicyStatement({ actions: ['sts:AssumeRole'], resources: roles });
}

/**
 * lambdas/notify/secrets-manager-channel-secrets.ts: GetSecretValueCommand for `<prefix><channel>`.
 * A secret's ARN ends in a random suffix Secrets Manager adds, and a run's channels are named by its
 * spec: the prefix is the boundary, so the resource ends in `*` (the reason is given to cdk-nag).
 */
export function channelSecretsStatement(scope: Construct, secretPrefix: string): PolicyStatement {
  const stack = Stack.of(scope);
  return new PolicyStatement({
    actions: ['secretsmanager:GetSecretValue'],
    resources: [stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${secretPrefix}*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
  });
}

/**
 * Only the functions that run Notify (the stages, the reaper, the sweeper for stale claims) may read
 * the channel secrets; with a customer-managed key on them, Decrypt through Secrets Manager only.
 */
export function grantChannelSecretsRead(role: Role, config: DeployConfig): void {
  role.addToPrincipalPolicy(channelSecretsStatement(role, config.notify.secretPrefix));
  if (config.notify.secretsKmsKeyArn) {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [config.notify.secretsKmsKeyArn],
        conditions: { StringLike: { 'kms:ViaService': 'secretsmanager.*.amazonaws.com' } },
      }),
    );
  }
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagArn(role, 'secretsmanager', `secret:${config.notify.secretPrefix}*`)}]`,
    reason: `Channel secrets are read by name (<prefix><channel>; channels are named in run specs) and a secret's ARN ends in a random suffix: the grant is the prefix ${config.notify.secretPrefix} followed by *.`,
  });
}

/**
 * An ARN of this stack's account and region as cdk-nag names it in a finding (`<AWS::Region>` while
 * the stack is environment-agnostic), for acknowledging exactly that finding.
 */
export function nagArn(scope: Construct, service: string, resource: string): string {
  const stack = Stack.of(scope);
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  return `arn:<AWS::Partition>:${service}:${region}:${account}:${resource}`;
}

/** lambdas/api/executions.ts: StartExecutionCommand / StopExecutionCommand on the run state machine. */
export function startExecutionStatement(stateMachineArn: string): PolicyStatement {
  return new PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] });
}

/** lambdas/api/executions.ts, stepFunctionsEndedExecutions: the sweeper lists the run state machine's executions that ended (sweep-ended.ts). */
export function listExecutionsStatement(stateMachineArn: string): PolicyStatement {
  return new PolicyStatement({ actions: ['states:ListExecutions'], resources: [stateMachineArn] });
}

/**
 * StopExecution (lambdas/api/executions.ts, the sweeper) and DescribeExecution (the reaper, for an
 * event without the input) take an execution ARN: `arn:…:execution:<machine name>:<execution name>`.
 * Executions are named at run time (by run id), so the grant is this machine's executions: its name, then `*`.
 */
export function runExecutionsStatement(
  role: Role,
  stateMachineName: string,
  actions: readonly ('states:StopExecution' | 'states:DescribeExecution')[],
): PolicyStatement {
  const stack = Stack.of(role);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagArn(role, 'states', `execution:${stateMachineName}:*`)}]`,
    reason:
      "An execution is named by its run id at run time: the grant is this run state machine's executions (its name, then *), for the actions the role's code sends.",
  });
  return new PolicyStatement({
    actions: [...actions],
    resources: [stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
  });
}
