/**
 * The deployment's customer-managed KMS key (deploy config `encryption.customerManagedKey`): one key
 * for what the stack stores, the ledger table, every log group (the functions', the state machines'
 * vended ones, the API's access logs), the alarm topic and the dead-letter queues. Off by default:
 * then nothing here is created and every resource keeps AWS's own encryption.
 *
 * The key created here: rotation on, retained by `cdk destroy` like the ledger (a deleted key would
 * leave the retained table and log groups unreadable), the alias `alias/<stackName>`. Its policy is
 * CDK's default (the account's IAM policies decide, so a role's grant is in its own policy) plus a
 * statement per AWS service that uses the key itself, each where AWS documents its conditions:
 * CloudWatch Logs here, for log groups of this account and region only; the alarm topic's publishers
 * (alarms.ts) and EventBridge dead-lettering the reaper's events (reaper.ts) where they are wired;
 * and a Deny of kms:CreateGrant except for AWS services (Control Tower's CT.KMS.PR.3): DynamoDB's
 * grants for the table are for an AWS resource.
 *
 * Who else uses the key, through their own IAM policies: the Lambda roles through DynamoDB
 * (ledgerKeyStatement), and the roles that send to a dead-letter queue through SQS
 * (queueSendKeyStatement): the reaper machine's and Scheduler's roles.
 *
 * With `encryption.keyArn` an existing key is used instead: the stack cannot change its policy (CDK's
 * addToResourcePolicy is a no-op on an imported key), so that policy must allow what this one allows.
 */
import { Aws, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key, type IKey } from 'aws-cdk-lib/aws-kms';
import { QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeployConfig } from '../config/deploy-config';

/** The created key's alias: `alias/<stackName>`. */
export function encryptionKeyAlias(config: Pick<DeployConfig, 'stackName'>): string {
  return `alias/${config.stackName}`;
}

/**
 * CloudWatch Logs' use of the key, as its guide gives it ("Encrypt log data in CloudWatch Logs using
 * AWS KMS", step 2): the regional Logs principal, for log groups of this account and region only
 * (the encryption context Logs sends names the log group).
 */
export function cloudWatchLogsKeyStatement(scope: Construct): PolicyStatement {
  const stack = Stack.of(scope);
  return new PolicyStatement({
    sid: 'CloudWatchLogsOfThisAccount',
    principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${stack.region}:${stack.account}:log-group:*` } },
  });
}

/**
 * Grants on the key only for AWS resources or to AWS services (Control Tower's CT.KMS.PR.3): DynamoDB
 * makes its grants for the table, an AWS resource; nobody can hand the key to anyone else by a grant.
 */
export function awsServiceGrantsOnlyStatement(): PolicyStatement {
  return new PolicyStatement({
    sid: 'GrantsOnlyForAwsResources',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: ['kms:CreateGrant'],
    resources: ['*'],
    conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
  });
}

/**
 * The stack's key when the config asks for one: created (rotated, retained, aliased, with the
 * CloudWatch Logs and grant statements), or the configured key imported; undefined otherwise.
 */
export function deploymentKey(scope: Construct, config: Pick<DeployConfig, 'stackName' | 'encryption'>): IKey | undefined {
  if (!config.encryption.customerManagedKey) return undefined;
  if (config.encryption.keyArn !== undefined) return Key.fromKeyArn(scope, 'EncryptionKey', config.encryption.keyArn);
  const key = new Key(scope, 'EncryptionKey', {
    description: `loadplane stack ${config.stackName}: the ledger table, the log groups, the alarm topic and the dead-letter queues`,
    enableKeyRotation: true,
    alias: encryptionKeyAlias(config),
    // As the ledger: the retained table and log groups stay readable after `cdk destroy`.
    removalPolicy: RemovalPolicy.RETAIN,
  });
  key.addToResourcePolicy(cloudWatchLogsKeyStatement(scope));
  key.addToResourcePolicy(awsServiceGrantsOnlyStatement());
  return key;
}

/** A dead-letter queue's encryption: SQS-managed, or the deployment's key. */
export function deadLetterQueueEncryption(key: IKey | undefined): Pick<QueueProps, 'encryption' | 'encryptionMasterKey'> {
  return key ? { encryption: QueueEncryption.KMS, encryptionMasterKey: key } : { encryption: QueueEncryption.SQS_MANAGED };
}
