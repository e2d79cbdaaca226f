/**
 * AWS Control Tower's proactive controls (cfn-guard, @cdklabs/cdk-validator-cfnguard) on the example's
 * and a full config's synthesized templates, through the same plugin the app adds to every synth
 * (cdk/guard.ts): no finding left that is not acknowledged there with its reason. Before: 71 findings
 * on the example (log retention under 365 days and log groups without a customer key, 18 each; the
 * table's key; 16 Lambda permissions for a service without aws:SourceAccount; 15 functions outside a
 * VPC; 3 dead-letter queues without a dead-letter queue).
 *
 * The log groups' and the table's "no customer-managed key" findings are acknowledged only while the
 * config leaves encryption.customerManagedKey off: the full config with the key
 * (fixtures/encrypted-config.ts) must pass without them, and its acknowledgements fail a template
 * without the key.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { App, Stack, type IPolicyValidationContext, type IPolicyValidationContextBeta1 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { awsServiceGrantsOnlyStatement } from '../../cdk/constructs/encryption-key';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { GUARD_MIN_RETENTION_DAYS, guardAcknowledgements, withoutAcknowledged, type GuardAcknowledgement } from '../../cdk/guard';
import { FULL_CONFIG_DOCUMENT, synthFromDocument, synthStack, type SynthedStack } from '../support/cdk-stack';
import { configDocument } from '../support/deploy-fixtures';
import { ENCRYPTED_FULL_CONFIG_DOCUMENT, EXISTING_KEY_CONFIG_DOCUMENT } from './fixtures/encrypted-config';

const dir = mkdtempSync(join(tmpdir(), 'loadplane-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function templateFile(name: string, synthed: SynthedStack): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(synthed.template.toJSON()));
  return file;
}

/** What the plugins read of the context CDK hands them at synth: the template files. */
const context = (file: string) => ({ templatePaths: [file] }) as unknown as IPolicyValidationContext & IPolicyValidationContextBeta1;

type GuardReport = ReturnType<CfnGuardValidator['validate']>;
const reports = new Map<string, GuardReport>();
/**
 * cfn-guard with Control Tower's rules (the app's plugin's, cdk/guard.ts) on a template file: one pass
 * per distinct template (about 8 s each), however many tests judge it.
 */
function guardReport(file: string): GuardReport {
  const text = readFileSync(file, 'utf8');
  const known = reports.get(text);
  if (known)
    return {
      ...known,
      violations: known.violations.map((v) => ({ ...v, violatingResources: v.violatingResources.map((r) => ({ ...r, templatePath: file })) })),
    };
  const report = new CfnGuardValidator({ controlTowerRulesEnabled: true }).validate(context(file));
  reports.set(text, report);
  return report;
}

/** What the app's AcknowledgedCfnGuard plugin reports on a template file with these acknowledgements. */
const acknowledgedReport = (file: string, acknowledgements: readonly GuardAcknowledgement[]) =>
  withoutAcknowledged(guardReport(file) as Parameters<typeof withoutAcknowledged>[0], acknowledgements);

const findings = (report: { violations: { ruleName: string; violatingResources: { resourceLogicalId?: string }[] }[] }) =>
  report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.resourceLogicalId}`));

/** The rules of the "no customer-managed key" findings, acknowledged only without encryption.customerManagedKey. */
const KEY_RULES = ['cloudwatch_log_group_encrypted_check', 'dynamodb_table_encrypted_kms_check'];

describe.each([
  ['example config', () => synthStack()],
  ['full config', () => synthFromDocument(FULL_CONFIG_DOCUMENT)],
  ['full config with the customer-managed key', () => synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT)],
])("Control Tower's proactive controls (%s)", (name, synth) => {
  const synthed = synth();
  const file = templateFile(name.replace(/\W+/g, '-'), synthed);

  it('leave no finding that is not acknowledged with its reason', () => {
    const report = acknowledgedReport(file, guardAcknowledgements(synthed.config));
    expect(findings(report)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('what is acknowledged is only what the acknowledgements name: the rules, on those resource types', () => {
    const raw = guardReport(file);
    const rules = new Set(raw.violations.map((v) => v.ruleName));
    const acknowledged = guardAcknowledgements(synthed.config);
    for (const rule of rules)
      expect(
        acknowledged.map((a) => a.rule),
        rule,
      ).toContain(rule);
    // Fixed, not acknowledged: the dead-letter queues; and retention, unless the config chose less than 365 days (the full one keeps 30).
    expect(rules.has('sqs_dlq_check')).toBe(false);
    expect(rules.has('cloudwatch_log_group_retention_period_check')).toBe(synthed.config.logging.retentionDays < GUARD_MIN_RETENTION_DAYS);
    // The keys: acknowledged (and found) without the customer-managed key; with it, neither.
    const keyOn = synthed.config.encryption.customerManagedKey;
    for (const rule of KEY_RULES) {
      expect(rules.has(rule), rule).toBe(!keyOn);
      expect(
        acknowledged.some((a) => a.rule === rule),
        rule,
      ).toBe(!keyOn);
    }
    for (const a of acknowledged) expect(a.reason.length, a.rule).toBeGreaterThan(40);
  });
});

it('with encryption.customerManagedKey the no-customer-key acknowledgements are gone: a template without the key fails them, one naming an existing key passes', () => {
  const keyOn = synthFromDocument(ENCRYPTED_FULL_CONFIG_DOCUMENT).config;
  expect(
    guardAcknowledgements(keyOn)
      .map((a) => a.rule)
      .filter((r) => KEY_RULES.includes(r)),
  ).toEqual([]);
  // The full config's template (no key) judged with the key config's acknowledgements: both findings fail.
  const withoutKey = acknowledgedReport(templateFile('key-acknowledgements-strict', synthFromDocument(FULL_CONFIG_DOCUMENT)), guardAcknowledgements(keyOn));
  const failed = new Set(findings(withoutKey).map((f) => f.split(' ')[0]));
  expect(KEY_RULES.filter((r) => failed.has(r))).toEqual(KEY_RULES);
  expect(withoutKey.success).toBe(false);
  // An existing key (encryption.keyArn): its ARN on every resource passes the same rules.
  const existing = synthFromDocument(EXISTING_KEY_CONFIG_DOCUMENT);
  expect(findings(acknowledgedReport(templateFile('existing-key', existing), guardAcknowledgements(existing.config)))).toEqual([]);
});

it("the key's Deny of grants but for AWS resources is what CT.KMS.PR.3 asks for (control: a rotated key without it fails that rule only)", () => {
  const keyTemplate = (withStatement: boolean) => {
    const stack = new Stack(new App(), 'KeyControl');
    const key = new Key(stack, 'Key', { enableKeyRotation: true });
    if (withStatement) key.addToResourcePolicy(awsServiceGrantsOnlyStatement());
    return templateFile(`key-control-${withStatement}`, { template: Template.fromStack(stack) } as SynthedStack);
  };
  expect(findings(new CfnGuardValidator({}).validate(context(keyTemplate(true))))).toEqual([]);
  expect(findings(new CfnGuardValidator({}).validate(context(keyTemplate(false)))).map((f) => f.split(' ')[0])).toEqual(['kms_create_grant_aws_service_check']);
});

it('synthesized for a concrete account, every Lambda permission for a service passes CT.LAMBDA.PR.2 on its own (aws:SourceAccount is a literal)', () => {
  const synthed = synthStack(undefined, { env: { account: '123456789012', region: 'eu-west-1' } });
  const raw = guardReport(templateFile('concrete-account', synthed));
  expect(raw.violations.filter((v) => v.ruleName === 'lambda_function_public_access_prohibited_check')).toEqual([]);
  const permissions = Object.values(synthed.template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>).filter(
    (r) => r.Type === 'AWS::Lambda::Permission',
  );
  expect(permissions.length).toBeGreaterThan(0);
  for (const p of permissions) expect(p.Properties.SourceAccount).toBe('123456789012');
});

// Two synths and two cfn-guard passes: 30 s was not enough beside the whole suite and two CPU hogs.
it('a deployment that keeps logs under 365 days has that finding acknowledged, naming its setting; the default keeps 365', () => {
  const short = synthFromDocument(configDocument({ logging: { retentionDays: 30 } }));
  expect(short.config.logging.retentionDays).toBe(30);
  expect(synthStack().config.logging.retentionDays).toBe(GUARD_MIN_RETENTION_DAYS);
  const retention = guardAcknowledgements(short.config).find((a) => a.rule === 'cloudwatch_log_group_retention_period_check');
  expect(retention?.reason).toBe('The deployment config sets logging.retentionDays to 30 (the default is 365).');
  const file = templateFile('short-retention', short);
  expect(findings(acknowledgedReport(file, guardAcknowledgements(short.config)))).toEqual([]);
  // Without its acknowledgement, the same template fails.
  const strict = acknowledgedReport(file, guardAcknowledgements(synthStack().config));
  expect(findings(strict).filter((f) => f.startsWith('cloudwatch_log_group_retention_period_check')).length).toBeGreaterThan(0);
}, 120_000);
