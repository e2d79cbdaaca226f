/**
 * Whether the publishers of the deployment can really publish, judged the way IAM judges the request
 * (architecture §8): each alarm's publish to the alarm topic as CloudWatch makes it, the run-failed rule's as
 * EventBridge makes it, and Scheduler assuming the schedules' roles as it does for a schedule of its
 * group. Before, the topic's policy (which replaces SNS's default once the topic has one) allowed only
 * `events.amazonaws.com`, so every alarm's publish was refused; and the API schedules' role trusted
 * Scheduler only for `aws:SourceArn` on schedule ARNs, which Scheduler never sends (it sends the
 * group's ARN), so no schedule made through the API could start a run.
 *
 * The requests carry what the services put in them (AWS docs: SNS "Preventing confused deputy", the
 * Scheduler user guide's execution role): the principal, `aws:SourceAccount`, `aws:SourceArn`, and
 * `aws:SecureTransport` true. The evaluator knows the operators the templates use and fails on any
 * other, so a policy it cannot judge is never judged "allowed".
 *
 * Under the deployment's customer-managed key (encryption.customerManagedKey; the third config,
 * fixtures/encrypted-config.ts), a publish or a send is also a use of the key, which SNS and SQS make
 * with the publisher's or sender's permissions: each AWS service publisher must be allowed by the
 * key's policy (kms:GenerateDataKey and kms:Decrypt, for this account only), and each role that sends
 * to a dead-letter queue by its own policy (through SQS) with the key's policy leaving the account's
 * IAM policies to decide. Every dead-letter queue's writers are judged so: EventBridge for the reaper
 * rule's target, the roles Scheduler sends with, the reaper machine's role. And CloudWatch Logs may
 * use the key for the stack's log groups, and for no other account's.
 */
import { describe, expect, it } from 'vitest';
import { FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { EXAMPLE_CONFIG } from '../support/cdk-stack';
import { loadDeployConfig } from '../../cdk/config/deploy-config';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT } from './fixtures/encrypted-config';

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const ENV = { account: ACCOUNT, region: REGION };

type Json = Record<string, unknown>;
interface Statement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Principal?: unknown;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** A template with the intrinsics it uses resolved to strings: ARNs and names as AWS would make them. */
class Resolved {
  readonly resources: Record<string, { Type: string; Properties: Json }>;
  constructor(readonly synthed: SynthedStack) {
    this.resources = synthed.template.toJSON().Resources as Record<string, { Type: string; Properties: Json }>;
  }

  value(v: unknown): string {
    if (typeof v === 'string') return v;
    const o = v as Json;
    if ('Ref' in o) return this.ref(String(o.Ref));
    if ('Fn::GetAtt' in o) {
      const [id, attribute] = o['Fn::GetAtt'] as [string, string];
      if (attribute !== 'Arn') throw new Error(`GetAtt ${id}.${attribute} is not resolved by this test`);
      return this.arnOf(id);
    }
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => this.value(p)).join(sep);
    }
    if ('Fn::Select' in o) {
      const [index, list] = o['Fn::Select'] as [number, { 'Fn::Split'?: [string, unknown] }];
      if (!list['Fn::Split']) throw new Error(`cannot resolve ${JSON.stringify(v)}`);
      const [sep, source] = list['Fn::Split'];
      return this.value(source).split(sep)[index]!;
    }
    throw new Error(`cannot resolve ${JSON.stringify(v)}`);
  }

  private ref(id: string): string {
    if (id === 'AWS::Partition') return 'aws';
    if (id === 'AWS::Region') return REGION;
    if (id === 'AWS::AccountId') return ACCOUNT;
    if (id === 'AWS::URLSuffix') return 'amazonaws.com';
    if (id === 'AWS::StackId') return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${this.synthed.config.stackName}/0a1b2c3d-0000-1111-2222-333344445555`;
    const r = this.resources[id];
    if (!r) throw new Error(`no resource ${id}`);
    // A topic's Ref is its ARN; a queue's its URL; the others' their name.
    if (r.Type === 'AWS::SNS::Topic') return this.arnOf(id);
    return this.nameOf(id);
  }

  /** The physical name: the given one, or CloudFormation's `<stack>-<logical id>-<suffix>`. */
  nameOf(id: string): string {
    const p = this.resources[id]!.Properties;
    const given = p.Name ?? p.AlarmName ?? p.TopicName ?? p.QueueName ?? p.RoleName ?? p.LogGroupName;
    return given !== undefined ? this.value(given) : `${this.synthed.config.stackName}-${id}-ABCDEF123456`;
  }

  arnOf(id: string): string {
    const r = this.resources[id]!;
    const name = this.nameOf(id);
    switch (r.Type) {
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`;
      case 'AWS::Events::Rule':
        return `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}`;
      case 'AWS::Scheduler::ScheduleGroup':
        return `arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule-group/${name}`;
      case 'AWS::CloudWatch::Alarm':
        return `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${name}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${ACCOUNT}:role/${name}`;
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${name}`;
      case 'AWS::Logs::LogGroup':
        return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}`;
      default:
        throw new Error(`no ARN rule for ${r.Type} (${id})`);
    }
  }

  ofType(type: string): [string, { Type: string; Properties: Json }][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }
}

interface Request {
  /** An AWS service's principal, or (for a key policy) a role of this account. */
  service?: string;
  role?: string;
  action: string;
  resource?: string;
  context: Record<string, string>;
}

/** IAM's wildcard match (`*` any run of characters, `?` one). */
function like(pattern: string, value: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(value);
}

function conditionHolds(condition: Statement['Condition'], context: Record<string, string>, r: Resolved): boolean {
  for (const [qualified, keys] of Object.entries(condition ?? {})) {
    // `…IfExists`: a key the request lacks satisfies the condition.
    const ifExists = qualified.endsWith('IfExists');
    const operator = ifExists ? qualified.slice(0, -'IfExists'.length) : qualified;
    for (const [key, expected] of Object.entries(keys)) {
      const actual = context[key];
      const values = (Array.isArray(expected) ? expected : [expected]).map((e) => r.value(e));
      if (actual === undefined) {
        if (ifExists) continue;
        return false;
      }
      const match = (v: string) => {
        switch (operator) {
          case 'StringEquals':
          case 'ArnEquals':
            return v === actual;
          case 'StringLike':
          case 'ArnLike':
            return like(v, actual);
          case 'Bool':
            return v === actual;
          default:
            throw new Error(`condition operator ${operator} is not judged by this test`);
        }
      };
      if (!values.some(match)) return false;
    }
  }
  return true;
}

function statementMatches(st: Statement, req: Request, r: Resolved): boolean {
  const actions = Array.isArray(st.Action) ? st.Action : [st.Action];
  if (!actions.some((a) => like(a, req.action))) return false;
  if (!principalMatches(st.Principal, req, r)) return false;
  if (req.resource !== undefined && st.Resource !== undefined) {
    const resources = (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map((x) => r.value(x));
    if (!resources.some((x) => like(x, req.resource!))) return false;
  }
  return conditionHolds(st.Condition, req.context, r);
}

/**
 * Whether a resource policy's Principal covers the request: a service by name; a role of this account
 * by the account (`arn:…:root`: the account's IAM policies decide) or `*`. An identity policy's
 * statements have no Principal: they are the role's own, judged for it (`identity`).
 */
function principalMatches(principal: unknown, req: Request, r: Resolved): boolean {
  if (principal === undefined) return req.role !== undefined && req.service === undefined;
  if (principal === '*') return true;
  const p = principal as { Service?: unknown; AWS?: unknown };
  const list = (v: unknown) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => r.value(x)));
  // `{ AWS: '*' }` is `*`: everyone, services included (the queues' TLS-only Deny is written so).
  if (req.service !== undefined) return list(p.Service).includes(req.service) || list(p.AWS).includes('*');
  return list(p.AWS).some((a) => a === '*' || a === `arn:aws:iam::${ACCOUNT}:root` || a === req.role);
}

/** Allowed: some Allow statement matches and no Deny does. */
function allows(statements: Statement[], req: Request, r: Resolved): boolean {
  if (statements.some((st) => st.Effect === 'Deny' && statementMatches(st, req, r))) return false;
  return statements.some((st) => st.Effect === 'Allow' && statementMatches(st, req, r));
}

function topicPolicy(r: Resolved, topicId: string): Statement[] {
  return r
    .ofType('AWS::SNS::TopicPolicy')
    .filter(([, p]) => (p.Properties.Topics as unknown[]).some((t) => (t as { Ref?: string }).Ref === topicId))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** The key policy of the key a resource is encrypted with (its KmsMasterKeyId), or undefined when it has none. */
function keyPolicyOf(r: Resolved, keyRef: unknown): { arn: string; statements: Statement[] } | undefined {
  if (keyRef === undefined) return undefined;
  const getAtt = (keyRef as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (!getAtt || getAtt[1] !== 'Arn') throw new Error(`not the stack's own key: ${JSON.stringify(keyRef)}`);
  const key = r.resources[getAtt[0]]!;
  expect(key.Type).toBe('AWS::KMS::Key');
  return { arn: r.arnOf(getAtt[0]), statements: (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement };
}

/** What SNS and SQS ask KMS for with a publisher's or sender's permissions (SNS and SQS guides). */
const KEY_USES = ['kms:GenerateDataKey', 'kms:Decrypt'];

/** The statements of a role's own policies (inline and attached). */
function roleStatements(r: Resolved, roleId: string): Statement[] {
  const attached = r
    .ofType('AWS::IAM::Policy')
    .filter(([, p]) => ((p.Properties.Roles ?? []) as { Ref?: string }[]).some((x) => x.Ref === roleId))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const inline = ((r.resources[roleId]!.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
  return [...attached, ...inline];
}

const configs: [string, () => SynthedStack][] = [
  ['example config', () => synthStack(loadDeployConfig(EXAMPLE_CONFIG), { env: ENV })],
  ['full config', () => synthFromDocument(FULL_CONFIG_DOCUMENT, { env: ENV })],
  ['full config with the customer-managed key', () => synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT, { env: ENV })],
];

describe.each(configs)('publishers can publish (%s)', (_, synth) => {
  const synthed = synth();
  const r = new Resolved(synthed);
  const keyOn = synthed.config.encryption.customerManagedKey;
  /** A service's publish: the topic's policy, and the key's policy for what SNS asks KMS with the publisher's permissions. */
  const publish = (topicId: string, service: string, sourceArn: string, account = ACCOUNT): boolean => {
    const context = { 'aws:SourceAccount': account, 'aws:SourceArn': sourceArn, 'aws:SecureTransport': 'true' };
    if (!allows(topicPolicy(r, topicId), { service, action: 'sns:Publish', resource: r.arnOf(topicId), context }, r)) return false;
    const key = keyPolicyOf(r, r.resources[topicId]!.Properties.KmsMasterKeyId);
    expect(key !== undefined, `${topicId} is encrypted with the deployment's key iff the config asks for one`).toBe(keyOn);
    return !key || KEY_USES.every((action) => allows(key.statements, { service, action, resource: key.arn, context }, r));
  };

  it('every alarm reaches the topic it notifies; an alarm of another account does not', () => {
    const alarms = r.ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(5);
    for (const [id, alarm] of alarms) {
      const actions = alarm.Properties.AlarmActions as { Ref: string }[];
      expect(actions.length, id).toBeGreaterThan(0);
      for (const action of actions) {
        expect(publish(action.Ref, 'cloudwatch.amazonaws.com', r.arnOf(id)), `${id} → ${action.Ref}`).toBe(true);
        expect(
          publish(action.Ref, 'cloudwatch.amazonaws.com', r.arnOf(id).replace(ACCOUNT, '999999999999'), '999999999999'),
          `${id} from another account`,
        ).toBe(false);
      }
    }
  });

  it('the run-failed rule reaches its topic; another rule, and a publish without TLS, do not', () => {
    const rules = r
      .ofType('AWS::Events::Rule')
      .filter(([, rule]) => ((rule.Properties.Targets ?? []) as { Arn: unknown }[]).some((t) => r.value(t.Arn).startsWith('arn:aws:sns:')));
    expect(rules).toHaveLength(1);
    const [id, rule] = rules[0]!;
    const topic = (rule.Properties.Targets as { Arn: { Ref: string } }[])[0]!.Arn.Ref;
    expect(publish(topic, 'events.amazonaws.com', r.arnOf(id))).toBe(true);
    expect(publish(topic, 'events.amazonaws.com', `arn:aws:events:${REGION}:${ACCOUNT}:rule/someone-elses`)).toBe(false);
    expect(
      allows(
        topicPolicy(r, topic),
        {
          service: 'events.amazonaws.com',
          action: 'sns:Publish',
          resource: r.arnOf(topic),
          context: { 'aws:SourceAccount': ACCOUNT, 'aws:SourceArn': r.arnOf(id), 'aws:SecureTransport': 'false' },
        },
        r,
      ),
    ).toBe(false);
    // Nobody else is allowed at all: every Allow names a service and is conditioned on the source.
    for (const st of topicPolicy(r, topic).filter((s) => s.Effect === 'Allow')) {
      expect(st.Condition?.StringEquals?.['aws:SourceAccount'], st.Sid).toBeDefined();
      expect(st.Condition?.ArnLike?.['aws:SourceArn'] ?? st.Condition?.ArnEquals?.['aws:SourceArn'], st.Sid).toBeDefined();
    }
  });

  it("Scheduler may assume each schedule group's role for a schedule of that group (it sends the group's ARN), not for another group", () => {
    const groups = r.ofType('AWS::Scheduler::ScheduleGroup');
    const schedulerRoles = r
      .ofType('AWS::IAM::Role')
      .filter(([, role]) => JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'));
    expect(schedulerRoles.length).toBeGreaterThanOrEqual(1);
    for (const [roleId, role] of schedulerRoles) {
      const trust = (role.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
      const assume = (sourceArn: string, account = ACCOUNT) =>
        allows(
          trust,
          { service: 'scheduler.amazonaws.com', action: 'sts:AssumeRole', context: { 'aws:SourceAccount': account, 'aws:SourceArn': sourceArn } },
          r,
        );
      const mine = groups.filter(([groupId]) => assume(r.arnOf(groupId)));
      expect(
        mine.map(([g]) => g),
        roleId,
      ).toHaveLength(1);
      expect(assume(`arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule-group/another-group`), roleId).toBe(false);
      expect(assume(r.arnOf(mine[0]![0]).replace(ACCOUNT, '999999999999'), '999999999999'), roleId).toBe(false);
    }
    // The API's schedules run with a role of their own, trusted for the API's group.
    const apiGroup = groups.find(([, g]) => String(g.Properties.Name).endsWith('-api-schedules'));
    expect(apiGroup).toBeDefined();
  });
  it('every dead-letter queue can be written by each of its writers, under the key too: EventBridge for the reaper rule, the roles Scheduler sends with, the reaper machine', () => {
    const queues = r.ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(3);
    const queueByArn = new Map(queues.map(([id]) => [r.arnOf(id), id]));
    const queueByUrl = (url: unknown) => queues.find(([id]) => (url as { Ref?: string }).Ref === id)?.[0];
    const queuePolicy = (queueId: string) =>
      r
        .ofType('AWS::SQS::QueuePolicy')
        .filter(([, p]) => (p.Properties.Queues as { Ref?: string }[]).some((q) => q.Ref === queueId))
        .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const keyOf = (queueId: string) => {
      const key = keyPolicyOf(r, r.resources[queueId]!.Properties.KmsMasterKeyId);
      expect(key !== undefined, `${queueId} is encrypted with the deployment's key iff the config asks for one`).toBe(keyOn);
      if (!key) expect(r.resources[queueId]!.Properties.SqsManagedSseEnabled, queueId).toBe(true);
      return key;
    };
    const written = new Set<string>();

    // EventBridge: a rule target's dead letters, with its own principal (the queue's policy, the key's policy).
    const serviceSends = (queueId: string, service: string, sourceArn: string, account = ACCOUNT) => {
      const context = { 'aws:SourceAccount': account, 'aws:SourceArn': sourceArn, 'aws:SecureTransport': 'true' };
      if (!allows(queuePolicy(queueId), { service, action: 'sqs:SendMessage', resource: r.arnOf(queueId), context }, r)) return false;
      const key = keyOf(queueId);
      return !key || KEY_USES.every((action) => allows(key.statements, { service, action, resource: key.arn, context }, r));
    };
    for (const [ruleId, rule] of r.ofType('AWS::Events::Rule')) {
      for (const target of (rule.Properties.Targets ?? []) as { DeadLetterConfig?: { Arn: unknown } }[]) {
        if (!target.DeadLetterConfig) continue;
        const queueId = queueByArn.get(r.value(target.DeadLetterConfig.Arn))!;
        expect(serviceSends(queueId, 'events.amazonaws.com', r.arnOf(ruleId)), `${ruleId} → ${queueId}`).toBe(true);
        expect(serviceSends(queueId, 'events.amazonaws.com', `arn:aws:events:${REGION}:${ACCOUNT}:rule/someone-elses`), `another rule → ${queueId}`).toBe(
          false,
        );
        written.add(queueId);
      }
    }

    // A role: its own policy allows the send, and (under the key) the key's use through SQS, which the key's policy leaves to IAM.
    const viaSqs = { 'kms:ViaService': `sqs.${REGION}.amazonaws.com`, 'kms:CallerAccount': ACCOUNT };
    const roleSends = (roleId: string, queueId: string, context: Record<string, string> = viaSqs) => {
      const role = r.arnOf(roleId);
      const send: Request = { role, action: 'sqs:SendMessage', resource: r.arnOf(queueId), context: { 'aws:SecureTransport': 'true' } };
      // Same account: the role's own policy allows, and the queue's policy must not deny.
      if (!allows(roleStatements(r, roleId), send, r)) return false;
      if (queuePolicy(queueId).some((st) => st.Effect === 'Deny' && statementMatches(st, send, r))) return false;
      const key = keyOf(queueId);
      return (
        !key ||
        KEY_USES.every(
          (action) =>
            allows(roleStatements(r, roleId), { role, action, resource: key.arn, context }, r) &&
            allows(key.statements, { role, action, resource: key.arn, context }, r),
        )
      );
    };
    const roleOf = (arn: unknown) => (arn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    // The config's schedules: Scheduler dead-letters with each schedule's role.
    for (const [scheduleId, schedule] of r.ofType('AWS::Scheduler::Schedule')) {
      const target = schedule.Properties.Target as { RoleArn: unknown; DeadLetterConfig?: { Arn: unknown } };
      expect(target.DeadLetterConfig, scheduleId).toBeDefined();
      const queueId = queueByArn.get(r.value(target.DeadLetterConfig!.Arn))!;
      expect(roleSends(roleOf(target.RoleArn), queueId), `${scheduleId}'s role → ${queueId}`).toBe(true);
      written.add(queueId);
    }
    // The API's schedules: made at run time with the role and the queue the API function is told.
    const [, api] = r.ofType('AWS::Lambda::Function').find(([, f]) => f.Properties.Description === 'loadplane REST API')!;
    const env = (api.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const apiQueue = queueByArn.get(r.value(env.LOADPLANE_SCHEDULE_DLQ_ARN))!;
    expect(roleSends(roleOf(env.LOADPLANE_SCHEDULER_ROLE_ARN), apiQueue), `the API schedules' role → ${apiQueue}`).toBe(true);
    written.add(apiQueue);
    // The reaper machine sends what it gave up on (NotReaped), with its role.
    for (const [machineId, machine] of r.ofType('AWS::StepFunctions::StateMachine')) {
      const url = (machine.Properties.DefinitionSubstitutions as Record<string, unknown> | undefined)?.DeadLetterQueueUrl;
      if (url === undefined) continue;
      const queueId = queueByUrl(url)!;
      expect(roleSends(roleOf(machine.Properties.RoleArn), queueId), `${machineId}'s role → ${queueId}`).toBe(true);
      // Under the key, only through SQS: the same role calling KMS directly is refused.
      if (keyOn)
        expect(roleSends(roleOf(machine.Properties.RoleArn), queueId, { 'kms:CallerAccount': ACCOUNT }), `${machineId}'s role, KMS directly`).toBe(false);
      written.add(queueId);
    }
    expect([...written].sort()).toEqual(queues.map(([id]) => id).sort());
  });

  it("CloudWatch Logs may use the key for each of the stack's log groups, and not for another account's", () => {
    const groups = r.ofType('AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(15);
    for (const [id, group] of groups) {
      const key = keyPolicyOf(r, group.Properties.KmsKeyId);
      expect(key !== undefined, `${id} is encrypted with the deployment's key iff the config asks for one`).toBe(keyOn);
      if (!key) continue;
      const logs = (logGroupArn: string) => (action: string) =>
        allows(
          key.statements,
          { service: `logs.${REGION}.amazonaws.com`, action, resource: key.arn, context: { 'kms:EncryptionContext:aws:logs:arn': logGroupArn } },
          r,
        );
      expect(['kms:GenerateDataKey', 'kms:Encrypt', 'kms:Decrypt'].every(logs(r.arnOf(id))), id).toBe(true);
      expect(['kms:GenerateDataKey', 'kms:Decrypt'].some(logs(r.arnOf(id).replace(ACCOUNT, '999999999999'))), `${id} of another account`).toBe(false);
    }
  });
});
