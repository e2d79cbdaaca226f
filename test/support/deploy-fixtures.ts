/**
 * Deployment config documents for the CDK tests. No aws-cdk-lib here (only the config's types), so a
 * test that needs a document but no stack does not load the CDK (test/support/cdk-stack.ts does).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { DeployConfigInput } from '../../cdk/config/deploy-config';

/** The example deployment config (docs/deploy.md: copied next to cdk.json with the spec file it names). */
export const EXAMPLE_CONFIG = fileURLToPath(new URL('../../examples/deploy/loadplane.config.yaml', import.meta.url));
/** The schedule spec file the example config names (`specFile: nightly-smoke.yaml`). */
export const EXAMPLE_SPEC_FILE = fileURLToPath(new URL('../../examples/deploy/nightly-smoke.yaml', import.meta.url));

/** A small valid config document; override any key. */
export function configDocument(overrides: Partial<DeployConfigInput> = {}): DeployConfigInput {
  return { clusters: [{ name: 'perf', namespaces: ['loadtest'] }], ...overrides };
}

const exampleSpec = parseYaml(readFileSync(EXAMPLE_SPEC_FILE, 'utf8')) as Record<string, unknown>;

/** The role the full config's cluster of another account is reached through. */
export const FULL_CONFIG_CLUSTER_ROLE_ARN = 'arn:aws:iam::210987654321:role/loadplane-access';

export const FULL_CONFIG_KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/**
 * Every optional part of the deployment config switched on or away from its default: a VPC (two
 * subnets, two security groups), a KMS key and a prefix of its own for the channel secrets, a default
 * channel, at-least-once notification by default, four clusters (one with an access entry, one
 * without, one of another region under an alias of the first one's EKS name, one of another account
 * and region through a role), custom
 * limits, two schedules (one disabled), an alarm email, logging at WARN / ERROR for 30 days, API
 * throttling of its own without API Gateway's account-level CloudWatch role, a 15-minute sweep.
 * The one config the template, cdk-nag and IAM tests share besides the example.
 */
export const FULL_CONFIG_DOCUMENT: DeployConfigInput = configDocument({
  vpc: {
    vpcId: 'vpc-0123456789abcdef0',
    subnetIds: ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'],
    securityGroupIds: ['sg-0123456789abcdef0', 'sg-0fedcba9876543210'],
  },
  notify: { defaultChannels: ['slack-platform'], secretPrefix: 'perf/channels/', defaultPolicy: 'atLeastOnce', secretsKmsKeyArn: FULL_CONFIG_KMS_KEY_ARN },
  clusters: [
    { name: 'perf', namespaces: ['loadtest'] },
    { name: 'shared', namespaces: ['lt-a', 'lt-b'], accessEntry: false },
    { name: 'perf-us', eksName: 'perf', region: 'us-east-1', namespaces: ['loadtest'] },
    { name: 'partner', region: 'eu-central-1', roleArn: FULL_CONFIG_CLUSTER_ROLE_ARN, namespaces: ['loadtest'] },
  ],
  limits: { maxRunDurationSeconds: 7200, maxPrepareSeconds: 600, maxReadySeconds: 900 },
  schedules: [
    {
      name: 'nightly',
      expression: 'cron(0 2 * * ? *)',
      timeZone: 'Europe/Berlin',
      spec: { ...exampleSpec, name: 'nightly', cluster: { name: 'perf', namespace: 'loadtest' } },
    },
    {
      name: 'weekly',
      expression: 'rate(7 days)',
      enabled: false,
      spec: { ...exampleSpec, name: 'weekly', parallelism: 2, cluster: { name: 'shared', namespace: 'lt-b' } },
    },
  ],
  alarms: { email: 'platform-team@example.com' },
  logging: { level: 'WARN', stateMachineLevel: 'ERROR', retentionDays: 30 },
  api: { rateLimit: 5, burstLimit: 7, cloudWatchRole: false, allowedPrincipals: ['210987654321', 'arn:aws:iam::210987654321:role/ci-load-tests'] },
  sweeper: { everyMinutes: 15 },
});
