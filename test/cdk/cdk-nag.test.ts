/**
 * cdk-nag's AwsSolutions checks and CDK's built-in CloudFormation validation: no finding, no
 * validation violation, and every acknowledged rule is a deliberate, explained one.
 *
 * Three stacks, each synthesized once: the full config's (test/support/deploy-fixtures.ts: every
 * option on) and the full config's with the deployment's customer-managed key
 * (fixtures/encrypted-config.ts: the key and its alias besides) with CDK's built-in validation, and
 * the example config's without it. Validation checks
 * each resource against its type's CloudFormation schema; the full stack has every resource type the
 * example has but the ones in EXAMPLE_ONLY_TYPES (checked below), so validating the example as well
 * would add time (about 1 s a stack once the schemas are loaded) and find nothing new. cdk-nag runs
 * on all three (their acknowledgements differ).
 *
 * How CDK's built-in validation reports (aws-cdk-lib 2.276): the plugin runs at synth and writes
 * `validation-report.json` into the cloud assembly; its violations are downgraded to warnings
 * unless the feature flag `@aws-cdk/core:validateAgainstDefaultRules` is set, so synth neither
 * throws nor adds annotations for them (the report and stderr are where they show). The tests read
 * the report. Construct errors (`Annotations.addError`) are annotations on the stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Policy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { FULL_CONFIG_DOCUMENT, nagFindings, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT } from './fixtures/encrypted-config';

const EXECUTIONS = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:loadplane-run:*]';
const CRUISE_EXECUTIONS = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:loadplane-cruise:*]';
const ANY_RESOURCE = 'AwsSolutions-IAM5[Resource::*]';
const API_SCHEDULES = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/loadplane-api-schedules/*]';
const API_GATEWAY_LOGS_POLICY = 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]';
const secrets = (prefix: string) => `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*]`;

/** Acknowledged in both stacks. */
const COMMON_ACKNOWLEDGED = [
  `loadplane/Run/Role ${ANY_RESOURCE}`,
  // The cruise windows the run machine runs as .sync child executions, named by Step Functions: it describes and stops them.
  `loadplane/Run/Role ${CRUISE_EXECUTIONS}`,
  `loadplane/Cruise/Role ${ANY_RESOURCE}`,
  'loadplane/Api/Api AwsSolutions-APIG2',
  'loadplane/Api/Api AwsSolutions-APIG3',
  'loadplane/Api/Api AwsSolutions-COG4',
  'loadplane/Reaper/DeadLetters AwsSolutions-SQS3',
  `loadplane/Reaper/Role ${ANY_RESOURCE}`,
  // The run machine's executions, named by run id: the sweeper stops and describes them, the reaper (stage role)
  // and the API (an execution already under a run's id) describe them.
  `loadplane/Sweeper/Role ${EXECUTIONS}`,
  `loadplane/Stages/Role ${EXECUTIONS}`,
  `loadplane/Api/Role ${EXECUTIONS}`,
  'loadplane/Schedules/DeadLetters AwsSolutions-SQS3',
  // The API's schedules, named by callers at run time: the API function manages its own group's only.
  `loadplane/Api/Role ${API_SCHEDULES}`,
  'loadplane/ApiSchedules/DeadLetters AwsSolutions-SQS3',
  'loadplane/Alarms/Topic AwsSolutions-SNS2',
  // X-Ray's write actions (no resource ARN) for the functions' active tracing: a policy of their own per
  // Lambda role (cdk/constructs/control-plane-function.ts, tracingPolicy), so no other statement of those roles may use Resource *.
  `loadplane/Stages/RoleTracing ${ANY_RESOURCE}`,
  `loadplane/Sweeper/RoleTracing ${ANY_RESOURCE}`,
  `loadplane/Api/RoleTracing ${ANY_RESOURCE}`,
];

/**
 * Every acknowledged rule, where: `<construct path> <rule id>`. A new acknowledgement fails this
 * test until it is added here, deliberately, with its reason read.
 */
const EXAMPLE_ACKNOWLEDGED = [
  ...COMMON_ACKNOWLEDGED,
  `loadplane/Stages/Role ${secrets('loadplane/notify/')}`,
  `loadplane/Sweeper/Role ${secrets('loadplane/notify/')}`,
  // api.cloudWatchRole: true (the default): API Gateway's account-level role with AWS's policy for it.
  `loadplane/Api/Api ${API_GATEWAY_LOGS_POLICY}`,
];
const FULL_ACKNOWLEDGED = [
  ...COMMON_ACKNOWLEDGED,
  // notify.secretPrefix: perf/channels/
  `loadplane/Stages/Role ${secrets('perf/channels/')}`,
  `loadplane/Sweeper/Role ${secrets('perf/channels/')}`,
  // Lambda's VPC network-interface actions (no resource ARN): a policy of their own on the roles of the
  // functions in the VPC, so no other statement of those roles may use Resource *.
  `loadplane/Stages/NetworkInterfaces ${ANY_RESOURCE}`,
  `loadplane/Sweeper/NetworkInterfaces ${ANY_RESOURCE}`,
  // The imported subnets carry no route table ids: nothing in the stack routes.
  'loadplane/FunctionPlacement @aws-cdk/aws-ec2:noSubnetRouteTableId',
  // logging.stateMachineLevel: ERROR
  'loadplane/Run/StateMachine AwsSolutions-SF1',
  'loadplane/Cruise/StateMachine AwsSolutions-SF1',
  // api.cloudWatchRole: false, so no account-level role and no IAM4 acknowledgement for its policy.
];
/** With the customer-managed key: the topic is encrypted with it, so SNS2 is fixed, not acknowledged; the key adds none. */
const ENCRYPTED_ACKNOWLEDGED = FULL_ACKNOWLEDGED.filter((a) => a !== 'loadplane/Alarms/Topic AwsSolutions-SNS2');

/**
 * Resource types of the example stack that the validated (full) stack does not have, each with why
 * leaving it unvalidated is acceptable. Any other type only the example has fails the test below.
 */
const EXAMPLE_ONLY_TYPES: Record<string, string> = {
  'AWS::ApiGateway::Account':
    "only with api.cloudWatchRole true (the full config sets it false); its one property, CloudWatchRoleArn, is the GetAtt of a role RestApi creates, which CDK's own construct writes",
};

const stacks: { full?: SynthedStack; fullError?: unknown; example?: SynthedStack; encrypted?: SynthedStack; encryptedError?: unknown } = {};

// The full stack with CDK's built-in validation on (its first use in the process loads the
// CloudFormation schemas: seconds, more on a loaded machine; the timeout only guards a hang).
beforeAll(() => {
  try {
    stacks.full = synthFromDocument(FULL_CONFIG_DOCUMENT, { validate: true });
  } catch (error) {
    stacks.fullError = error;
  }
  try {
    stacks.encrypted = synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT, { validate: true });
  } catch (error) {
    stacks.encryptedError = error;
  }
  stacks.example = synthStack();
}, 240_000);

function synthed(name: 'example' | 'full' | 'encrypted'): SynthedStack {
  const s = stacks[name];
  if (!s) throw new Error(`the ${name} stack did not synthesize: ${String(name === 'encrypted' ? stacks.encryptedError : stacks.fullError)}`);
  return s;
}

const resourceTypes = (s: SynthedStack) => new Set(Object.values(s.template.toJSON().Resources as Record<string, { Type: string }>).map((r) => r.Type));

/** The violations in the cloud assembly's validation report, as `<plugin>: <rule> <description> at <paths>`. */
function validationViolations(app: App): string[] {
  const assembly = app.synth(); // the assembly of the synth already done (cached)
  const path = join(assembly.directory, VALIDATION_REPORT_FILE);
  // The report is written only when a validation plugin ran: its presence shows validation was on.
  expect(existsSync(path), `${path} (CDK's built-in validation did not run)`).toBe(true);
  const report = JSON.parse(readFileSync(path, 'utf8')) as {
    pluginReports: Array<{
      pluginName: string;
      violations: Array<{ ruleName: string; description: string; severity?: string; violatingConstructs?: Array<{ constructPath?: string }> }>;
    }>;
  };
  return report.pluginReports.flatMap((p) =>
    p.violations.map(
      (v) => `${p.pluginName}: ${v.ruleName} (${v.severity}) ${v.description} at ${(v.violatingConstructs ?? []).map((c) => c.constructPath).join(', ')}`,
    ),
  );
}

/** Every acknowledgement recorded in construct metadata: where, which rule, why. */
function acknowledgements(s: SynthedStack): Array<{ path: string; id: string; reason: string }> {
  return s.app.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id: id.replace(/^annotation::/i, ''), reason })),
        ),
    );
}

describe("CDK's built-in CloudFormation validation (the full config's stack)", () => {
  it('reports no violation, and the stack has no error annotation', () => {
    const s = synthed('full');
    expect(validationViolations(s.app)).toEqual([]);
    expect(Annotations.fromStack(s.stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('covers every resource type of the example stack, but the listed ones (EXAMPLE_ONLY_TYPES)', () => {
    const validated = resourceTypes(synthed('full'));
    const example = resourceTypes(synthed('example'));
    expect([...example].filter((t) => !validated.has(t)).sort()).toEqual(Object.keys(EXAMPLE_ONLY_TYPES).sort());
  });

  it("reports no violation on the full config's stack with the customer-managed key either (the key, its alias, the encryption properties), nor an error annotation", () => {
    const s = synthed('encrypted');
    expect(resourceTypes(s).has('AWS::KMS::Key') && resourceTypes(s).has('AWS::KMS::Alias')).toBe(true);
    expect(validationViolations(s.app)).toEqual([]);
    expect(Annotations.fromStack(s.stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('the example stack has no error annotation either', () => {
    expect(Annotations.fromStack(synthed('example').stack).findError('*', Match.anyValue())).toEqual([]);
  });
});

describe.each([
  ['the example config', 'example', EXAMPLE_ACKNOWLEDGED],
  ['the full config (vpc, kms key, custom secret prefix, ERROR logging, no API Gateway CloudWatch role)', 'full', FULL_ACKNOWLEDGED],
  ['the full config with the customer-managed key (encryption.customerManagedKey)', 'encrypted', ENCRYPTED_ACKNOWLEDGED],
] as const)('cdk-nag on %s', (_, name, expectedAcknowledged) => {
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
  // or the "no violation" test above would prove nothing.
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

it('reports AwsSolutions-IAM5 for an IAM policy with s3:* on * (control)', () => {
  // A stack of one role: no finding. Its policy granting s3:* on *: exactly the two IAM5 findings, there.
  const app = new App();
  const stack = new Stack(app, 'NagControl');
  const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  expect(nagFindings(app)).toEqual([]);
  const policy = new Policy(stack, 'Policy', { roles: [role], statements: [new PolicyStatement({ actions: ['s3:*'], resources: ['*'] })] });
  const findings = nagFindings(app);
  expect(findings.map((f) => f.rule).sort()).toEqual(['AwsSolutions-IAM5[Action::s3:*]', 'AwsSolutions-IAM5[Resource::*]']);
  for (const f of findings) expect(f.path).toBe(`${policy.node.path}/Resource`);
});
