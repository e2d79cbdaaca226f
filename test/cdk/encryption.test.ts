/**
 * The deployment's customer-managed KMS key (deploy config `encryption.customerManagedKey`,
 * cdk/constructs/encryption-key.ts): created only when asked; rotated, retained, aliased after the
 * stack; used by the ledger table, every log group, the alarm topic and every queue; a key policy
 * that lets exactly the AWS services that use the key themselves use it (CloudWatch Logs for this
 * account's log groups, the alarm topic's publishers and EventBridge's dead letters for this account)
 * and grants only for AWS resources; and identity grants on it only for the roles that need one
 * (the Lambda roles through DynamoDB, the dead-letter queues' writers through SQS). Off, nothing
 * refers to a key (the example stack's reviewed template, stack-template.test.ts, is unchanged).
 *
 * Whether each publisher and each dead-letter queue's writer is really allowed, key included, is
 * judged IAM-style in publish-permissions.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { loadDeployConfig, type DeployConfig } from '../../cdk/config/deploy-config';
import { LEDGER_KEY_ACTIONS, QUEUE_SEND_KEY_ACTIONS } from '../../cdk/constructs/permissions';
import { EXAMPLE_CONFIG, flat, FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT, EXISTING_KEY_ARN, EXISTING_KEY_CONFIG_DOCUMENT } from './fixtures/encrypted-config';

type Props = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Props;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: unknown;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Principal?: unknown;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** A JSON value with every intrinsic flattened (for comparing whole statements). */
function flatDeep(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(flatDeep);
  const o = v as Record<string, unknown>;
  if ('Ref' in o || 'Fn::GetAtt' in o || 'Fn::Join' in o) return flat(o);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, flatDeep(x)]));
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

class View {
  readonly resources: Record<string, Resource>;
  constructor(readonly synthed: SynthedStack) {
    this.resources = (synthed.template.toJSON() as { Resources: Record<string, Resource> }).Resources;
  }
  get config(): DeployConfig {
    return this.synthed.config;
  }
  get outputs(): Record<string, unknown> {
    return (this.synthed.template.toJSON() as { Outputs?: Record<string, unknown> }).Outputs ?? {};
  }
  ofType(type: string): Array<[string, Resource]> {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }
  /** The key the stack's resources name: `{<key id>.Arn}` for the created one, the ARN for an existing one. */
  get keyRef(): string {
    const keys = this.ofType('AWS::KMS::Key');
    if (keys.length === 1) return `{${keys[0]![0]}.Arn}`;
    if (keys.length === 0 && this.config.encryption.keyArn) return this.config.encryption.keyArn;
    throw new Error(`expected one key, found ${keys.length}`);
  }
  get keyPolicy(): Statement[] {
    const [[, key]] = this.ofType('AWS::KMS::Key') as [[string, Resource]];
    return (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
  }
  /** Every identity-policy statement that applies to a role. */
  statementsOf(roleId: string): Statement[] {
    return this.ofType('AWS::IAM::Policy')
      .filter(([, p]) => asArray(p.Properties.Roles as unknown[]).some((r) => flat(r) === `{Ref:${roleId}}`))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }
}

const example = loadDeployConfig(EXAMPLE_CONFIG);
const on = { customerManagedKey: true };
const views = {
  example: new View(synthStack(example)),
  full: new View(synthFromDocument(FULL_CONFIG_DOCUMENT)),
  // The example with the key, under a stack name of its own (the alias is named after it).
  exampleWithKey: new View(synthStack({ ...example, stackName: 'perf-lp', encryption: on })),
  fullWithKey: new View(synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT)),
  existingKey: new View(synthFromDocument(EXISTING_KEY_CONFIG_DOCUMENT)),
};
const off: Array<[string, View]> = [
  ['example config', views.example],
  ['full config', views.full],
];
const withKey: Array<[string, View]> = [
  ['example config with the key', views.exampleWithKey],
  ['full config with the key', views.fullWithKey],
  ['config naming an existing key', views.existingKey],
];
const created = withKey.filter(([, v]) => v.config.encryption.keyArn === undefined);

describe('without encryption.customerManagedKey (the default)', () => {
  it.each(off)('%s: no key, and nothing names one (the table, log groups, topic and queues keep AWS’s own encryption)', (_, v) => {
    expect(v.config.encryption.customerManagedKey).toBe(false);
    expect(v.ofType('AWS::KMS::Key')).toEqual([]);
    expect(v.ofType('AWS::KMS::Alias')).toEqual([]);
    expect(v.outputs.EncryptionKeyArn).toBeUndefined();
    const [[, table]] = v.ofType('AWS::DynamoDB::Table') as [[string, Resource]];
    expect(table.Properties.SSESpecification).toBeUndefined();
    for (const [id, g] of v.ofType('AWS::Logs::LogGroup')) expect(g.Properties.KmsKeyId, id).toBeUndefined();
    for (const [id, t] of v.ofType('AWS::SNS::Topic')) expect(t.Properties.KmsMasterKeyId, id).toBeUndefined();
    for (const [id, q] of v.ofType('AWS::SQS::Queue')) expect([q.Properties.KmsMasterKeyId, q.Properties.SqsManagedSseEnabled], id).toEqual([undefined, true]);
    // No statement anywhere names the deployment's key (the full config's kms:Decrypt is the channel secrets' key).
    expect(JSON.stringify(v.synthed.template.toJSON())).not.toMatch(/EncryptionKey/);
  });
});

describe('with encryption.customerManagedKey', () => {
  it.each(created)('%s: one key, rotated, retained by `cdk destroy` (like the ledger), its alias alias/<stackName>, its ARN an output', (_, v) => {
    const keys = v.ofType('AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [[keyId, key]] = keys as [[string, Resource]];
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect([key.DeletionPolicy, key.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    const aliases = v.ofType('AWS::KMS::Alias').map(([, a]) => a);
    expect(aliases.map((a) => [a.Properties.AliasName, flat(a.Properties.TargetKeyId)])).toEqual([[`alias/${v.config.stackName}`, `{${keyId}.Arn}`]]);
    // The alias goes with the stack (a redeploy of the same name can create it again); the key stays.
    expect(aliases[0]!.DeletionPolicy).toBeUndefined();
    expect(flat((v.outputs.EncryptionKeyArn as { Value: unknown }).Value)).toBe(`{${keyId}.Arn}`);
  });

  it('the alias names the stack (perf-lp → alias/perf-lp; loadplane → alias/loadplane)', () => {
    expect(views.exampleWithKey.ofType('AWS::KMS::Alias').map(([, a]) => a.Properties.AliasName)).toEqual(['alias/perf-lp']);
    expect(views.fullWithKey.ofType('AWS::KMS::Alias').map(([, a]) => a.Properties.AliasName)).toEqual(['alias/loadplane']);
  });

  it.each(withKey)('%s: the ledger table is encrypted with it (customer managed: SSEType KMS, its KMSMasterKeyId)', (_, v) => {
    const [[, table], ...rest] = v.ofType('AWS::DynamoDB::Table') as [[string, Resource], ...Array<[string, Resource]>];
    expect(rest).toEqual([]);
    expect(flatDeep(table.Properties.SSESpecification)).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: v.keyRef });
  });

  it.each(withKey)("%s: every log group is encrypted with it: the functions', the state machines' vended ones, the API's access logs", (_, v) => {
    const groups = v.ofType('AWS::Logs::LogGroup');
    // 15 functions (13 stages and the reaper, the sweeper, the API), 3 state machines, the access logs.
    expect(groups).toHaveLength(19);
    expect(groups.filter(([, g]) => flat(g.Properties.LogGroupName ?? '').startsWith('/aws/vendedlogs/states/'))).toHaveLength(3);
    for (const [id, g] of groups) expect(flat(g.Properties.KmsKeyId), id).toBe(v.keyRef);
  });

  it.each(withKey)('%s: the alarm topic and every queue (the three dead-letter queues) are encrypted with it, none with SQS-managed SSE', (_, v) => {
    const topics = v.ofType('AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    for (const [id, t] of topics) expect(flat(t.Properties.KmsMasterKeyId), id).toBe(v.keyRef);
    const queues = v.ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(3);
    for (const [id, q] of queues) {
      expect(flat(q.Properties.KmsMasterKeyId), id).toBe(v.keyRef);
      expect(q.Properties.SqsManagedSseEnabled, id).toBeUndefined();
    }
  });

  it.each(created)(
    "%s: the key's policy: the account's IAM policies, CloudWatch Logs for this account's log groups, the alarm topic's publishers and EventBridge's dead letters for this account, grants only for AWS resources; nothing else",
    (_, v) => {
      const account = { StringEquals: { 'aws:SourceAccount': '<AWS::AccountId>' } };
      const statements = flatDeep(v.keyPolicy) as Statement[];
      const bySid = (sid: string | undefined) => statements.filter((s) => s.Sid === sid);
      expect(statements.map((s) => s.Sid ?? '(CDK default)').sort()).toEqual(
        [
          '(CDK default)',
          'AlarmTopicCloudWatchAlarmsOfThisAccount',
          'AlarmTopicEventBridgeRulesOfThisAccount',
          'CloudWatchLogsOfThisAccount',
          'EventBridgeDeadLettersOfThisAccount',
          'GrantsOnlyForAwsResources',
        ].sort(),
      );
      // The account: IAM policies decide for its principals (the roles' grants are in their own policies).
      expect(bySid(undefined)).toEqual([
        { Effect: 'Allow', Principal: { AWS: 'arn:<AWS::Partition>:iam::<AWS::AccountId>:root' }, Action: 'kms:*', Resource: '*' },
      ]);
      // CloudWatch Logs' statement as its guide gives it, for this account's and region's log groups.
      expect(bySid('CloudWatchLogsOfThisAccount')).toEqual([
        {
          Sid: 'CloudWatchLogsOfThisAccount',
          Effect: 'Allow',
          Principal: { Service: 'logs.<AWS::Region>.amazonaws.com' },
          Action: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
          Resource: '*',
          Condition: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': 'arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:*' } },
        },
      ]);
      // The topic's publishers: SNS encrypts with the publisher's permissions (kms:GenerateDataKey* and kms:Decrypt).
      expect(bySid('AlarmTopicCloudWatchAlarmsOfThisAccount')).toEqual([
        {
          Sid: 'AlarmTopicCloudWatchAlarmsOfThisAccount',
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          Resource: '*',
          Condition: account,
        },
      ]);
      expect(bySid('AlarmTopicEventBridgeRulesOfThisAccount')).toEqual([
        {
          Sid: 'AlarmTopicEventBridgeRulesOfThisAccount',
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          Resource: '*',
          Condition: account,
        },
      ]);
      // EventBridge dead-letters the reaper rule's undelivered events (EventBridge guide: kms:Decrypt and kms:GenerateDataKey).
      expect(bySid('EventBridgeDeadLettersOfThisAccount')).toEqual([
        {
          Sid: 'EventBridgeDeadLettersOfThisAccount',
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
          Resource: '*',
          Condition: account,
        },
      ]);
      // Control Tower's CT.KMS.PR.3: no grant but for an AWS resource or to an AWS service (DynamoDB's for the table are).
      expect(bySid('GrantsOnlyForAwsResources')).toEqual([
        {
          Sid: 'GrantsOnlyForAwsResources',
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 'kms:CreateGrant',
          Resource: '*',
          Condition: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
        },
      ]);
      // No service is allowed without a condition.
      for (const s of statements.filter((x) => x.Effect === 'Allow' && (x.Principal as { Service?: unknown }).Service !== undefined))
        expect(s.Condition, s.Sid).toBeDefined();
    },
  );

  it.each(withKey)(
    '%s: identity grants on the key: the Lambda roles through DynamoDB, the dead-letter queues’ writers (the reaper machine, Scheduler’s roles) through SQS, no other role',
    (_, v) => {
      const key = v.keyRef;
      const lambdaRoles = new Set(v.ofType('AWS::Lambda::Function').map(([, f]) => flat(f.Properties.Role).replace(/^\{(.+)\.Arn\}$/, '$1')));
      // The reaper machine: the one whose definition sends to a queue (NotReaped's sqs:sendMessage).
      const senders = v
        .ofType('AWS::StepFunctions::StateMachine')
        .filter(([, m]) => 'DeadLetterQueueUrl' in ((m.Properties.DefinitionSubstitutions ?? {}) as Props));
      expect(senders).toHaveLength(1);
      const reaperRole = flat(senders[0]![1].Properties.RoleArn).replace(/^\{(.+)\.Arn\}$/, '$1');
      const schedulerRoles = new Set(
        v
          .ofType('AWS::IAM::Role')
          .filter(([, r]) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'))
          .map(([id]) => id),
      );
      expect(lambdaRoles.size).toBe(3);
      // The API's schedules' role, and the config schedules' target role (the example and the full config have schedules).
      expect(schedulerRoles.size).toBe(v.config.schedules.length > 0 ? 2 : 1);
      const onKey = (roleId: string) =>
        v
          .statementsOf(roleId)
          .filter((s) => asArray(s.Resource).some((r) => flat(r) === key))
          .map((s) => flatDeep({ Action: s.Action, Resource: s.Resource, Condition: s.Condition }));
      for (const [roleId] of v.ofType('AWS::IAM::Role')) {
        const expected = lambdaRoles.has(roleId)
          ? [{ Action: [...LEDGER_KEY_ACTIONS], Resource: key, Condition: { StringLike: { 'kms:ViaService': 'dynamodb.*.amazonaws.com' } } }]
          : roleId === reaperRole || schedulerRoles.has(roleId)
            ? [{ Action: [...QUEUE_SEND_KEY_ACTIONS], Resource: key, Condition: { StringLike: { 'kms:ViaService': 'sqs.*.amazonaws.com' } } }]
            : [];
        expect(onKey(roleId), roleId).toEqual(expected);
      }
      // The ledger grant carries no wildcard action (the docs' ReEncrypt* and GenerateDataKey*, spelled out) and no kms:CreateGrant.
      expect((LEDGER_KEY_ACTIONS as readonly string[]).filter((a) => a.includes('*') || a === 'kms:CreateGrant')).toEqual([]);
    },
  );

  it('switching it on changes only the encryption of the same resources, each updated in place, and their roles’ policies; it adds the key, its alias and an output', () => {
    // CloudFormation updates each of these properties without replacement (LogGroup KmsKeyId, Table
    // SSESpecification, Queue KmsMasterKeyId and SqsManagedSseEnabled, Topic KmsMasterKeyId: "No interruption").
    const changeable: Record<string, string[]> = {
      'AWS::Logs::LogGroup': ['KmsKeyId'],
      'AWS::DynamoDB::Table': ['SSESpecification'],
      'AWS::SQS::Queue': ['KmsMasterKeyId', 'SqsManagedSseEnabled'],
      'AWS::SNS::Topic': ['KmsMasterKeyId'],
      'AWS::IAM::Policy': ['PolicyDocument'],
    };
    const [before, after] = [views.full, views.fullWithKey];
    const added = Object.keys(after.resources).filter((id) => !(id in before.resources));
    expect(added.map((id) => after.resources[id]!.Type).sort()).toEqual(['AWS::KMS::Alias', 'AWS::KMS::Key']);
    expect(Object.keys(before.resources).filter((id) => !(id in after.resources))).toEqual([]);
    const changed: string[] = [];
    for (const [id, was] of Object.entries(before.resources)) {
      const now = after.resources[id]!;
      expect(now.Type, id).toBe(was.Type);
      expect([now.DeletionPolicy, now.UpdateReplacePolicy, JSON.stringify(now.DependsOn)], id).toEqual([
        was.DeletionPolicy,
        was.UpdateReplacePolicy,
        JSON.stringify(was.DependsOn),
      ]);
      const keys = new Set([...Object.keys(was.Properties ?? {}), ...Object.keys(now.Properties ?? {})]);
      for (const k of keys) {
        if (JSON.stringify(was.Properties?.[k]) === JSON.stringify(now.Properties?.[k])) continue;
        expect(changeable[was.Type] ?? [], `${id} (${was.Type}) ${k}`).toContain(k);
        changed.push(was.Type);
      }
    }
    expect(new Set(changed)).toEqual(new Set(Object.keys(changeable)));
    expect(Object.keys(after.outputs).filter((o) => !(o in before.outputs))).toEqual(['EncryptionKeyArn']);
  });

  it('with encryption.keyArn: no key or alias is created, every resource and grant names that key, and the stack adds nothing to its policy (it cannot)', () => {
    const v = views.existingKey;
    expect(v.keyRef).toBe(EXISTING_KEY_ARN);
    expect(v.ofType('AWS::KMS::Key')).toEqual([]);
    expect(v.ofType('AWS::KMS::Alias')).toEqual([]);
    expect(flat((v.outputs.EncryptionKeyArn as { Value: unknown }).Value)).toBe(EXISTING_KEY_ARN);
    // Nothing refers to a key of the stack's own (the resources and grants above name the ARN: the it.each cases).
    expect(JSON.stringify(v.synthed.template.toJSON())).not.toMatch(/EncryptionKey[0-9A-F]{8}/);
  });
});
