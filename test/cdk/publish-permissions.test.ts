/**
 * Whether the publishers of the deployment can really publish, judged the way IAM judges the request
 * (issue 26): each alarm's publish to the alarm topic as CloudWatch makes it, the run-failed rule's as
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
 */
import { describe, expect, it } from 'vitest';
import { FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { EXAMPLE_CONFIG } from '../support/cdk-stack';
import { loadDeployConfig } from '../../cdk/config/deploy-config';

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
    throw new Error(`cannot resolve ${JSON.stringify(v)}`);
  }

  private ref(id: string): string {
    if (id === 'AWS::Partition') return 'aws';
    if (id === 'AWS::Region') return REGION;
    if (id === 'AWS::AccountId') return ACCOUNT;
    if (id === 'AWS::URLSuffix') return 'amazonaws.com';
    const r = this.resources[id];
    if (!r) throw new Error(`no resource ${id}`);
    // A topic's Ref is its ARN; a queue's its URL; the others' their name.
    if (r.Type === 'AWS::SNS::Topic') return this.arnOf(id);
    return this.nameOf(id);
  }

  /** The physical name: the given one, or CloudFormation's `<stack>-<logical id>-<suffix>`. */
  nameOf(id: string): string {
    const p = this.resources[id]!.Properties;
    const given = p.Name ?? p.AlarmName ?? p.TopicName ?? p.QueueName ?? p.RoleName;
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
      default:
        throw new Error(`no ARN rule for ${r.Type} (${id})`);
    }
  }

  ofType(type: string): [string, { Type: string; Properties: Json }][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }
}

interface Request {
  service: string;
  action: string;
  resource?: string;
  context: Record<string, string>;
}

/** IAM's wildcard match (`*` any run of characters, `?` one). */
function like(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(value);
}

function conditionHolds(condition: Statement['Condition'], context: Record<string, string>, r: Resolved): boolean {
  for (const [operator, keys] of Object.entries(condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      const actual = context[key];
      const values = (Array.isArray(expected) ? expected : [expected]).map((e) => r.value(e));
      if (actual === undefined) return false;
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
  const principal = st.Principal;
  const services = principal === '*' ? ['*'] : ([] as string[]).concat(((principal as { Service?: string | string[] } | undefined)?.Service ?? []) as string[]);
  if (!services.some((s) => s === '*' || s === req.service)) return false;
  if (req.resource !== undefined && st.Resource !== undefined) {
    const resources = (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map((x) => r.value(x));
    if (!resources.some((x) => like(x, req.resource!))) return false;
  }
  return conditionHolds(st.Condition, req.context, r);
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

const configs: [string, () => SynthedStack][] = [
  ['example config', () => synthStack(loadDeployConfig(EXAMPLE_CONFIG), { env: ENV })],
  ['full config', () => synthFromDocument(FULL_CONFIG_DOCUMENT, { env: ENV })],
];

describe.each(configs)('publishers can publish (%s)', (_, synth) => {
  const r = new Resolved(synth());
  const publish = (topicId: string, service: string, sourceArn: string, account = ACCOUNT): boolean =>
    allows(topicPolicy(r, topicId), { service, action: 'sns:Publish', resource: r.arnOf(topicId), context: { 'aws:SourceAccount': account, 'aws:SourceArn': sourceArn, 'aws:SecureTransport': 'true' } }, r);

  it('every alarm reaches the topic it notifies; an alarm of another account does not', () => {
    const alarms = r.ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(5);
    for (const [id, alarm] of alarms) {
      const actions = alarm.Properties.AlarmActions as { Ref: string }[];
      expect(actions.length, id).toBeGreaterThan(0);
      for (const action of actions) {
        expect(publish(action.Ref, 'cloudwatch.amazonaws.com', r.arnOf(id)), `${id} → ${action.Ref}`).toBe(true);
        expect(publish(action.Ref, 'cloudwatch.amazonaws.com', r.arnOf(id).replace(ACCOUNT, '999999999999'), '999999999999'), `${id} from another account`).toBe(false);
      }
    }
  });

  it('the run-failed rule reaches its topic; another rule, and a publish without TLS, do not', () => {
    const rules = r.ofType('AWS::Events::Rule').filter(([, rule]) => ((rule.Properties.Targets ?? []) as { Arn: unknown }[]).some((t) => r.value(t.Arn).startsWith('arn:aws:sns:')));
    expect(rules).toHaveLength(1);
    const [id, rule] = rules[0]!;
    const topic = ((rule.Properties.Targets as { Arn: { Ref: string } }[])[0]!).Arn.Ref;
    expect(publish(topic, 'events.amazonaws.com', r.arnOf(id))).toBe(true);
    expect(publish(topic, 'events.amazonaws.com', `arn:aws:events:${REGION}:${ACCOUNT}:rule/someone-elses`)).toBe(false);
    expect(
      allows(topicPolicy(r, topic), { service: 'events.amazonaws.com', action: 'sns:Publish', resource: r.arnOf(topic), context: { 'aws:SourceAccount': ACCOUNT, 'aws:SourceArn': r.arnOf(id), 'aws:SecureTransport': 'false' } }, r),
    ).toBe(false);
    // Nobody else is allowed at all: every Allow names a service and is conditioned on the source.
    for (const st of topicPolicy(r, topic).filter((s) => s.Effect === 'Allow')) {
      expect(st.Condition?.StringEquals?.['aws:SourceAccount'], st.Sid).toBeDefined();
      expect(st.Condition?.ArnLike?.['aws:SourceArn'] ?? st.Condition?.ArnEquals?.['aws:SourceArn'], st.Sid).toBeDefined();
    }
  });

  it('Scheduler may assume each schedule group\'s role for a schedule of that group (it sends the group\'s ARN), not for another group', () => {
    const groups = r.ofType('AWS::Scheduler::ScheduleGroup');
    const schedulerRoles = r.ofType('AWS::IAM::Role').filter(([, role]) => JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'));
    expect(schedulerRoles.length).toBeGreaterThanOrEqual(1);
    for (const [roleId, role] of schedulerRoles) {
      const trust = (role.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
      const assume = (sourceArn: string, account = ACCOUNT) =>
        allows(trust, { service: 'scheduler.amazonaws.com', action: 'sts:AssumeRole', context: { 'aws:SourceAccount': account, 'aws:SourceArn': sourceArn } }, r);
      const mine = groups.filter(([groupId]) => assume(r.arnOf(groupId)));
      expect(mine.map(([g]) => g), roleId).toHaveLength(1);
      expect(assume(`arn:aws:scheduler:${REGION}:${ACCOUNT}:schedule-group/another-group`), roleId).toBe(false);
      expect(assume(r.arnOf(mine[0]![0]).replace(ACCOUNT, '999999999999'), '999999999999'), roleId).toBe(false);
    }
    // The API's schedules run with a role of their own, trusted for the API's group.
    const apiGroup = groups.find(([, g]) => String(g.Properties.Name).endsWith('-api-schedules'));
    expect(apiGroup).toBeDefined();
  });
});
