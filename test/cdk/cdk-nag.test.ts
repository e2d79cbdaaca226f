/**
 * cdk-nag's AwsSolutions checks and CDK's built-in CloudFormation validation on the stacks of the
 * example config and of a config with every option on (VPC, KMS key, ERROR log level): no finding,
 * no validation violation, and every acknowledged rule is a deliberate, explained one.
 *
 * How CDK's built-in validation reports (aws-cdk-lib 2.276): the plugin runs at synth and writes
 * `validation-report.json` into the cloud assembly; its violations are downgraded to warnings
 * unless the feature flag `@aws-cdk/core:validateAgainstDefaultRules` is set, so synth neither
 * throws nor adds annotations for them (the report and stderr are where they show). The tests read
 * the report. Construct errors (`Annotations.addError`) are annotations on the stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { configDocument, nagFindings, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';

const EXAMPLE_SPEC = parseYaml(readFileSync(fileURLToPath(new URL('../../examples/deploy/nightly-smoke.yaml', import.meta.url)), 'utf8')) as Record<string, unknown>;
/** Every optional part switched on: a VPC, a KMS key on the channel secrets, the state machine logging at ERROR. */
const FULL_CONFIG = configDocument({
  vpc: { vpcId: 'vpc-0123456789abcdef0', subnetIds: ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'], securityGroupIds: ['sg-0123456789abcdef0'] },
  notify: { secretsKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
  clusters: [
    { name: 'perf', namespaces: ['loadtest'] },
    { name: 'shared', namespaces: ['lt'], accessEntry: false },
  ],
  schedules: [
    { name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', spec: { ...EXAMPLE_SPEC, name: 'nightly', cluster: { name: 'perf', namespace: 'loadtest' } } },
    { name: 'weekly', expression: 'rate(7 days)', enabled: false, spec: { ...EXAMPLE_SPEC, name: 'weekly', cluster: { name: 'shared', namespace: 'lt' } } },
  ],
  alarms: { email: 'platform-team@example.com' },
  logging: { stateMachineLevel: 'ERROR' },
});

const SECRETS = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:loadplane/notify/*]';
const EXECUTIONS = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:loadplane-run:*]';
const ANY_RESOURCE = 'AwsSolutions-IAM5[Resource::*]';
const API_GATEWAY_LOGS_POLICY = 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]';

/**
 * Every acknowledged rule, where: `<construct path> <rule id>`. A new acknowledgement fails this
 * test until it is added here, deliberately, with its reason read.
 */
const EXAMPLE_ACKNOWLEDGED = [
  `loadplane/Stages/Role ${SECRETS}`,
  `loadplane/Run/Role ${ANY_RESOURCE}`,
  'loadplane/Api/Api AwsSolutions-APIG2',
  'loadplane/Api/Api AwsSolutions-APIG3',
  'loadplane/Api/Api AwsSolutions-COG4',
  `loadplane/Api/Api ${API_GATEWAY_LOGS_POLICY}`,
  'loadplane/Reaper/DeadLetters AwsSolutions-SQS3',
  `loadplane/Reaper/Role ${ANY_RESOURCE}`,
  `loadplane/Sweeper/Role ${EXECUTIONS}`,
  `loadplane/Sweeper/Role ${SECRETS}`,
  'loadplane/Schedules/DeadLetters AwsSolutions-SQS3',
  'loadplane/Alarms/Topic AwsSolutions-SNS2',
];
const FULL_ACKNOWLEDGED = [
  ...EXAMPLE_ACKNOWLEDGED,
  // Lambda's VPC network-interface actions (no resource ARN): a policy of their own on the roles of the
  // functions in the VPC, so no other statement of those roles may use Resource *.
  `loadplane/Stages/NetworkInterfaces ${ANY_RESOURCE}`,
  `loadplane/Sweeper/NetworkInterfaces ${ANY_RESOURCE}`,
  // The imported subnets carry no route table ids: nothing in the stack routes.
  'loadplane/FunctionPlacement @aws-cdk/aws-ec2:noSubnetRouteTableId',
  // logging.stateMachineLevel: ERROR
  'loadplane/Run/StateMachine AwsSolutions-SF1',
];

interface Synthed {
  synthed?: SynthedStack;
  error?: unknown;
}
const stacks: Record<'example' | 'full', Synthed> = { example: {}, full: {} };

beforeAll(() => {
  // Each synthesized once, with CDK's built-in CloudFormation validation on.
  for (const [name, synth] of [
    ['example', () => synthStack(undefined, { validate: true })],
    ['full', () => synthFromDocument(FULL_CONFIG, { validate: true })],
  ] as const) {
    try {
      stacks[name] = { synthed: synth() };
    } catch (error) {
      stacks[name] = { error };
    }
  }
});

function synthed(name: 'example' | 'full'): SynthedStack {
  const s = stacks[name];
  if (!s.synthed) throw new Error(`the ${name} stack did not synthesize: ${String(s.error)}`);
  return s.synthed;
}

/** The violations in the cloud assembly's validation report, as `<plugin>: <rule> <description> at <paths>`. */
function validationViolations(app: App): string[] {
  const assembly = app.synth(); // the assembly of the synth already done (cached)
  const path = join(assembly.directory, VALIDATION_REPORT_FILE);
  // The report is written only when a validation plugin ran: its presence shows validation was on.
  expect(existsSync(path), `${path} (CDK's built-in validation did not run)`).toBe(true);
  const report = JSON.parse(readFileSync(path, 'utf8')) as {
    pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string; description: string; severity?: string; violatingConstructs?: Array<{ constructPath?: string }> }> }>;
  };
  return report.pluginReports.flatMap((p) =>
    p.violations.map((v) => `${p.pluginName}: ${v.ruleName} (${v.severity}) ${v.description} at ${(v.violatingConstructs ?? []).map((c) => c.constructPath).join(', ')}`),
  );
}

/** Every acknowledgement recorded in construct metadata: where, which rule, why. */
function acknowledgements(s: SynthedStack): Array<{ path: string; id: string; reason: string }> {
  return s.app.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id: id.replace(/^annotation::/i, ''), reason }))),
  );
}

describe.each([
  ['the example config', 'example', EXAMPLE_ACKNOWLEDGED],
  ['a config with vpc, kms key and ERROR logging', 'full', FULL_ACKNOWLEDGED],
] as const)('%s', (_, name, expectedAcknowledged) => {
  it('synthesizes with CDK validation on, without throwing', () => {
    expect(stacks[name].error).toBeUndefined();
    expect(stacks[name].synthed).toBeDefined();
  });

  it("has no violation in CDK's built-in CloudFormation validation report and no error annotation", () => {
    const s = synthed(name);
    expect(validationViolations(s.app)).toEqual([]);
    expect(Annotations.fromStack(s.stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('has no cdk-nag AwsSolutions finding', () => {
    expect(nagFindings(synthed(name).app)).toEqual([]);
  });

  it('gives every acknowledged rule a reason of at least 40 characters', () => {
    const acks = acknowledgements(synthed(name));
    expect(acks.length).toBeGreaterThan(0);
    const short = acks.filter((a) => a.reason.trim().length < 40).map((a) => `${a.path} ${a.id}: ${JSON.stringify(a.reason)}`);
    expect(short).toEqual([]);
  });

  it('acknowledges exactly the expected rules, where expected', () => {
    const acknowledged = [...new Set(acknowledgements(synthed(name)).map((a) => `${a.path} ${a.id}`))].sort();
    expect(acknowledged).toEqual([...expectedAcknowledged].sort());
  });
});

it("CDK's built-in validation report names a violation when there is one (control)", () => {
  // The same reading as above on a stack with one wrongly typed property: the report must name it,
  // or the "no violation" tests above would prove nothing.
  const app = new App({ builtinCloudFormationValidation: true });
  new CfnResource(new Stack(app, 'ValidationControl'), 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'thirty' } });
  const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined); // it prints the report too
  try {
    expect(() => app.synth()).not.toThrow(); // downgraded to a warning: synth goes on
  } finally {
    quiet.mockRestore();
  }
  expect(validationViolations(app)).toEqual([expect.stringMatching(/^CloudFormation Validate: .*VisibilityTimeout.* at ValidationControl\/Queue$/)]);
});

it('reports AwsSolutions-IAM5 for an IAM policy with s3:* on * added to the stack (control)', () => {
  const s = synthStack();
  expect(nagFindings(s.app)).toEqual([]);
  const policy = new Policy(s.stack, 'NagControl', { statements: [new PolicyStatement({ actions: ['s3:*'], resources: ['*'] })] });
  const iam5 = nagFindings(s.app).filter((f) => f.rule.startsWith('AwsSolutions-IAM5'));
  expect(iam5.map((f) => f.rule).sort()).toEqual(['AwsSolutions-IAM5[Action::s3:*]', 'AwsSolutions-IAM5[Resource::*]']);
  for (const f of iam5) expect(f.path).toBe(`${policy.node.path}/Resource`);
});
