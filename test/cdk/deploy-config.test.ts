/**
 * The deployment config file (cdk/config/deploy-config.ts): what the example deploys, what the
 * functions read back from LOADPLANE_CONFIG, and every bad value named as `<key>: <reason>` on one line.
 */
import { RUNNER_PRICES } from '../../lambdas/core/runner-cost';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkDeployConfig,
  DeployConfigError,
  loadDeployConfig,
  MAX_SCHEDULE_GROUP_NAME_LENGTH,
  MAX_SCHEDULE_INPUT_BYTES,
  MAX_STACK_NAME_LENGTH,
  MAX_STATE_MACHINE_TIMEOUT_SECONDS,
  type DeployConfig,
} from '../../cdk/config/deploy-config';
import { rbacCommand } from '../../cdk/constructs/cluster-access';
import { DEFAULT_CONFIG, defaultMaxSpecBytes, loadConfig, namespaceNames } from '../../lambdas/core/config';
import { FINISH_PHASES_SECONDS, stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { MAX_SPEC_FIELDS_BYTES, validateSpec } from '../../lambdas/core/spec';
import { configDocument, EXAMPLE_CONFIG, EXAMPLE_SPEC_FILE } from '../support/deploy-fixtures';

const REPO = join(EXAMPLE_CONFIG, '..', '..', '..');

const dir = mkdtempSync(join(tmpdir(), 'loadplane-deploy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the functions parse from the LOADPLANE_CONFIG the stack sets (JSON.stringify(config.runtime)). */
const readBack = (config: DeployConfig) => loadConfig({ LOADPLANE_CONFIG: JSON.stringify(config.runtime) });

/** The problems of a config that must not load (fails the test if it loads or throws anything else). */
function problemsOf(document: unknown, baseDir = dir): string[] {
  let error: unknown;
  try {
    checkDeployConfig(document, 'test config', baseDir);
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(DeployConfigError);
  return (error as DeployConfigError).problems;
}

/** The problems of a document, or none when it loads. */
function problemsOrNone(document: unknown): string[] {
  try {
    checkDeployConfig(document, 'test config', dir);
    return [];
  } catch (err) {
    if (err instanceof DeployConfigError) return err.problems;
    throw err;
  }
}

const CLUSTERS = [{ name: 'perf', namespaces: ['loadtest'] }];
const k6Spec = (overrides: Record<string, unknown> = {}) => ({
  name: 'nightly',
  engine: 'k6',
  script: { inline: 'export default function () {}\n' },
  parallelism: 2,
  cluster: { name: 'perf', namespace: 'loadtest' },
  ...overrides,
});
const scheduled = (schedule: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  clusters: CLUSTERS,
  schedules: [{ name: 'nightly', expression: 'cron(0 2 * * ? *)', spec: k6Spec(), ...schedule }],
  ...extra,
});

describe('the example config', () => {
  const example = loadDeployConfig(EXAMPLE_CONFIG);

  it('loads, with its schedule spec read from the file next to it', () => {
    expect(example.stackName).toBe('loadplane');
    expect(example.clusters).toEqual([{ name: 'perf-cluster', namespaces: ['loadtest'] }]);
    expect(example.schedules).toHaveLength(1);
    const [nightly] = example.schedules;
    expect(nightly).toMatchObject({ name: 'nightly-smoke', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', enabled: true });
    expect(nightly!.spec).toMatchObject({ name: 'nightly-smoke', engine: 'k6', parallelism: 4, cluster: { name: 'perf-cluster', namespace: 'loadtest' } });
    // The spec as written is what the schedule sends; Admit checks it again with the same config.
    expect(validateSpec(nightly!.spec, example.runtime).ok).toBe(true);
  });

  it("loads where docs/deploy.md's configure step copies it: `cp examples/deploy/loadplane.config.yaml examples/deploy/nightly-smoke.yaml .`", () => {
    // The step as docs/deploy.md writes it ("1. Configure"), run from the repository root into a fresh directory.
    const commands = readFileSync(join(REPO, 'docs', 'deploy.md'), 'utf8')
      .split('\n')
      .filter((line) => /^cp examples\/deploy\//.test(line.trim()));
    expect(commands, 'docs/deploy.md names one `cp examples/deploy/…` step').toHaveLength(1);
    const [, ...args] = commands[0]!.trim().split(/\s+/);
    expect(args.at(-1), 'docs/deploy.md copies into the current directory').toBe('.');
    const sources = args.slice(0, -1);
    expect(sources).toEqual(['examples/deploy/loadplane.config.yaml', 'examples/deploy/nightly-smoke.yaml']);
    const project = mkdtempSync(join(dir, 'readme-deploy-'));
    for (const source of sources) copyFileSync(join(REPO, source), join(project, basename(source)));

    const copied = loadDeployConfig(join(project, 'loadplane.config.yaml'));
    expect(copied).toEqual(example);
    expect(copied.schedules.map((s) => s.name)).toEqual(['nightly-smoke']);

    // The spec file is part of the step: the config alone does not load, naming the file it misses.
    const configOnly = mkdtempSync(join(dir, 'config-only-'));
    copyFileSync(EXAMPLE_CONFIG, join(configOnly, 'loadplane.config.yaml'));
    let error: unknown;
    try {
      loadDeployConfig(join(configOnly, 'loadplane.config.yaml'));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DeployConfigError);
    expect((error as DeployConfigError).problems).toEqual([`schedules.0.specFile: cannot read ${join(configOnly, 'nightly-smoke.yaml')}: not found`]);
  });

  it('its runtime config is exactly what the functions parse back from LOADPLANE_CONFIG', () => {
    expect(readBack(example)).toEqual(example.runtime);
    expect(example.runtime).toMatchObject({
      allowedClusters: [{ name: 'perf-cluster', namespaces: ['loadtest'] }],
      allowedImagePrefixes: ['grafana/k6:', 'grafana/k6@'],
      defaultImages: { k6: 'grafana/k6:1.8.1' },
      maxParallelism: 100,
      maxRunDurationSeconds: 86_400,
      maxPrepareSeconds: 3_600,
      maxReadySeconds: 3_600,
      notify: { defaultChannels: [], secretPrefix: 'loadplane/notify/' },
    });
    // Limits the file does not name are the functions' defaults.
    expect(example.runtime.maxScriptBytes).toBe(DEFAULT_CONFIG.maxScriptBytes);
    expect(example.runtime.maxSpecBytes).toBe(defaultMaxSpecBytes(DEFAULT_CONFIG.maxScriptBytes));
    expect(example.runtime.maxArguments).toBe(DEFAULT_CONFIG.maxArguments);
  });
});

describe("clusters[].namespaces: the runners' service accounts", () => {
  it('a namespace by name stays as written (its default service account only); { name, serviceAccounts } reaches the functions, and specs are held to it', () => {
    const config = checkDeployConfig(
      configDocument({ clusters: [{ name: 'perf', namespaces: ['loadtest', { name: 'irsa', serviceAccounts: ['k6-s3-reader'] }] }] }),
      'test config',
      dir,
    );
    expect(config.runtime.allowedClusters).toEqual([{ name: 'perf', namespaces: ['loadtest', { name: 'irsa', serviceAccounts: ['k6-s3-reader'] }] }]);
    const runtime = readBack(config);
    expect(runtime).toEqual(config.runtime);
    const spec = (namespace: string, serviceAccountName?: string) =>
      validateSpec({ ...k6Spec(), cluster: { name: 'perf', namespace }, ...(serviceAccountName ? { runner: { serviceAccountName } } : {}) }, runtime);
    expect(spec('loadtest').ok).toBe(true);
    expect(spec('irsa', 'k6-s3-reader').ok).toBe(true);
    expect(spec('loadtest', 'k6-s3-reader')).toEqual({
      ok: false,
      problems: [
        {
          path: 'runner.serviceAccountName',
          message: 'service account "k6-s3-reader" is not allowed in cluster "perf", namespace "loadtest" (allowed service accounts: default)',
        },
      ],
    });
  });

  it('a schedule whose spec names a service account the namespace does not allow fails synth, naming the field', () => {
    const problems = problemsOf(
      configDocument({
        clusters: CLUSTERS,
        schedules: [
          {
            name: 'nightly',
            expression: 'rate(1 day)',
            spec: k6Spec({ cluster: { name: 'perf', namespace: 'loadtest' }, runner: { serviceAccountName: 'admin' } }),
          },
        ],
      }),
    );
    expect(problems).toEqual([
      'schedules.0.spec.runner.serviceAccountName: service account "admin" is not allowed in cluster "perf", namespace "loadtest" (allowed service accounts: default)',
    ]);
  });

  it("the stack output's RBAC command names the namespaces of either form", () => {
    expect(rbacCommand(namespaceNames({ name: 'perf', namespaces: ['loadtest', { name: 'irsa', serviceAccounts: ['k6'] }] }))).toBe(
      'npx loadplane rbac --namespace loadtest --namespace irsa | kubectl apply -f -',
    );
  });

  it('service accounts count in the function environment check', () => {
    const accounts = Array.from({ length: 40 }, (_, i) => `k6-runner-with-a-long-name-${i}`);
    expect(problemsOrNone({ clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest', serviceAccounts: accounts.slice(0, 10) }] }] })).toEqual([]);
    expect(problemsOf({ clusters: [{ name: 'perf', namespaces: ['a', 'b', 'c'].map((name) => ({ name, serviceAccounts: accounts })) }] })).toEqual([
      expect.stringMatching(
        /^clusters: the allow-lists \(clusters, namespaces, service accounts, images\.allowedPrefixes\) make a function's environment up to \d+ bytes, more than Lambda's 4096/,
      ),
    ]);
  });
});

describe('clusters in other regions and accounts', () => {
  const ROLE = 'arn:aws:iam::210987654321:role/loadplane-access';

  it('region, eksName and roleArn reach the functions only where set; the same EKS name in two regions is two clusters under two names', () => {
    const config = checkDeployConfig(
      configDocument({
        env: { region: 'eu-west-1' },
        clusters: [
          { name: 'perf', namespaces: ['loadtest'] },
          { name: 'perf-us', eksName: 'perf', region: 'us-east-1', namespaces: ['loadtest'] },
          { name: 'partner', region: 'eu-central-1', roleArn: ROLE, namespaces: ['loadtest'] },
          { name: 'same', eksName: 'same', region: 'eu-west-1', namespaces: ['loadtest'] },
        ],
      }),
      'test config',
      dir,
    );
    expect(config.runtime.allowedClusters).toEqual([
      { name: 'perf', namespaces: ['loadtest'] },
      { name: 'perf-us', eksName: 'perf', region: 'us-east-1', namespaces: ['loadtest'] },
      { name: 'partner', region: 'eu-central-1', roleArn: ROLE, namespaces: ['loadtest'] },
      // An eksName equal to the name says nothing: it is left out of the functions' config.
      { name: 'same', region: 'eu-west-1', namespaces: ['loadtest'] },
    ]);
    expect(readBack(config).allowedClusters).toEqual(config.runtime.allowedClusters);
  });

  it('every malformed region, role ARN and EKS name at once, each naming its field', () => {
    const problems = problemsOf({
      clusters: [
        { name: 'a', region: 'Frankfurt', namespaces: ['lt'] },
        { name: 'b', roleArn: 'arn:aws:iam::210987654321:user/alice', namespaces: ['lt'] },
        { name: 'c', eksName: 'bad name', region: 'eu-west', namespaces: ['lt'] },
      ],
    });
    expect(problems).toEqual([
      'clusters.0.region: must be an AWS region such as eu-west-1, got "Frankfurt"',
      'clusters.1.roleArn: must be an IAM role ARN (arn:<partition>:iam::<12-digit account>:role/<name>), got "arn:aws:iam::210987654321:user/alice"',
      'clusters.2.eksName: must be an EKS cluster name (letters, digits, - and _, at most 100)',
      'clusters.2.region: must be an AWS region such as eu-west-1, got "eu-west"',
    ]);
  });

  it('once every value is well formed, every placement problem at once: partitions, access entries it cannot create, one EKS cluster twice', () => {
    const problems = problemsOf({
      env: { region: 'eu-west-1' },
      clusters: [
        { name: 'd', region: 'cn-north-1', namespaces: ['lt'] },
        { name: 'e', roleArn: 'arn:aws-cn:iam::210987654321:role/lp', namespaces: ['lt'] },
        { name: 'f', region: 'us-east-1', accessEntry: true, namespaces: ['lt'] },
        { name: 'g', roleArn: ROLE, accessEntry: true, namespaces: ['lt'] },
        { name: 'h', eksName: 'f', region: 'us-east-1', namespaces: ['lt'] },
        { name: 'i', eksName: 'g', roleArn: ROLE, namespaces: ['lt'] },
      ],
    });
    expect(problems).toEqual([
      "clusters.0.region: is in partition aws-cn, but the stack's region eu-west-1 is in aws: the functions cannot reach another partition",
      "clusters.1.roleArn: is a role of partition aws-cn, but the cluster's region eu-west-1 is in aws",
      "clusters.2.accessEntry: cannot be true: the stack creates access entries only in its own account and region, and it is in us-east-1, not the stack's region eu-west-1 (leave accessEntry out; docs/deploy.md says what to create by hand)",
      'clusters.3.accessEntry: cannot be true: the stack creates access entries only in its own account and region, and the functions reach it as roleArn, which its own account maps (leave accessEntry out; docs/deploy.md says what to create by hand)',
      'clusters.4: is the same EKS cluster as clusters.2 ("f" in us-east-1, the stack\'s account)',
      'clusters.5: is the same EKS cluster as clusters.3 ("g" in eu-west-1, account 210987654321)',
    ]);
  });

  it('without env.region a cluster that names a region cannot be told to be the stack’s: accessEntry true is refused, saying so', () => {
    expect(problemsOf(configDocument({ clusters: [{ name: 'x', region: 'eu-west-1', accessEntry: true, namespaces: ['lt'] }] }))).toEqual([
      'clusters.0.accessEntry: cannot be true: the stack creates access entries only in its own account and region, and it names a region and env.region is not set, so the stack cannot tell it is its own (leave accessEntry out; docs/deploy.md says what to create by hand)',
    ]);
  });

  it('a config written before clusters had a place loads unchanged, with the same runtime config', () => {
    const config = checkDeployConfig(configDocument({ clusters: [{ name: 'perf', namespaces: ['loadtest'], accessEntry: false }] }), 'test config', dir);
    expect(config.runtime.allowedClusters).toEqual([{ name: 'perf', namespaces: ['loadtest'] }]);
  });
});

describe('defaults', () => {
  it('a config naming only its clusters gets every documented default', () => {
    const config = checkDeployConfig(configDocument(), 'test config', dir);
    expect(config.stackName).toBe('loadplane');
    expect(config.clusters).toEqual([{ name: 'perf', namespaces: ['loadtest'] }]);
    expect(config.logging).toEqual({ level: 'INFO', stateMachineLevel: 'ALL', retentionDays: 365 });
    expect(config.api).toEqual({ rateLimit: 10, burstLimit: 20, cloudWatchRole: true, allowedPrincipals: [] });
    expect(config.sweeper).toEqual({ everyMinutes: 5 });
    expect(config.images).toEqual({ allowedPrefixes: DEFAULT_CONFIG.allowedImagePrefixes, defaults: DEFAULT_CONFIG.defaultImages });
    expect(config.notify).toEqual({ defaultChannels: [], secretPrefix: DEFAULT_CONFIG.notify.secretPrefix, defaultPolicy: 'atMostOnce' });
    expect(config.schedules).toEqual([]);
    expect(config.env).toBeUndefined();
    expect(config.vpc).toBeUndefined();
    expect(config.runtime).toEqual({ ...DEFAULT_CONFIG, allowedClusters: [{ name: 'perf', namespaces: ['loadtest'] }] });
    expect(readBack(config)).toEqual(config.runtime);
  });

  it("limits.maxQueueSeconds: DEFAULT_CONFIG's 6 h when absent; a value set reaches the functions and the state machine's timeout", () => {
    const absent = checkDeployConfig(configDocument(), 'test config', dir);
    expect(absent.runtime.maxQueueSeconds).toBe(DEFAULT_CONFIG.maxQueueSeconds);
    expect(DEFAULT_CONFIG.maxQueueSeconds).toBe(6 * 60 * 60);
    const set = checkDeployConfig(configDocument({ limits: { maxQueueSeconds: 1800 } }), 'test config', dir);
    expect(set.runtime.maxQueueSeconds).toBe(1800);
    expect(readBack(set)).toEqual(set.runtime);
    expect(stateMachineTimeoutSeconds(absent.runtime) - stateMachineTimeoutSeconds(set.runtime)).toBe(DEFAULT_CONFIG.maxQueueSeconds - 1800);
  });

  it("runnerPrices and limits.maxRunCostUsd: EC2's prices and no cap when absent; fargate, the deployment's own prices and a cap reach the functions; a bad one names the key", () => {
    const absent = checkDeployConfig(configDocument(), 'test config', dir);
    expect(absent.runtime.runnerPrices).toEqual(RUNNER_PRICES.ec2);
    expect(absent.runtime.maxRunCostUsd).toBeUndefined();
    const fargate = checkDeployConfig(configDocument({ runnerPrices: 'fargate', limits: { maxRunCostUsd: 25 } }), 'test config', dir);
    expect(fargate.runtime).toMatchObject({ runnerPrices: RUNNER_PRICES.fargate, maxRunCostUsd: 25 });
    expect(readBack(fargate)).toEqual(fargate.runtime);
    const own = { vcpuHourUsd: 0.03, gibHourUsd: 0.004, source: 'our negotiated rate', read: '2026-11-01' };
    expect(checkDeployConfig(configDocument({ runnerPrices: own }), 'test config', dir).runtime.runnerPrices).toEqual(own);
    expect(problemsOf(configDocument({ runnerPrices: { ...own, read: 'last week' } }))).toEqual([expect.stringMatching(/^runnerPrices/)]);
    expect(problemsOf(configDocument({ limits: { maxRunCostUsd: -1 } }))).toEqual([expect.stringMatching(/^limits\.maxRunCostUsd/)]);
  });

  it("the year's check takes the queue limit in: the longest queue that fits loads, one second more does not", () => {
    const { maxPrepareSeconds, maxReadySeconds, maxRunDurationSeconds } = DEFAULT_CONFIG;
    const longest = MAX_STATE_MACHINE_TIMEOUT_SECONDS - maxPrepareSeconds - maxReadySeconds - maxRunDurationSeconds - FINISH_PHASES_SECONDS;
    const fits = checkDeployConfig(configDocument({ limits: { maxQueueSeconds: longest } }), 'test config', dir);
    expect(stateMachineTimeoutSeconds(fits.runtime)).toBe(MAX_STATE_MACHINE_TIMEOUT_SECONDS);
    expect(problemsOf(configDocument({ limits: { maxQueueSeconds: longest + 1 } }))).toEqual([
      expect.stringMatching(/^limits: maxQueueSeconds \(\d+\) .* more than a Standard workflow's year/),
    ]);
  });

  it('the longest stack name loads, and its schedule groups fit in 64 characters', () => {
    expect(MAX_STACK_NAME_LENGTH + '-api-schedules'.length).toBe(MAX_SCHEDULE_GROUP_NAME_LENGTH);
    expect(checkDeployConfig(configDocument({ stackName: `s${'x'.repeat(MAX_STACK_NAME_LENGTH - 1)}` }), 'test config', dir).stackName).toHaveLength(
      MAX_STACK_NAME_LENGTH,
    );
  });

  it("encryption: off unless asked (AWS's own keys); on, with or without an existing key's ARN (multi-Region ones too); the functions' config is the same either way", () => {
    const off = checkDeployConfig(configDocument(), 'test config', dir);
    expect(off.encryption).toEqual({ customerManagedKey: false });
    expect(loadDeployConfig(EXAMPLE_CONFIG).encryption).toEqual({ customerManagedKey: false });
    const on = checkDeployConfig(configDocument({ encryption: { customerManagedKey: true } }), 'test config', dir);
    expect(on.encryption).toEqual({ customerManagedKey: true });
    expect(on.runtime).toEqual(off.runtime);
    for (const keyArn of [
      'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      'arn:aws:kms:eu-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab',
    ]) {
      const existing = checkDeployConfig(
        configDocument({ env: { region: 'eu-west-1' }, encryption: { customerManagedKey: true, keyArn } }),
        'test config',
        dir,
      );
      expect(existing.encryption).toEqual({ customerManagedKey: true, keyArn });
    }
  });

  it('raising maxScriptBytes alone makes room in maxSpecBytes, as the functions would', () => {
    const config = checkDeployConfig(configDocument({ limits: { maxScriptBytes: 2_000_000 } }), 'test config', dir);
    expect(config.runtime.maxSpecBytes).toBe(defaultMaxSpecBytes(2_000_000));
    expect(config.runtime.maxSpecBytes).toBeGreaterThan(2_000_000);
    expect(readBack(config)).toEqual(config.runtime);
  });
});

describe('a config that cannot be deployed names each problem by key and reason', () => {
  mkdirSync(join(dir, 'specs'), { recursive: true });
  const oneCluster = { clusters: CLUSTERS };
  const cases: Array<{ what: string; document: unknown; key: string; reason: RegExp }> = [
    { what: 'missing clusters', document: {}, key: 'clusters', reason: /required/ },
    { what: 'an empty cluster list', document: { clusters: [] }, key: 'clusters', reason: /at least one cluster/ },
    {
      what: 'a cluster without namespaces',
      document: { clusters: [{ name: 'perf', namespaces: [] }] },
      key: 'clusters.0.namespaces',
      reason: /at least one namespace/,
    },
    {
      what: 'a bad namespace name',
      document: { clusters: [{ name: 'perf', namespaces: ['Load_Test'] }] },
      key: 'clusters.0.namespaces.0',
      reason: /Kubernetes namespace name/,
    },
    {
      what: 'a cluster named twice',
      document: {
        clusters: [
          { name: 'perf', namespaces: ['a'] },
          { name: 'perf', namespaces: ['b'] },
        ],
      },
      key: 'clusters.1.name',
      reason: /"perf" twice/,
    },
    { what: 'a bad cluster name', document: { clusters: [{ name: '-perf!', namespaces: ['a'] }] }, key: 'clusters.0.name', reason: /EKS cluster name/ },
    { what: 'an unknown top-level key', document: { ...oneCluster, cluster: 'perf' }, key: 'cluster', reason: /unknown key \(allowed: .*clusters/ },
    {
      what: 'an unknown nested key',
      document: { ...oneCluster, logging: { retention: 90 } },
      key: 'logging.retention',
      reason: /unknown key \(allowed: level, stateMachineLevel, retentionDays\)/,
    },
    { what: 'maxParallelism 0', document: { ...oneCluster, limits: { maxParallelism: 0 } }, key: 'limits.maxParallelism', reason: /more than 0/ },
    { what: 'maxParallelism -1', document: { ...oneCluster, limits: { maxParallelism: -1 } }, key: 'limits.maxParallelism', reason: /more than 0/ },
    { what: 'maxParallelism 1.5', document: { ...oneCluster, limits: { maxParallelism: 1.5 } }, key: 'limits.maxParallelism', reason: /whole number/ },
    {
      what: 'a limit as a string',
      document: { ...oneCluster, limits: { maxRunDurationSeconds: '1h' } },
      key: 'limits.maxRunDurationSeconds',
      reason: /expected a number, got a string \("1h"\)/,
    },
    {
      what: 'maxSpecBytes not above maxScriptBytes',
      document: { ...oneCluster, limits: { maxScriptBytes: 100_000, maxSpecBytes: 100_000 } },
      key: 'limits.maxSpecBytes',
      reason: /more than maxScriptBytes/,
    },
    {
      what: 'a bad VPC id',
      document: { ...oneCluster, vpc: { vpcId: 'vpc-xyz', subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: ['sg-0123456789abcdef0'] } },
      key: 'vpc.vpcId',
      reason: /VPC id/,
    },
    {
      what: 'a bad subnet id',
      document: { ...oneCluster, vpc: { vpcId: 'vpc-0123456789abcdef0', subnetIds: ['subnet-1'], securityGroupIds: ['sg-0123456789abcdef0'] } },
      key: 'vpc.subnetIds.0',
      reason: /subnet id/,
    },
    {
      what: 'a bad security group id',
      document: { ...oneCluster, vpc: { vpcId: 'vpc-0123456789abcdef0', subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: ['default'] } },
      key: 'vpc.securityGroupIds.0',
      reason: /security group id/,
    },
    {
      what: 'a KMS alias instead of a key ARN',
      document: { ...oneCluster, notify: { secretsKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:alias/notify' } },
      key: 'notify.secretsKmsKeyArn',
      reason: /KMS key ARN/,
    },
    { what: 'a bad alarm email', document: { ...oneCluster, alarms: { email: 'platform-team' } }, key: 'alarms.email', reason: /email address/ },
    {
      what: 'a bad log level',
      document: { ...oneCluster, logging: { level: 'TRACE' } },
      key: 'logging.level',
      reason: /one of "DEBUG", "INFO", "WARN", "ERROR", got a string \("TRACE"\)/,
    },
    {
      what: 'a state machine log level that hides failures',
      document: { ...oneCluster, logging: { stateMachineLevel: 'OFF' } },
      key: 'logging.stateMachineLevel',
      reason: /one of "ALL", "ERROR", "FATAL"/,
    },
    {
      what: 'retentionDays 42',
      document: { ...oneCluster, logging: { retentionDays: 42 } },
      key: 'logging.retentionDays',
      reason: /one of 1, 3, 5, .*90.*, got number 42/,
    },
    {
      what: 'a default channel the Notify stage cannot deliver to',
      document: { ...oneCluster, notify: { defaultChannels: ['platform'] } },
      key: 'notify.defaultChannels.0',
      reason: /channel name/,
    },
    {
      what: 'a default image outside the allow-list',
      document: { ...oneCluster, images: { allowedPrefixes: ['registry.example.com/k6:'] } },
      key: 'images.defaults.k6',
      reason: /"grafana\/k6:1\.8\.1" does not start with any of images\.allowedPrefixes/,
    },
    {
      what: 'a schedule with both spec and specFile',
      document: scheduled({ specFile: 'nightly.yaml' }),
      key: 'schedules.0',
      reason: /exactly one of spec and specFile/,
    },
    {
      what: 'a schedule with neither spec nor specFile',
      document: scheduled({ spec: undefined }),
      key: 'schedules.0',
      reason: /exactly one of spec and specFile/,
    },
    {
      what: 'a schedule spec above the parallelism limit',
      document: scheduled({ spec: k6Spec({ parallelism: 101 }) }),
      key: 'schedules.0.spec.parallelism',
      reason: /at most 100 \(maxParallelism\)/,
    },
    {
      what: 'a schedule spec above a lowered parallelism limit',
      document: scheduled({ spec: k6Spec({ parallelism: 5 }) }, { limits: { maxParallelism: 4 } }),
      key: 'schedules.0.spec.parallelism',
      reason: /at most 4 \(maxParallelism\)/,
    },
    {
      what: 'a schedule spec naming a cluster the config does not list',
      document: scheduled({ spec: k6Spec({ cluster: { name: 'prod', namespace: 'loadtest' } }) }),
      key: 'schedules.0.spec.cluster.name',
      reason: /"prod" is not on the allow-list \(allowed clusters: perf\)/,
    },
    {
      what: 'a schedule spec naming a namespace the cluster does not list',
      document: scheduled({ spec: k6Spec({ cluster: { name: 'perf', namespace: 'default' } }) }),
      key: 'schedules.0.spec.cluster.namespace',
      reason: /"default" is not allowed in cluster "perf"/,
    },
    {
      what: 'a missing spec file',
      document: scheduled({ spec: undefined, specFile: 'specs/nightly.yaml' }),
      key: 'schedules.0.specFile',
      reason: new RegExp(`cannot read ${join(dir, 'specs', 'nightly.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not found`),
    },
    {
      what: 'two schedules of one name',
      document: { ...oneCluster, schedules: [0, 1].map(() => ({ name: 'nightly', expression: 'rate(1 day)', spec: k6Spec() })) },
      key: 'schedules.1.name',
      reason: /"nightly" twice/,
    },
    // A schedule's runs take a slot in the concurrency group named after it: run name rules (runNameProblem).
    {
      what: 'a bad schedule name',
      document: scheduled({ name: 'Nightly' }),
      key: 'schedules.0.name',
      reason: /^must be lowercase letters, digits and '-', starting with a letter/,
    },
    { what: 'a schedule name ending in -', document: scheduled({ name: 'nightly-' }), key: 'schedules.0.name', reason: /ending with a letter or digit/ },
    { what: 'a schedule name with _', document: scheduled({ name: 'nightly_smoke' }), key: 'schedules.0.name', reason: /lowercase letters, digits and '-'/ },
    {
      what: 'a schedule name past 40 characters',
      document: scheduled({ name: `n${'x'.repeat(40)}` }),
      key: 'schedules.0.name',
      reason: /^must be at most 40 characters, got 41$/,
    },
    {
      what: 'an expression that is not cron/rate/at',
      document: scheduled({ expression: '0 2 * * *' }),
      key: 'schedules.0.expression',
      reason: /^must be cron\(.+\), rate\(.+\) or at\(.+\)$/,
    },
    {
      what: 'an unknown time zone',
      document: scheduled({ timeZone: 'Mars/Olympus' }),
      key: 'schedules.0.timeZone',
      reason: /"Mars\/Olympus" is not an IANA time zone/,
    },
    {
      what: 'a time zone in the wrong case',
      document: scheduled({ timeZone: 'europe/berlin' }),
      key: 'schedules.0.timeZone',
      reason: /must be written as the IANA database spells it, e\.g\. Europe\/Berlin$/,
    },
    { what: 'an alias in the wrong case', document: scheduled({ timeZone: 'us/eastern' }), key: 'schedules.0.timeZone', reason: /must be written as/ },
    { what: 'a cron with five fields', document: scheduled({ expression: 'cron(0 2 * * ?)' }), key: 'schedules.0.expression', reason: /six fields/ },
    {
      what: 'a cron without ?',
      document: scheduled({ expression: 'cron(0 2 * * * *)' }),
      key: 'schedules.0.expression',
      reason: /\? in exactly one of day-of-month and day-of-week/,
    },
    { what: 'a cron with ? twice', document: scheduled({ expression: 'cron(0 2 ? * ? *)' }), key: 'schedules.0.expression', reason: /\? in exactly one/ },
    { what: 'a rate of 0', document: scheduled({ expression: 'rate(0 minutes)' }), key: 'schedules.0.expression', reason: /at least 1/ },
    { what: 'a rate of 1 in the plural', document: scheduled({ expression: 'rate(1 hours)' }), key: 'schedules.0.expression', reason: /singular for 1 only/ },
    {
      what: 'a rate of 5 in the singular',
      document: scheduled({ expression: 'rate(5 minute)' }),
      key: 'schedules.0.expression',
      reason: /singular for 1 only/,
    },
    {
      what: 'an at() that is not a date-time',
      document: scheduled({ expression: 'at(tomorrow)' }),
      key: 'schedules.0.expression',
      reason: /at\(yyyy-mm-ddThh:mm:ss\)/,
    },
    {
      what: 'an API principal that is neither an account id nor an IAM role or user ARN',
      document: { ...oneCluster, api: { allowedPrincipals: ['210987654321', 'arn:aws:iam::210987654321:group/testers'] } },
      key: 'api.allowedPrincipals.1',
      reason: /^must be a 12-digit AWS account id or an IAM role or user ARN, got "arn:aws:iam::210987654321:group\/testers"$/,
    },
    {
      what: 'a stack name past 50 characters',
      document: { ...oneCluster, stackName: `s${'x'.repeat(50)}` },
      key: 'stackName',
      reason: /^must be at most 50 characters \(the API's schedule group is named <stackName>-api-schedules, at most 64\)$/,
    },
    {
      what: 'limits past a Standard workflow’s year',
      document: { ...oneCluster, limits: { maxRunDurationSeconds: 365 * 24 * 60 * 60 } },
      key: 'limits',
      reason:
        /^maxQueueSeconds \(21600\) \+ maxPrepareSeconds \(3600\) \+ maxReadySeconds \(3600\) \+ maxRunDurationSeconds \(31536000\) \+ the finish phases \(7200\) make the state machine's timeout 31572000 s, more than a Standard workflow's year \(31536000 s\): lower them$/,
    },
    {
      what: 'a queue limit that alone pushes runs past a year',
      document: { ...oneCluster, limits: { maxQueueSeconds: 365 * 24 * 60 * 60 - 3 * 3600 } },
      key: 'limits',
      reason: /^maxQueueSeconds \(31525200\) \+ .* more than a Standard workflow's year/,
    },
    {
      what: 'encryption.customerManagedKey as a string',
      document: { ...oneCluster, encryption: { customerManagedKey: 'yes' } },
      key: 'encryption.customerManagedKey',
      reason: /expected a boolean, got a string \("yes"\)/,
    },
    {
      what: 'an unknown key under encryption',
      document: { ...oneCluster, encryption: { kmsKey: true } },
      key: 'encryption.kmsKey',
      reason: /unknown key \(allowed: customerManagedKey, keyArn\)/,
    },
    {
      what: 'a KMS alias as encryption.keyArn',
      document: { ...oneCluster, encryption: { customerManagedKey: true, keyArn: 'arn:aws:kms:eu-west-1:123456789012:alias/loadplane' } },
      key: 'encryption.keyArn',
      reason: /KMS key ARN/,
    },
    {
      what: 'encryption.keyArn without customerManagedKey',
      document: { ...oneCluster, encryption: { keyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' } },
      key: 'encryption.keyArn',
      reason: /^needs encryption\.customerManagedKey: true/,
    },
    {
      what: "a key of another region than the stack's",
      document: {
        ...oneCluster,
        env: { region: 'us-east-1' },
        encryption: { customerManagedKey: true, keyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
      },
      key: 'encryption.keyArn',
      reason: /^is a key of eu-west-1, but the stack deploys to us-east-1 \(env\.region\)/,
    },
    { what: 'maxQueueSeconds 0', document: { ...oneCluster, limits: { maxQueueSeconds: 0 } }, key: 'limits.maxQueueSeconds', reason: /more than 0/ },
    {
      what: 'maxQueueSeconds as a string',
      document: { ...oneCluster, limits: { maxQueueSeconds: '6h' } },
      key: 'limits.maxQueueSeconds',
      reason: /expected a number, got a string \("6h"\)/,
    },
    {
      what: 'a namespace entry of another kind',
      document: { clusters: [{ name: 'perf', namespaces: [42] }] },
      key: 'clusters.0.namespaces.0',
      reason: /^must be a namespace name or \{ name, serviceAccounts \}, got number 42$/,
    },
    {
      what: 'a namespace entry without serviceAccounts',
      document: { clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest' }] }] },
      key: 'clusters.0.namespaces.0.serviceAccounts',
      reason: /^required \(a list\)$/,
    },
    {
      what: 'an empty serviceAccounts list',
      document: { clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest', serviceAccounts: [] }] }] },
      key: 'clusters.0.namespaces.0.serviceAccounts',
      reason: /^must name at least one service account$/,
    },
    {
      what: 'a service account name Kubernetes refuses',
      document: { clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest', serviceAccounts: ['K6_Runner'] }] }] },
      key: 'clusters.0.namespaces.0.serviceAccounts.0',
      reason: /^must be a Kubernetes service account name/,
    },
    {
      what: 'a service account named twice',
      document: { clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest', serviceAccounts: ['k6', 'k6'] }] }] },
      key: 'clusters.0.namespaces.0.serviceAccounts',
      reason: /^must not name a service account twice$/,
    },
    {
      what: 'a namespace named twice (once with service accounts)',
      document: { clusters: [{ name: 'perf', namespaces: ['loadtest', { name: 'loadtest', serviceAccounts: ['k6'] }] }] },
      key: 'clusters.0.namespaces.1',
      reason: /^names namespace "loadtest" twice$/,
    },
    {
      what: 'an unknown key in a namespace entry',
      document: { clusters: [{ name: 'perf', namespaces: [{ name: 'loadtest', serviceAccounts: ['k6'], roles: [] }] }] },
      key: 'clusters.0.namespaces.0.roles',
      reason: /^unknown key \(allowed: name, serviceAccounts\)$/,
    },
    {
      what: 'allow-lists past the 4 KB function environment',
      document: { clusters: Array.from({ length: 60 }, (_, i) => ({ name: `cluster-${i}`, namespaces: ['ns-a', 'ns-b', 'ns-c'] })) },
      key: 'clusters',
      reason: /make a function's environment up to \d+ bytes, more than Lambda's 4096/,
    },
  ];

  it.each(cases)('$what → $key', ({ document, key, reason }) => {
    const problems = problemsOf(document);
    expect(problems).toHaveLength(1);
    const [problem] = problems;
    expect(problem!.startsWith(`${key}: `), problem).toBe(true);
    expect(problem!.slice(key.length + 2)).toMatch(reason);
  });

  it.each([
    'cron(0 2 * * ? *)',
    'cron(0 18 ? * MON-FRI *)',
    'cron(0/5 8-17 ? * MON-FRI *)',
    'cron(15 10 ? * 6L 2027)',
    'cron(0 12 L * ? *)',
    'cron(0 9 ? * 2#1 *)',
    'cron(0 9 15W * ? *)',
    'rate(1 minute)',
    'rate(1 day)',
    'rate(15 minutes)',
    'rate(2 hours)',
    'at(2027-03-22T18:59:43)',
  ])('accepts the schedule expression %s', (expression) => {
    expect(problemsOrNone(scheduled({ expression }))).toEqual([]);
  });

  it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Calcutta', 'Etc/GMT+5', 'America/Port-au-Prince'])(
    'accepts the time zone %s',
    (timeZone) => {
      expect(problemsOrNone(scheduled({ timeZone }))).toEqual([]);
    },
  );

  it('the environment check measures as Lambda does (JSON of the variables): the largest allow-list that passes fits in 4 KB with the other variables at their longest, one more cluster does not', () => {
    const withClusters = (n: number) => ({ clusters: Array.from({ length: n }, (_, i) => ({ name: `cluster-${i}`, namespaces: ['ns-a', 'ns-b', 'ns-c'] })) });
    let n = 1;
    while (problemsOrNone(withClusters(n + 1)).length === 0) n++;
    const runtime = checkDeployConfig(withClusters(n), 'boundary').runtime;
    const environment = {
      POWERTOOLS_SERVICE_NAME: 'loadplane',
      POWERTOOLS_METRICS_NAMESPACE: 'loadplane',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      LOADPLANE_CONFIG: JSON.stringify(runtime),
      // A generated table name and the ARNs in the longest partition and region, as the API function has them.
      LOADPLANE_TABLE: `${'s'.repeat(MAX_STACK_NAME_LENGTH)}-LedgerTable0123456789AB-ABCDEFGHIJKL`,
      LOADPLANE_STATE_MACHINE_ARN: `arn:aws-us-gov:states:us-gov-west-1:123456789012:stateMachine:${'s'.repeat(MAX_STACK_NAME_LENGTH)}-run`,
      LOADPLANE_SCHEDULE_GROUP: `${'s'.repeat(MAX_STACK_NAME_LENGTH)}-api-schedules`,
      // Generated role (64) and queue (80) names at their longest.
      LOADPLANE_SCHEDULER_ROLE_ARN: `arn:aws-us-gov:iam::123456789012:role/${'r'.repeat(64)}`,
      LOADPLANE_SCHEDULE_DLQ_ARN: `arn:aws-us-gov:sqs:us-gov-west-1:123456789012:${'q'.repeat(80)}`,
    };
    expect(Buffer.byteLength(JSON.stringify(environment))).toBeLessThanOrEqual(4096);
    expect(problemsOf(withClusters(n + 1))).toEqual([expect.stringMatching(/^clusters: .* more than Lambda's 4096/)]);
    expect(n).toBeGreaterThanOrEqual(20);
  });

  it('lists every problem of a config, not just the first', () => {
    const problems = problemsOf({ clusters: [{ name: 'perf', namespaces: [] }], logging: { level: 'TRACE' }, alarms: { email: 'x' } });
    expect(problems.map((p) => p.split(': ')[0])).toEqual(['clusters.0.namespaces', 'logging.level', 'alarms.email']);
  });

  it('a schedule input over MAX_SCHEDULE_INPUT_BYTES as it travels (escaped) fails synth, though the spec itself is within its limits', () => {
    // The input travels as an escaped JSON string (the Scheduler target, the status-change event): a
    // script of quotes doubles twice. 60 000 quotes are ~120 KB in the spec's own JSON and ~240 KB escaped.
    const runtime = checkDeployConfig(configDocument({ clusters: CLUSTERS }), 'test config', dir).runtime;
    const quotes = k6Spec({ script: { inline: `// ${'"'.repeat(60_000)}\nexport default function () {}\n` } });
    expect(validateSpec(quotes, runtime).ok).toBe(true);
    const input = (spec: unknown) => JSON.stringify({ spec, schedule: { name: 'nightly', scheduledTime: '<aws.scheduler.scheduled-time>' } });
    expect(Buffer.byteLength(input(quotes))).toBeLessThan(MAX_SCHEDULE_INPUT_BYTES);

    const problems = problemsOf(scheduled({ spec: quotes }));
    expect(problems).toHaveLength(1);
    const match = /^schedules\.0\.spec: makes a schedule input of (\d+) bytes \(escaped\), more than (\d+): keep the script in a ConfigMap/.exec(problems[0]!);
    expect(match, problems[0]).not.toBeNull();
    expect(Number(match![1])).toBe(Buffer.byteLength(JSON.stringify(input(quotes))));
    expect(Number(match![2])).toBe(MAX_SCHEDULE_INPUT_BYTES);

    // As many plain characters fit; so does env that stays below the limit once escaped.
    const plain = k6Spec({ script: { inline: `// ${'y'.repeat(60_000)}\nexport default function () {}\n` } });
    expect(checkDeployConfig(scheduled({ spec: plain }), 'test config', dir).schedules[0]!.spec).toEqual(plain);
    // env within the spec's own limit (MAX_SPEC_FIELDS_BYTES) but over the schedule input's: refused too.
    const env = Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`PAYLOAD_${i}`, 'x'.repeat(45_000)]));
    const large = k6Spec({ env });
    expect(validateSpec(large, runtime).ok).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(env))).toBeLessThanOrEqual(MAX_SPEC_FIELDS_BYTES);
    expect(problemsOf(scheduled({ spec: large }))).toEqual([expect.stringMatching(/^schedules\.0\.spec: makes a schedule input of \d+ bytes \(escaped\)/)]);
  });

  it('a spec file that is not YAML names the file and line under specFile', () => {
    writeFileSync(join(dir, 'specs', 'broken.yaml'), 'name: nightly\nengine: [k6\n');
    const problems = problemsOf(scheduled({ spec: undefined, specFile: 'specs/broken.yaml' }));
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toMatch(/^schedules\.0\.specFile: specs\/broken\.yaml: line \d+, column \d+: /);
  });

  it('an error is one line per problem under one header line, without a stack trace', () => {
    let error: DeployConfigError | undefined;
    try {
      checkDeployConfig(
        {
          clusters: [
            { name: 'a\nb', namespaces: ['x'] },
            { name: 'a\nb', namespaces: ['x'] },
          ],
          'bad\nkey': 1,
        },
        'test config',
        dir,
      );
    } catch (err) {
      error = err as DeployConfigError;
    }
    expect(error).toBeInstanceOf(DeployConfigError);
    expect(error!.problems.length).toBeGreaterThanOrEqual(3);
    // Text from the file is escaped: a name with a line break cannot split a problem into two lines.
    expect(error!.problems).toContain('clusters.1.name: names "a\\nb" twice');
    expect(error!.problems.some((p) => p.startsWith('"bad\\nkey": unknown key'))).toBe(true);
    for (const problem of error!.problems) expect(problem).not.toMatch(/[\r\n]/);
    const lines = error!.message.split('\n');
    expect(lines[0]).toBe('test config is not a valid loadplane deployment config:');
    expect(lines.slice(1)).toEqual(error!.problems.map((p) => `  ${p}`));
    expect(error!.message).not.toMatch(/^\s+at /m);
  });
});

describe('loadDeployConfig', () => {
  it('a missing file: one problem, with the copy hint', () => {
    const path = join(dir, 'nope', 'loadplane.config.yaml');
    let error: unknown;
    try {
      loadDeployConfig(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DeployConfigError);
    expect((error as DeployConfigError).source).toBe(path);
    expect((error as DeployConfigError).problems).toHaveLength(1);
    expect((error as DeployConfigError).problems[0]).toMatch(/^\(file\): not found; copy examples\/deploy\/loadplane\.config\.yaml /);
  });

  it('a file that is not YAML: one problem on one line', () => {
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, 'clusters: [\n  - name: perf\n');
    let error: unknown;
    try {
      loadDeployConfig(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DeployConfigError);
    const { problems } = error as DeployConfigError;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^\(file\): not valid YAML or JSON: \S/);
    expect(problems[0]).not.toMatch(/\n/);
  });

  it('a JSON file works, its spec files resolved next to it', () => {
    const sub = join(dir, 'json-config');
    mkdirSync(sub, { recursive: true });
    copyFileSync(EXAMPLE_SPEC_FILE, join(sub, 'smoke.yaml'));
    const path = join(sub, 'loadplane.config.json');
    writeFileSync(
      path,
      JSON.stringify({
        stackName: 'loadplane-json',
        clusters: [{ name: 'perf-cluster', namespaces: ['loadtest'], accessEntry: false }],
        schedules: [{ name: 'smoke', expression: 'rate(1 day)', specFile: 'smoke.yaml', enabled: false }],
      }),
    );
    const config = loadDeployConfig(path);
    expect(config.stackName).toBe('loadplane-json');
    expect(config.clusters[0]!.accessEntry).toBe(false);
    expect(config.schedules).toEqual([
      { name: 'smoke', expression: 'rate(1 day)', timeZone: 'UTC', enabled: false, spec: expect.objectContaining({ name: 'nightly-smoke', parallelism: 4 }) },
    ]);
    expect(readBack(config)).toEqual(config.runtime);
  });
});

describe('any document', () => {
  it('is a config or a DeployConfigError of one-line `<key>: <reason>` problems, never another error', () => {
    const fuzzDir = join(dir, 'fuzz');
    mkdirSync(join(fuzzDir, 'a-directory'), { recursive: true });
    copyFileSync(EXAMPLE_SPEC_FILE, join(fuzzDir, 'smoke.yaml'));
    writeFileSync(join(fuzzDir, 'broken.yaml'), 'name: [x\n');
    writeFileSync(join(fuzzDir, 'list.yaml'), '- 1\n- 2\n');

    const text = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: fc.constantFrom('a', 'z', '0', '-', '_', '/', ':', '.', ' ', '\n', '"', '\\', '\u001b', '\u2028', 'é', '😀'), maxLength: 12 }),
      fc.constantFrom(
        'perf',
        'loadtest',
        'k6',
        'gatling',
        'UTC',
        'Europe/Berlin',
        'Mars/Olympus',
        'cron(0 2 * * ? *)',
        'rate(1 day)',
        'slack',
        'webhook-ops',
        'INFO',
        'ALL',
        'grafana/k6:1.8.1',
        '__proto__',
        'constructor',
      ),
    );
    const { value } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        fc.integer({ min: -3, max: 3_000_000 }),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(text, tie('value'), { maxKeys: 3 }),
      ),
    }));
    // Mostly deployable documents with a few keys replaced by anything (so every check is reached, and
    // most runs get past the first one), and some documents that are anything at all.
    const cluster = fc.record(
      {
        name: fc.constantFrom('perf', 'prod', 'perf_2'),
        namespaces: fc.array(fc.constantFrom('loadtest', 'default'), { minLength: 1, maxLength: 2 }),
        accessEntry: fc.boolean(),
      },
      { requiredKeys: ['name', 'namespaces'] },
    );
    const schedule = fc
      .record(
        {
          name: fc.constantFrom('nightly', 'hourly'),
          expression: fc.constantFrom('cron(0 2 * * ? *)', 'rate(1 hour)', 'at(2030-01-01T00:00:00)'),
          timeZone: fc.constantFrom('UTC', 'Europe/Berlin'),
          enabled: fc.boolean(),
          source: fc.oneof(
            fc.constant({ spec: k6Spec({ cluster: { name: 'perf', namespace: 'loadtest' } }) }),
            fc.constantFrom('smoke.yaml', 'missing.yaml', 'broken.yaml', 'list.yaml', 'a-directory').map((specFile) => ({ specFile })),
          ),
        },
        { requiredKeys: ['name', 'expression', 'source'] },
      )
      .map(({ source, ...rest }) => ({ ...rest, ...source }));
    const limitName = fc.constantFrom(
      'maxParallelism',
      'maxRunDurationSeconds',
      'maxPrepareSeconds',
      'maxReadySeconds',
      'maxQueueSeconds',
      'maxScriptBytes',
      'maxSpecBytes',
      'maxArguments',
      'maxArgumentBytes',
    );
    const deployable = fc.record(
      {
        stackName: fc.constantFrom('loadplane', 'lp-2'),
        env: fc.record({ account: fc.constant('123456789012'), region: fc.constantFrom('eu-west-1', 'us-east-1') }, { requiredKeys: [] }),
        clusters: fc
          .uniqueArray(cluster, { selector: (c) => c.name, maxLength: 2 })
          .map((more) => [{ name: 'perf', namespaces: ['loadtest'] }, ...more.filter((c) => c.name !== 'perf')]),
        vpc: fc.constant({ vpcId: 'vpc-0123456789abcdef0', subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: ['sg-0123456789abcdef0'] }),
        images: fc.constantFrom(
          { allowedPrefixes: ['grafana/k6:'] },
          { allowedPrefixes: ['registry.example.com/'], defaults: { k6: 'registry.example.com/k6:1' } },
          {},
        ),
        limits: fc.dictionary(limitName, fc.integer({ min: 1, max: 4_000_000 }), { maxKeys: 3 }),
        notify: fc.record(
          {
            defaultChannels: fc.array(fc.constantFrom('slack', 'webhook-ops'), { maxLength: 2 }),
            secretPrefix: fc.constantFrom('loadplane/', 'p/'),
            secretsKmsKeyArn: fc.constant('arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'),
          },
          { requiredKeys: [] },
        ),
        schedules: fc.uniqueArray(schedule, { selector: (s) => s.name, maxLength: 2 }),
        logging: fc.record(
          { level: fc.constantFrom('DEBUG', 'INFO'), stateMachineLevel: fc.constantFrom('ALL', 'ERROR'), retentionDays: fc.constantFrom(1, 90, 3653) },
          { requiredKeys: [] },
        ),
        api: fc.record({ rateLimit: fc.constantFrom(0.5, 10), burstLimit: fc.constantFrom(1, 20) }, { requiredKeys: [] }),
        sweeper: fc.record({ everyMinutes: fc.integer({ min: 1, max: 60 }) }, { requiredKeys: [] }),
        alarms: fc.record({ email: fc.constant('ops@example.com') }, { requiredKeys: [] }),
        encryption: fc.record({ customerManagedKey: fc.boolean() }, { requiredKeys: [] }),
      },
      { requiredKeys: ['clusters'] },
    );
    const keyPath = fc.constantFrom<PropertyKey[]>(
      ['stackName'],
      ['env'],
      ['env', 'region'],
      ['clusters'],
      ['clusters', 0],
      ['clusters', 0, 'name'],
      ['clusters', 0, 'namespaces'],
      ['clusters', 0, 'namespaces', 0],
      ['clusters', 1, 'name'],
      ['vpc'],
      ['vpc', 'subnetIds'],
      ['images'],
      ['images', 'allowedPrefixes'],
      ['images', 'defaults'],
      ['images', 'defaults', 'gatling'],
      ['limits'],
      ['limits', 'maxParallelism'],
      ['limits', 'maxScriptBytes'],
      ['limits', 'maxSpecBytes'],
      ['notify'],
      ['notify', 'defaultChannels', 0],
      ['notify', 'secretPrefix'],
      ['schedules'],
      ['schedules', 0],
      ['schedules', 0, 'name'],
      ['schedules', 0, 'timeZone'],
      ['schedules', 0, 'spec'],
      ['schedules', 0, 'spec', 'parallelism'],
      ['schedules', 0, 'spec', 'env'],
      ['schedules', 0, 'spec', 'script'],
      ['schedules', 0, 'spec', 'cluster'],
      ['schedules', 0, 'specFile'],
      ['schedules', 1, 'name'],
      ['logging', 'retentionDays'],
      ['api', 'rateLimit'],
      ['sweeper', 'everyMinutes'],
      ['alarms', 'email'],
      ['encryption'],
      ['encryption', 'keyArn'],
      ['extra'],
      ['__proto__'],
    );
    /** `doc` with the value at `path` replaced (parents created as needed; arrays and objects copied, never shared). */
    const withValue = (doc: unknown, path: readonly PropertyKey[], v: unknown): unknown => {
      if (path.length === 0) return v;
      const [head, ...rest] = path;
      const parent = (Array.isArray(doc) ? [...(doc as unknown[])] : typeof doc === 'object' && doc !== null ? { ...doc } : {}) as Record<PropertyKey, unknown>;
      // defineProperty, not assignment: `__proto__` becomes an own key, as a parsed YAML or JSON document has it.
      Object.defineProperty(parent, head!, {
        value: withValue(Object.hasOwn(parent, head!) ? parent[head!] : undefined, rest, v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return parent;
    };
    const mutated = fc
      .tuple(deployable, fc.array(fc.tuple(keyPath, value), { maxLength: 2 }))
      .map(([doc, edits]) => edits.reduce<unknown>((d, [path, v]) => withValue(d, path, v), doc));
    const document = fc.oneof({ weight: 1, arbitrary: value }, { weight: 6, arbitrary: mutated });

    let loaded = 0;
    let refused = 0;
    fc.assert(
      fc.property(document, (doc) => {
        let config: DeployConfig | undefined;
        let error: unknown;
        try {
          config = checkDeployConfig(doc, 'fuzz config', fuzzDir);
        } catch (err) {
          error = err;
        }
        if (config) {
          loaded++;
          expect(readBack(config)).toEqual(config.runtime);
          return;
        }
        refused++;
        expect(error).toBeInstanceOf(DeployConfigError);
        const { problems, message } = error as DeployConfigError;
        expect(problems.length).toBeGreaterThan(0);
        for (const problem of problems) expect(problem).toMatch(/^[^\r\n]+: [^\r\n]+$/);
        expect(message).not.toMatch(/^\s+at /m);
      }),
      { numRuns: 300, seed: 20_261_201 },
    );
    console.log(`fuzz: ${loaded} configs loaded, ${refused} refused`);
    // The generator reaches both outcomes (a fuzz that only ever fails at the first key proves little).
    expect(loaded).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
