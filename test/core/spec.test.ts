import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { SpecInvalid } from '../../lambdas/core/errors';
import { assertValidSpec, MAX_SPEC_FIELDS_BYTES, parseSpecText, setupTeardownOf, validateSpec, type RunSpec } from '../../lambdas/core/spec';

const SCRIPT = "import http from 'k6/http';\nexport default function () { http.get(__ENV.TARGET_URL); }\n";
const KIB = 1024;

/** The default deployment, with the runner service account `k6-runner` allowed in kube-sim's `loadplane`. */
const K6_RUNNER_ALLOWED: DeploymentConfig = {
  ...DEFAULT_CONFIG,
  allowedClusters: [{ name: 'kube-sim', namespaces: [{ name: 'loadplane', serviceAccounts: ['k6-runner'] }] }],
};

/** The smallest valid spec; each invalid case changes one thing. */
function minimal(): Record<string, unknown> {
  return { name: 'smoke', engine: 'k6', script: { inline: SCRIPT }, parallelism: 1 };
}

function problemsOf(input: unknown, config: DeploymentConfig = DEFAULT_CONFIG) {
  const result = validateSpec(input, config);
  if (result.ok) throw new Error(`expected problems, the spec was valid: ${JSON.stringify(result.spec)}`);
  return result.problems;
}

function specOf(input: unknown, config: DeploymentConfig = DEFAULT_CONFIG): RunSpec {
  const result = validateSpec(input, config);
  if (!result.ok) throw new Error(`expected a valid spec, got ${JSON.stringify(result.problems)}`);
  return result.spec;
}

describe('validateSpec: valid specs', () => {
  it('applies every default to a minimal spec', () => {
    expect(specOf(minimal())).toEqual({
      name: 'smoke',
      engine: 'k6',
      script: { inline: SCRIPT, filename: 'script.js' },
      parallelism: 1,
      separate: false,
      arguments: [],
      env: {},
      runner: {
        image: 'grafana/k6:1.8.1',
        resources: { requests: {}, limits: {} },
        nodeSelector: {},
        tolerations: [],
        metadata: { labels: {}, annotations: {} },
      },
      cluster: { name: 'kube-sim', namespace: 'loadplane' },
      // total: prepare + ready + the longest test (maxRunDurationSeconds), so a 24 h test fits
      timeouts: { prepare: 600, ready: 600, total: 87_600 },
      notify: { channels: [], policy: 'atMostOnce' },
      cleanup: 'always',
      onRunnerRestart: 'fail',
      labels: {},
    });
  });

  it('round-trips a spec that sets every field (durations in seconds)', () => {
    const full: RunSpec = {
      name: 'checkout-peak-2',
      engine: 'k6',
      script: { inline: SCRIPT, filename: 'checkout.js' },
      parallelism: 100,
      separate: true,
      arguments: ['--tag', 'suite=checkout', '--no-connection-reuse'],
      env: { TARGET_URL: 'https://shop.example.com', _DEBUG: '1' },
      runner: {
        image: 'grafana/k6:1.8.1',
        resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } },
        nodeSelector: { 'node.kubernetes.io/instance-type': 'c7i.large' },
        tolerations: [
          { key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' },
          { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
        ],
        serviceAccountName: 'k6-runner',
        metadata: {
          labels: { team: 'payments' },
          annotations: { 'kube-sim.loadplane.io/exit-code': '99', 'example.com/note': 'any text: at all' },
        },
      },
      cluster: { name: 'kube-sim', namespace: 'loadplane' },
      timeouts: { prepare: 300, ready: 900, run: 3600, total: 7200 },
      notify: { channels: ['slack', 'webhook-oncall'], policy: 'atLeastOnce' },
      cleanup: 'onSuccess',
      onRunnerRestart: 'restart',
      setupTeardown: 'perRunner',
      labels: { team: 'payments', 'example.com/cost-center': 'cc-42' },
    };
    expect(specOf(full, K6_RUNNER_ALLOWED)).toEqual(full);
  });

  it('leaves kube-sim fault annotations untouched', () => {
    const annotations = {
      'kube-sim.loadplane.io/exit-code': '107',
      'kube-sim.loadplane.io/fault-runners': '0,2',
      'kube-sim.loadplane.io/schedule-delay': 'never',
    };
    const spec = specOf({ ...minimal(), runner: { metadata: { annotations } } });
    expect(spec.runner.metadata.annotations).toEqual(annotations);
  });

  it.each([
    ['90s', 90],
    ['10m', 600],
    ['1h30m', 5400],
    ['2h', 7200],
    ['1h0m5s', 3605],
    [45, 45],
  ])('parses the duration %j as %i seconds', (written, seconds) => {
    expect(specOf({ ...minimal(), timeouts: { run: written } }).timeouts.run).toBe(seconds);
  });

  it.each<[string, Record<string, unknown>, Record<string, number>]>([
    ['a 24 h test (the longest) with every other timeout defaulted', { run: '24h' }, { prepare: 600, ready: 600, run: 86_400, total: 87_600 }],
    ['the longest of every phase', { prepare: '1h', ready: '1h', run: '24h' }, { prepare: 3600, ready: 3600, run: 86_400, total: 93_600 }],
    ['the longest admissible total', { total: '26h' }, { prepare: 600, ready: 600, total: 93_600 }],
    ['a short test: the default total is its phases together', { prepare: '2m', ready: '3m', run: '5m' }, { prepare: 120, ready: 180, run: 300, total: 600 }],
    [
      'phases that exactly fill the given total',
      { prepare: '10m', ready: '10m', run: '40m', total: '1h' },
      { prepare: 600, ready: 600, run: 2400, total: 3600 },
    ],
  ])('timeouts: %s', (_label, timeouts, expected) => {
    expect(specOf({ ...minimal(), timeouts }).timeouts).toEqual(expected);
  });

  it("timeouts: the default prepare and ready never exceed a deployment's lower phase limits", () => {
    const config: DeploymentConfig = { ...DEFAULT_CONFIG, maxPrepareSeconds: 300, maxReadySeconds: 120, maxRunDurationSeconds: 3600 };
    expect(specOf(minimal(), config).timeouts).toEqual({ prepare: 300, ready: 120, total: 300 + 120 + 3600 });
  });

  it('accepts a gatling simulation from an existing ConfigMap, on the image it names', () => {
    const spec = specOf({
      name: 'gatling-cm',
      engine: 'gatling',
      script: { configMap: { name: 'sims', file: 'BasicSimulation.scala' } },
      parallelism: 2,
      runner: { image: 'ghcr.io/st-tech/gatling:latest' },
    });
    expect(spec.script).toEqual({ configMap: { name: 'sims', file: 'BasicSimulation.scala' } });
    expect(spec.runner.image).toBe('ghcr.io/st-tech/gatling:latest');
  });

  it('setupTeardown: k6 runs setup() and teardown() once per run unless told perRunner; a Gatling spec or another value is refused, naming the field', () => {
    expect(setupTeardownOf(specOf(minimal()))).toBe('perRun');
    expect(setupTeardownOf(specOf({ ...minimal(), setupTeardown: 'perRunner' }))).toBe('perRunner');
    expect(problemsOf({ ...minimal(), setupTeardown: 'once' })).toEqual([{ path: 'setupTeardown', message: expect.stringMatching(/perRun.*perRunner/) }]);
    const gatling = {
      name: 'ok',
      engine: 'gatling',
      script: { configMap: { name: 'sims', file: 'A.java' } },
      parallelism: 1,
      runner: { image: 'ghcr.io/st-tech/gatling:latest' },
    };
    expect(setupTeardownOf(specOf(gatling))).toBe('perRunner');
    expect(problemsOf({ ...gatling, setupTeardown: 'perRun' })).toEqual([
      { path: 'setupTeardown', message: "k6 only: Gatling's before/after hooks run in each runner's JVM; remove the field" },
    ]);
  });

  it('a gatling spec may not move loadplane’s folders or turn the report (its result) off, and hears it with every other problem', () => {
    const gatling = {
      name: 'BAD',
      engine: 'gatling',
      script: { configMap: { name: 'sims', file: 'A.java' } },
      parallelism: 1,
      runner: { image: 'ghcr.io/st-tech/gatling:latest' },
    };
    expect(problemsOf({ ...gatling, arguments: ['-s', 'A', '-nr', '--results-folder=/data'] }).map((p) => p.path)).toEqual([
      'name',
      'arguments.2',
      'arguments.3',
    ]);
    // …nor hide the result through its env, nor move the bundle's home; and Kotlin is not compiled by the bundle.
    expect(
      problemsOf({ ...gatling, name: 'ok', env: { GATLING_HOME: '/x', JAVA_OPTS: '-Xmx2g -Dgatling.charting.noReports=true' } }).map((p) => p.path),
    ).toEqual(['env.GATLING_HOME', 'env.JAVA_OPTS']);
    expect(specOf({ ...gatling, name: 'ok', env: { JAVA_OPTS: '-Xmx2g' } }).env).toEqual({ JAVA_OPTS: '-Xmx2g' });
    expect(problemsOf({ ...gatling, name: 'ok', script: { inline: 'class A', filename: 'A.kt' } }).map((p) => p.path)).toEqual(['script.filename']);
    expect(problemsOf({ ...gatling, name: 'ok', arguments: ['-nr'] })[0]!.message).toMatch(
      /^-nr is not allowed: Gatling prints the summary each runner's result is read from only while it generates its report/,
    );
  });

  it('a gatling spec without an image: required (there is no official Gatling image), unless the deployment names a default', () => {
    const gatling = { name: 'g', engine: 'gatling', script: { configMap: { name: 'sims', file: 'A.java' } }, parallelism: 1 };
    expect(problemsOf(gatling)).toEqual([
      {
        path: 'runner.image',
        message:
          "required for gatling: this deployment has no default gatling image; name one with gatling.sh on its PATH (st-tech/gatling-operator's runner image is the reference; pin a tag or digest), e.g. ghcr.io/st-tech/gatling:latest",
      },
    ]);
    const withDefault = { ...DEFAULT_CONFIG, defaultImages: { k6: 'grafana/k6:1.8.1', gatling: 'ghcr.io/st-tech/gatling:20260101' } };
    expect(specOf(gatling, withDefault).runner.image).toBe('ghcr.io/st-tech/gatling:20260101');
  });

  it('keeps resource quantities written as YAML numbers as strings', () => {
    const spec = specOf({ ...minimal(), runner: { resources: { limits: { cpu: 1, memory: 1073741824 } } } });
    expect(spec.runner.resources.limits).toEqual({ cpu: '1', memory: '1073741824' });
  });

  it('counts the script in UTF-8 bytes: exactly maxScriptBytes of 2-byte characters is allowed', () => {
    expect(specOf({ ...minimal(), script: { inline: 'é'.repeat(256 * KIB) } }).script).toMatchObject({
      inline: expect.any(String),
    });
  });

  it('uses the deployment config: its first cluster as default, its own limits', () => {
    const config: DeploymentConfig = {
      ...DEFAULT_CONFIG,
      allowedClusters: [
        { name: 'eks-load', namespaces: ['load-a', 'load-b'] },
        { name: 'eks-other', namespaces: ['x'] },
      ],
      maxParallelism: 10,
    };
    expect(specOf(minimal(), config).cluster).toEqual({ name: 'eks-load', namespace: 'load-a' });
    expect(specOf({ ...minimal(), cluster: { name: 'eks-other', namespace: 'x' } }, config).cluster?.name).toBe('eks-other');
    expect(problemsOf({ ...minimal(), parallelism: 11 }, config)).toEqual([{ path: 'parallelism', message: 'must be at most 10 (maxParallelism)' }]);
  });
});

describe("validateSpec: the runners' service account (a per-namespace allow-list)", () => {
  const config: DeploymentConfig = {
    ...DEFAULT_CONFIG,
    allowedClusters: [
      {
        name: 'eks-load',
        namespaces: ['plain', { name: 'irsa', serviceAccounts: ['default', 'k6-s3-reader'] }, { name: 'strict', serviceAccounts: ['k6-runner'] }],
      },
    ],
  };
  const at = (namespace: string, runner: Record<string, unknown> = {}) => ({ ...minimal(), cluster: { name: 'eks-load', namespace }, runner });

  it('a namespace given by name allows only its default service account: named, or not named at all', () => {
    expect(specOf(at('plain'), config).runner.serviceAccountName).toBeUndefined();
    expect(specOf(at('plain', { serviceAccountName: 'default' }), config).runner.serviceAccountName).toBe('default');
    expect(problemsOf(at('plain', { serviceAccountName: 'k6-s3-reader' }), config)).toEqual([
      {
        path: 'runner.serviceAccountName',
        message: 'service account "k6-s3-reader" is not allowed in cluster "eks-load", namespace "plain" (allowed service accounts: default)',
      },
    ]);
  });

  it('the default deployment allows only the default service account (a role-bearing account is refused)', () => {
    expect(problemsOf({ ...minimal(), runner: { serviceAccountName: 'k6-runner' } })).toEqual([
      {
        path: 'runner.serviceAccountName',
        message: 'service account "k6-runner" is not allowed in cluster "kube-sim", namespace "loadplane" (allowed service accounts: default)',
      },
    ]);
  });

  it('a namespace with serviceAccounts allows exactly those; without default listed, a spec must name one', () => {
    expect(specOf(at('irsa', { serviceAccountName: 'k6-s3-reader' }), config).runner.serviceAccountName).toBe('k6-s3-reader');
    expect(specOf(at('irsa'), config).runner.serviceAccountName).toBeUndefined();
    expect(specOf(at('strict', { serviceAccountName: 'k6-runner' }), config).runner.serviceAccountName).toBe('k6-runner');
    expect(problemsOf(at('strict'), config)).toEqual([
      {
        path: 'runner.serviceAccountName',
        message:
          'required here: the namespace\'s default service account, which runners get when none is named, is not allowed in cluster "eks-load", namespace "strict" (allowed service accounts: k6-runner)',
      },
    ]);
    expect(problemsOf(at('strict', { serviceAccountName: 'k6-s3-reader' }), config)).toEqual([
      {
        path: 'runner.serviceAccountName',
        message: 'service account "k6-s3-reader" is not allowed in cluster "eks-load", namespace "strict" (allowed service accounts: k6-runner)',
      },
    ]);
  });

  it('a namespace that is not allowed is the only problem named (no service account problem on top)', () => {
    expect(problemsOf(at('elsewhere', { serviceAccountName: 'k6-runner' }), config)).toEqual([
      { path: 'cluster.namespace', message: 'namespace "elsewhere" is not allowed in cluster "eks-load" (allowed namespaces: plain, irsa, strict)' },
    ]);
  });

  it("comes with the spec's other problems", () => {
    const problems = problemsOf({ ...at('strict', { serviceAccountName: 'other' }), parallelism: 0 }, config);
    expect(problems.map((p) => p.path).sort()).toEqual(['parallelism', 'runner.serviceAccountName']);
  });
});

describe('validateSpec: runner images from a private registry (ECR)', () => {
  const ECR = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
  const DIGEST = `sha256:${'ab12'.repeat(16)}`;
  const config: DeploymentConfig = {
    ...DEFAULT_CONFIG,
    allowedImagePrefixes: [`${ECR}/k6:`, `${ECR}/k6@`, `${ECR}/k6-influxdb:`],
    defaultImages: { k6: `${ECR}/k6:1.8.1` },
  };
  const withImage = (image: string) => ({ ...minimal(), runner: { image } });

  it("an ECR reference by tag or by digest is an image reference on the allow-list; the deployment default is ECR's", () => {
    expect(specOf(withImage(`${ECR}/k6:1.8.1`), config).runner.image).toBe(`${ECR}/k6:1.8.1`);
    expect(specOf(withImage(`${ECR}/k6@${DIGEST}`), config).runner.image).toBe(`${ECR}/k6@${DIGEST}`);
    expect(specOf(withImage(`${ECR}/k6-influxdb:1.8.1`), config).runner.image).toBe(`${ECR}/k6-influxdb:1.8.1`);
    expect(specOf(minimal(), config).runner.image).toBe(`${ECR}/k6:1.8.1`);
  });

  it('another repository, account or region of ECR, or grafana/k6 itself, is refused with the allowed prefixes', () => {
    const allowed = `(allowed prefixes: ${ECR}/k6:, ${ECR}/k6@, ${ECR}/k6-influxdb:)`;
    for (const image of [
      `${ECR}/k6-evil:1.8.1`,
      `210987654321.dkr.ecr.eu-west-1.amazonaws.com/k6:1.8.1`,
      '123456789012.dkr.ecr.us-east-1.amazonaws.com/k6:1.8.1',
      'grafana/k6:1.8.1',
    ]) {
      expect(problemsOf(withImage(image), config)).toEqual([{ path: 'runner.image', message: expect.stringMatching(/ is not on the allow-list /) }]);
      expect(problemsOf(withImage(image), config)[0]!.message.endsWith(allowed)).toBe(true);
    }
  });

  it('a digest that is not sha256 and 64 hex digits is not an image reference', () => {
    expect(problemsOf(withImage(`${ECR}/k6@sha256:abc`), config)).toEqual([
      { path: 'runner.image', message: expect.stringMatching(/^must be an image reference like /) },
    ]);
  });
});

interface InvalidCase {
  title: string;
  change: (spec: Record<string, unknown>) => void;
  path: string;
  /** Text the message must contain (the rule or limit). */
  message: string;
}

const invalid: InvalidCase[] = [
  { title: 'missing name', change: (s) => delete s.name, path: 'name', message: 'required' },
  { title: 'uppercase name', change: (s) => (s.name = 'Smoke'), path: 'name', message: 'must be lowercase letters' },
  { title: 'name ending in -', change: (s) => (s.name = 'smoke-'), path: 'name', message: 'ending with a letter or digit' },
  { title: 'name of 41 characters', change: (s) => (s.name = 'a'.repeat(41)), path: 'name', message: 'must be at most 40 characters, got 41' },
  { title: 'parallelism 0', change: (s) => (s.parallelism = 0), path: 'parallelism', message: 'must be at least 1' },
  { title: 'parallelism 101', change: (s) => (s.parallelism = 101), path: 'parallelism', message: 'must be at most 100 (maxParallelism)' },
  { title: 'non-integer parallelism', change: (s) => (s.parallelism = 2.5), path: 'parallelism', message: 'must be a whole number, got 2.5' },
  { title: 'parallelism as text', change: (s) => (s.parallelism = '4'), path: 'parallelism', message: 'expected a number, got a string' },
  { title: 'unknown engine', change: (s) => (s.engine = 'jmeter'), path: 'engine', message: 'must be one of k6, gatling; got "jmeter"' },
  {
    title: 'script of 512 KiB + 1 byte',
    change: (s) => (s.script = { inline: 'x'.repeat(512 * KIB + 1) }),
    path: 'script.inline',
    message: 'must be at most 524288 bytes (maxScriptBytes), got 524289',
  },
  {
    title: 'script under the limit in characters, over it in UTF-8 bytes',
    change: (s) => (s.script = { inline: 'é'.repeat(256 * KIB + 1) }),
    path: 'script.inline',
    message: 'must be at most 524288 bytes (maxScriptBytes), got 524290',
  },
  { title: 'empty script', change: (s) => (s.script = { inline: '' }), path: 'script.inline', message: 'must not be empty' },
  {
    title: 'both inline and configMap',
    change: (s) => (s.script = { inline: SCRIPT, configMap: { name: 'scripts', file: 'test.js' } }),
    path: 'script',
    message: 'set exactly one of script.inline or script.configMap, not both',
  },
  { title: 'neither inline nor configMap', change: (s) => (s.script = {}), path: 'script', message: 'set exactly one of script.inline' },
  {
    title: 'filename beside a configMap',
    change: (s) => (s.script = { configMap: { name: 'scripts', file: 'test.js' }, filename: 'x.js' }),
    path: 'script.filename',
    message: 'applies only to script.inline',
  },
  {
    title: 'k6 script named like a simulation',
    change: (s) => (s.script = { inline: SCRIPT, filename: 'Basic.java' }),
    path: 'script.filename',
    message: 'script file name like script.js',
  },
  {
    title: 'gatling inline script without a file name',
    change: (s) => Object.assign(s, { engine: 'gatling', script: { inline: 'public class A {}' } }),
    path: 'script.filename',
    message: 'required for gatling',
  },
  {
    title: 'configMap name that is not a Kubernetes name',
    change: (s) => (s.script = { configMap: { name: 'My_Scripts', file: 'test.js' } }),
    path: 'script.configMap.name',
    message: 'must be a Kubernetes name',
  },
  {
    title: 'image outside the allow-list',
    change: (s) => (s.runner = { image: 'evil/x:1' }),
    path: 'runner.image',
    message: 'image "evil/x:1" is not on the allow-list (allowed prefixes: grafana/k6:, grafana/k6@, ghcr.io/st-tech/gatling:, ghcr.io/st-tech/gatling@)',
  },
  {
    title: 'malformed image reference',
    change: (s) => (s.runner = { image: 'loadplane/k6 runner' }),
    path: 'runner.image',
    message: 'must be an image reference',
  },
  {
    title: 'cluster not allowed',
    change: (s) => (s.cluster = { name: 'prod-eks', namespace: 'loadplane' }),
    path: 'cluster.name',
    message: 'cluster "prod-eks" is not on the allow-list (allowed clusters: kube-sim)',
  },
  {
    title: 'namespace not allowed',
    change: (s) => (s.cluster = { name: 'kube-sim', namespace: 'kube-system' }),
    path: 'cluster.namespace',
    message: 'namespace "kube-system" is not allowed in cluster "kube-sim" (allowed namespaces: loadplane)',
  },
  { title: 'cluster without namespace', change: (s) => (s.cluster = { name: 'kube-sim' }), path: 'cluster.namespace', message: 'required' },
  ...(['-5m', '10x', '1.5h', 'm', '', '90', 1.5, true] as const).map((written): InvalidCase => ({
    title: `malformed duration ${JSON.stringify(written)}`,
    change: (s) => (s.timeouts = { prepare: written }),
    path: 'timeouts.prepare',
    message: 'must be a duration like 90s, 10m, 1h30m or a whole number of seconds',
  })),
  ...(['0s', '0m', 0, -5] as const).map((written): InvalidCase => ({
    title: `zero or negative duration ${JSON.stringify(written)}`,
    change: (s) => (s.timeouts = { ready: written }),
    path: 'timeouts.ready',
    message: 'must be greater than zero (a duration like 90s',
  })),
  {
    title: 'prepare above maxPrepareSeconds',
    change: (s) => (s.timeouts = { prepare: '1h1m' }),
    path: 'timeouts.prepare',
    message: 'must be at most 1h (maxPrepareSeconds), got 1h1m',
  },
  {
    title: 'ready above maxReadySeconds',
    change: (s) => (s.timeouts = { ready: '2h' }),
    path: 'timeouts.ready',
    message: 'must be at most 1h (maxReadySeconds), got 2h',
  },
  {
    title: 'run above maxRunDurationSeconds',
    change: (s) => (s.timeouts = { run: '25h' }),
    path: 'timeouts.run',
    message: 'must be at most 24h (maxRunDurationSeconds), got 25h',
  },
  {
    title: 'total above the longest admissible total',
    change: (s) => (s.timeouts = { total: '27h' }),
    path: 'timeouts.total',
    message: 'must be at most 26h (maxPrepareSeconds + maxReadySeconds + maxRunDurationSeconds), got 27h',
  },
  {
    title: 'phases longer than the given total',
    change: (s) => (s.timeouts = { run: '50m', total: '1h' }),
    path: 'timeouts.total',
    message: 'prepare (10m) + ready (10m) + run (50m) = 1h10m must not exceed total (1h)',
  },
  {
    title: 'a 24 h test with a 24 h total: the phases before it do not fit',
    change: (s) => (s.timeouts = { run: '24h', total: '24h' }),
    path: 'timeouts.total',
    message: 'prepare (10m) + ready (10m) + run (24h) = 24h20m must not exceed total (24h)',
  },
  {
    title: 'unknown timeout',
    change: (s) => (s.timeouts = { setup: '1m' }),
    path: 'timeouts.setup',
    message: 'unknown field (allowed: prepare, ready, run, total)',
  },
  {
    title: 'reserved env var',
    change: (s) => (s.env = { LOADPLANE_START_AT: 'now' }),
    path: 'env.LOADPLANE_START_AT',
    message: 'is reserved (the LOADPLANE_ prefix',
  },
  { title: 'env name with a dash', change: (s) => (s.env = { 'TARGET-URL': 'x' }), path: 'env.TARGET-URL', message: 'must match [A-Za-z_][A-Za-z0-9_]*' },
  {
    title: 'env value that is a YAML number',
    change: (s) => (s.env = { VUS: 10 }),
    path: 'env.VUS',
    message: 'expected a string, got number 10 (quote it in YAML)',
  },
  {
    title: 'reserved label loadplane.io/*',
    change: (s) => (s.labels = { 'loadplane.io/run-id': 'other' }),
    path: 'labels.loadplane.io/run-id',
    message: 'is reserved for loadplane',
  },
  {
    title: 'reserved label app.kubernetes.io/managed-by',
    change: (s) => (s.labels = { 'app.kubernetes.io/managed-by': 'me' }),
    path: 'labels.app.kubernetes.io/managed-by',
    message: 'is reserved for loadplane',
  },
  {
    title: 'reserved label on runner pods',
    change: (s) => (s.runner = { metadata: { labels: { 'loadplane.io/role': 'runner' } } }),
    path: 'runner.metadata.labels.loadplane.io/role',
    message: 'is reserved for loadplane',
  },
  {
    title: 'label value with a space',
    change: (s) => (s.labels = { team: 'load team' }),
    path: 'labels.team',
    message: 'Kubernetes label value',
  },
  {
    title: 'label key name part over 63 characters',
    change: (s) => (s.labels = { [`example.com/${'a'.repeat(64)}`]: 'x' }),
    // Path segments are user input: cut at 40 characters.
    path: `labels.example.com/${'a'.repeat(28)}…`,
    message: 'name part must be at most 63 characters, got 64',
  },
  {
    title: '33 labels',
    change: (s) => (s.labels = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`l${i}`, 'v']))),
    path: 'labels',
    message: 'must have at most 32 entries, got 33',
  },
  {
    title: 'annotation key with a space',
    change: (s) => (s.runner = { metadata: { annotations: { 'bad key': 'x' } } }),
    path: 'runner.metadata.annotations.bad key',
    message: 'name part must be letters, digits',
  },
  {
    title: 'unknown top-level field',
    change: (s) => (s.paralellism = 4),
    path: 'paralellism',
    message: 'unknown field (allowed: name, engine, script, parallelism,',
  },
  { title: 'unknown runner field', change: (s) => (s.runner = { imag: 'grafana/k6:1' }), path: 'runner.imag', message: 'unknown field' },
  {
    title: '257 arguments',
    change: (s) => (s.arguments = Array.from({ length: 257 }, () => '-q')),
    path: 'arguments',
    message: 'must have at most 256 entries (maxArguments), got 257',
  },
  {
    title: 'arguments over 64 KiB in total',
    change: (s) => (s.arguments = ['--tag', `big=${'x'.repeat(64 * KIB)}`]),
    path: 'arguments',
    message: `must be at most ${64 * KIB} bytes in total (maxArgumentBytes), got ${64 * KIB + 9}`,
  },
  {
    title: 'an argument loadplane sets itself (execution segments)',
    change: (s) => (s.arguments = ['--tag', 'x=y', '--execution-segment=0:1/2']),
    path: 'arguments.2',
    message: '--execution-segment is set by loadplane for each runner',
  },
  {
    title: 'an argument loadplane sets itself (paused)',
    change: (s) => (s.arguments = ['--paused']),
    path: 'arguments.0',
    message: '--paused is set by loadplane',
  },
  {
    title: 'a k6 argument that suppresses the summary export (no summary)',
    change: (s) => (s.arguments = ['--vus', '2', '--no-summary']),
    path: 'arguments.2',
    message: "--no-summary is not allowed: k6 would write no summary export, and each runner's result is read from it",
  },
  {
    title: 'a k6 argument that suppresses the summary export (summary mode disabled, as two entries)',
    change: (s) => (s.arguments = ['--summary-mode', 'disabled']),
    path: 'arguments.0',
    message: '--summary-mode=disabled is not allowed',
  },
  {
    title: 'a k6 env setting that suppresses the summary export (k6 reads it when the flag is absent)',
    change: (s) => (s.env = { K6_SUMMARY_MODE: 'disabled' }),
    path: 'env.K6_SUMMARY_MODE',
    message: 'K6_SUMMARY_MODE=disabled is not allowed',
  },
  {
    title: 'a k6 argument that reshapes the summary export',
    change: (s) => (s.arguments = ['--new-machine-readable-summary']),
    path: 'arguments.0',
    message: '--new-machine-readable-summary is not allowed: k6 would write its new summary shape',
  },
  { title: 'argument with a NUL byte', change: (s) => (s.arguments = ['--tag', 'a\0b']), path: 'arguments.1', message: 'must not contain NUL bytes' },
  {
    title: 'arguments as one shell string',
    change: (s) => (s.arguments = '--vus 10 --duration 30s'),
    path: 'arguments',
    message: 'expected a list, got a string',
  },
  {
    title: 'resource quantity that is not one',
    change: (s) => (s.runner = { resources: { limits: { memory: '1 GB' } } }),
    path: 'runner.resources.limits.memory',
    message: 'must be a Kubernetes quantity',
  },
  {
    title: "toleration with a value under operator 'Exists'",
    change: (s) => (s.runner = { tolerations: [{ key: 'dedicated', operator: 'Exists', value: 'load' }] }),
    path: 'runner.tolerations.0.value',
    message: "must be empty when operator is 'Exists'",
  },
  { title: 'unknown notify channel kind', change: (s) => (s.notify = { channels: ['email'] }), path: 'notify.channels.0', message: 'must be a channel name' },
  { title: 'duplicate notify channel', change: (s) => (s.notify = { channels: ['slack', 'slack'] }), path: 'notify.channels', message: 'lists "slack" twice' },
  {
    title: 'unknown notify policy',
    change: (s) => (s.notify = { policy: 'exactlyOnce' }),
    path: 'notify.policy',
    message: 'must be one of atMostOnce, atLeastOnce; got "exactlyOnce"',
  },
  { title: 'unknown cleanup policy', change: (s) => (s.cleanup = 'sometimes'), path: 'cleanup', message: 'must be one of always, onSuccess, never' },
  { title: 'separate as text', change: (s) => (s.separate = 'yes'), path: 'separate', message: 'expected true or false, got a string' },
];

describe('validateSpec: one problem per invalid field, naming the rule or limit', () => {
  it.each(invalid)('$title → $path', ({ change, path, message }) => {
    const spec = minimal();
    change(spec);
    const problems = problemsOf(spec);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe(path);
    expect(problems[0]!.message).toContain(message);
  });

  it('returns every problem, not the first one', () => {
    const problems = problemsOf({ ...minimal(), name: 'Bad Name', parallelism: 0, runner: { image: 'evil/x:1' } });
    expect(problems.map((p) => p.path)).toEqual(['name', 'parallelism', 'runner.image']);
  });

  it('reports problems in separate fields together with an unknown field and a missing one', () => {
    const spec = minimal();
    delete spec.engine;
    const problems = problemsOf({ ...spec, timeouts: { run: '10x' }, env: { LOADPLANE_X: 'y' }, extra: true });
    expect(problems.map((p) => p.path).sort()).toEqual(['engine', 'env.LOADPLANE_X', 'extra', 'timeouts.run']);
  });

  it.each([
    [null, 'nothing (null)'],
    [[], 'a list'],
    ['name: x', 'a string'],
    [42, 'a number'],
    [true, 'true/false'],
  ])('rejects a non-object spec %j at (root), without repeating it', (input, kind) => {
    expect(problemsOf(input)).toEqual([{ path: '(root)', message: `a run spec is a mapping (object) of fields, got ${kind}` }]);
  });
});

describe('assertValidSpec', () => {
  it('returns the normalized spec when valid', () => {
    expect(assertValidSpec(minimal(), DEFAULT_CONFIG).parallelism).toBe(1);
  });

  it('throws SpecInvalid carrying every problem', () => {
    let thrown: unknown;
    try {
      assertValidSpec({ ...minimal(), parallelism: 0, cleanup: 'x' }, DEFAULT_CONFIG);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SpecInvalid);
    expect((thrown as SpecInvalid).problems.map((p) => p.path)).toEqual(['parallelism', 'cleanup']);
    expect((thrown as SpecInvalid).name).toBe('SpecInvalid');
  });
});

describe('parseSpecText', () => {
  it('reads YAML and JSON alike', () => {
    const yaml = 'name: smoke\nengine: k6\nparallelism: 2\nscript:\n  inline: |\n    export default function () {}\n';
    const json = JSON.stringify({ name: 'smoke', engine: 'k6', parallelism: 2, script: { inline: 'export default function () {}\n' } });
    expect(parseSpecText(yaml, 'a.yaml')).toEqual(parseSpecText(json, 'a.json'));
  });

  it.each([
    ['an unclosed flow sequence', 'name: x\nargs: [1, 2\nengine: k6\n', 'spec.yaml: line 3, column 1: Flow sequence'],
    ['a duplicate key', 'name: x\nname: y\n', 'spec.yaml: line 2, column 1: Map keys must be unique'],
    ['an unterminated string', 'name: "x\n', 'spec.yaml: line 2, column 1: Missing closing "quote'],
  ])('turns %s into a Problem at (file) naming the line', (_what, text, message) => {
    let thrown: unknown;
    try {
      parseSpecText(text, 'spec.yaml');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SpecInvalid);
    const problems = (thrown as SpecInvalid).problems;
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.path === '(file)')).toBe(true);
    expect(problems[0]!.message).toContain(message);
  });
});

describe('validateSpec: a missing required field says "required", never "got undefined"', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['name', { engine: 'k6', script: { inline: SCRIPT }, parallelism: 1 }, 'name'],
    ['engine', { name: 'x', script: { inline: SCRIPT }, parallelism: 1 }, 'engine'],
    ['script', { name: 'x', engine: 'k6', parallelism: 1 }, 'script'],
    ['parallelism', { name: 'x', engine: 'k6', script: { inline: SCRIPT } }, 'parallelism'],
    ['script.configMap.name', { ...minimal(), script: { configMap: { file: 'a.js' } } }, 'script.configMap.name'],
    ['script.configMap.file', { ...minimal(), script: { configMap: { name: 'a' } } }, 'script.configMap.file'],
    ['cluster.name', { ...minimal(), cluster: { namespace: 'loadplane' } }, 'cluster.name'],
    ['cluster.namespace', { ...minimal(), cluster: { name: 'kube-sim' } }, 'cluster.namespace'],
  ];
  it.each(cases)('%s', (_field, input, path) => {
    const problems = problemsOf(input);
    expect(problems.find((p) => p.path === path)?.message).toMatch(/^required/);
    for (const p of problems) expect(p.message).not.toMatch(/undefined/);
  });

  it('engine missing names the engines', () => {
    expect(problemsOf({ name: 'x', script: { inline: SCRIPT }, parallelism: 1 })).toEqual([{ path: 'engine', message: 'required: one of k6, gatling' }]);
  });
});

describe('validateSpec: input is quoted short and escaped', () => {
  it("a malformed image reference is answered with the deployment's own default image as the example", () => {
    const [problem] = problemsOf({ ...minimal(), runner: { image: 'not an image' } });
    expect(problem!.message).toBe('must be an image reference like grafana/k6:1.8.1, got "not an image"');
    const [gatling] = problemsOf({
      name: 'g',
      engine: 'gatling',
      parallelism: 1,
      script: { configMap: { name: 'sims', file: 'A.java' } },
      runner: { image: 'bad image' },
    });
    expect(gatling!.message).toContain('like ghcr.io/st-tech/gatling:latest,');
  });

  it('escapes control characters and cuts long values in messages and paths', () => {
    const problems = problemsOf({
      ...minimal(),
      engine: `k6\u001b[31m${'x'.repeat(100)}`,
      env: { 'A\u0000\nB': 'x' },
      ['\u001b]0;pwned\u0007' + 'k'.repeat(80)]: 1,
    });
    const text = problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(problems.find((p) => p.path === 'engine')!.message).toBe(`must be one of k6, gatling; got "k6\\u001b[31m${'x'.repeat(33)}…"`);
    expect(problems.map((p) => p.path)).toContain('env.A\\u0000\\nB');
    expect(problems.map((p) => p.path)).toContain(`\\u001b]0;pwned\\u0007${'k'.repeat(30)}…`);
  });

  it('lists at most 20 problems, then how many more', () => {
    const extra = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, i]));
    const problems = problemsOf({ ...minimal(), ...extra });
    expect(problems).toHaveLength(21);
    expect(problems[20]).toEqual({ path: '(spec)', message: '… and 10 more problems' });
  });

  it('another file entirely (no spec field at all) is one problem, its keys not listed back', () => {
    const problems = problemsOf({ 'root:$6$salt$hash:19000:0:99999:7': null, 'daemon:*:19000:0:99999:7': null });
    expect(problems).toEqual([
      { path: '(root)', message: expect.stringMatching(/^not a run spec: none of its 2 top-level fields is a spec field \(name, engine/) },
    ]);
  });

  it('values nested deeper than 32 levels are refused before the schema walks them, even a recursive alias', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(problemsOf({ ...minimal(), env: { A: deep } })).toEqual([{ path: 'env.A.0', message: 'nested deeper than 32 levels' }]);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(problemsOf({ ...minimal(), runner: cycle })[0]!.message).toBe('nested deeper than 32 levels');
  });
});

describe('validateSpec: inline scripts', () => {
  const withScript = (inline: string, extra: Record<string, unknown> = {}) => ({ ...minimal(), script: { inline, ...extra } });

  it('a k6 script that does not parse as an ES module names the line and column', () => {
    expect(problemsOf(withScript('import http from "k6/http";\nexport default function () {\n  http.get(;\n}\n'))).toEqual([
      { path: 'script.inline', message: 'syntax error at line 3, column 12: Unexpected token' },
    ]);
  });

  it('.mjs is parsed too; .ts is not (k6 strips the types; the initializer reports its errors)', () => {
    expect(problemsOf(withScript('export default function ( {}', { filename: 'a.mjs' }))[0]!.message).toMatch(/^syntax error at line 1/);
    expect(specOf(withScript('export default function (x: number) {}', { filename: 'a.ts' })).script).toMatchObject({ filename: 'a.ts' });
  });

  it("a script whose nesting exceeds the parser's stack is a syntax error, not a crash", () => {
    expect(problemsOf(withScript(`export default function () { return ${'('.repeat(50_000)}1${')'.repeat(50_000)}; }`))[0]!.message).toMatch(
      /^syntax error at line 1, column \d+: Not enough stack space/,
    );
  });

  it('refuses NUL bytes in any script, naming the line', () => {
    expect(problemsOf(withScript('export default function () {}\n// a\u0000b\n'))).toEqual([
      { path: 'script.inline', message: 'must not contain NUL bytes (at line 2)' },
    ]);
    const gatling = { name: 'g', engine: 'gatling', parallelism: 1, script: { inline: 'class A {}\u0000', filename: 'A.java' } };
    expect(problemsOf(gatling)).toEqual([{ path: 'script.inline', message: 'must not contain NUL bytes (at line 1)' }]);
  });

  it('a syntax error message quoting the script is escaped', () => {
    const [problem] = problemsOf(withScript('let \u202e = 1;\nexport default function () {}'));
    expect(problem!.path).toBe('script.inline');
    expect(problem!.message).not.toMatch(/\u202e/);
  });
});

describe('the stored size of a spec besides its inline script', () => {
  const base = {
    name: 'sized',
    engine: 'k6',
    parallelism: 1,
    script: { inline: `export default function () {}\n${'//'.padEnd(200_000, 'x')}\n` },
    cluster: { name: 'kube-sim', namespace: 'loadplane' },
  };

  it('a large inline script does not count (it is stored in chunks of its own)', () => {
    expect(validateSpec(base, DEFAULT_CONFIG).ok).toBe(true);
  });

  it.each([
    ['one large env value', { env: { BIG: 'x'.repeat(300_000) } }, 'env'],
    ['many env entries', { env: Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`E${i}`, 'y'.repeat(80)])) }, 'env'],
    [
      'annotations and env together',
      { runner: { metadata: { annotations: { 'example.com/blob': 'z'.repeat(200_000) } } }, env: { MORE: 'w'.repeat(100_000) } },
      'runner',
    ],
  ])('%s past MAX_SPEC_FIELDS_BYTES: refused, naming the largest field and the limit', (_, extra, field) => {
    const result = validateSpec({ ...base, ...extra }, DEFAULT_CONFIG);
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual([{ path: field, message: expect.stringContaining(`at most ${MAX_SPEC_FIELDS_BYTES} bytes`) }]);
  });
});

describe('validateSpec: concurrency groups and notify when ', () => {
  const base = { name: 'grouped', engine: 'k6', script: { inline: SCRIPT }, parallelism: 2 };

  it('defaults a group to limit 1, whenBusy queue and a 1 h queue timeout; keeps channels as names, `when` beside them', () => {
    const spec = specOf({
      ...base,
      concurrency: { group: 'prod' },
      notify: { channels: ['slack', { name: 'webhook', when: 'change' }, { name: 'slack-x', when: 'always' }] },
    });
    expect(spec.concurrency).toEqual({ group: 'prod', limit: 1, whenBusy: 'queue', queueTimeout: 3600 });
    expect(spec.notify).toEqual({ channels: ['slack', 'webhook', 'slack-x'], policy: 'atMostOnce', when: { webhook: 'change' } });
    // No group and no `when`: nothing added, so the spec's hash is what it was before concurrency groups and `when` existed.
    expect(specOf(base)).not.toHaveProperty('concurrency');
    expect(specOf(base).notify).toEqual({ channels: [], policy: 'atMostOnce' });
  });

  it('a validated spec validates again to itself (a schedule stores the validated spec; Admit checks it again)', () => {
    const input = {
      ...base,
      concurrency: { group: 'prod', limit: 2, whenBusy: 'skip', queueTimeout: '10m' },
      notify: { channels: [{ name: 'slack', when: 'failure' }, 'webhook'], policy: 'atLeastOnce' },
    };
    const once = specOf(input);
    expect(specOf(once)).toEqual(once);
  });

  it('names every bad field: group, limit, whenBusy, queueTimeout past maxQueueSeconds, a channel when, a when for an unlisted channel', () => {
    expect(problemsOf({ ...base, concurrency: { group: 'Prod', limit: 101, whenBusy: 'wait', queueTimeout: '7h' } })).toEqual([
      { path: 'concurrency.group', message: "must be lowercase letters, digits and '-', starting with a letter and ending with a letter or digit" },
      { path: 'concurrency.limit', message: 'must be at most 100' },
      { path: 'concurrency.whenBusy', message: 'must be one of queue, skip, reject; got "wait"' },
      { path: 'concurrency.queueTimeout', message: 'must be at most 6h (maxQueueSeconds), got 7h' },
    ]);
    expect(problemsOf({ ...base, notify: { channels: [{ name: 'slack', when: 'sometimes' }, 3] } })).toEqual([
      { path: 'notify.channels.0.when', message: 'must be one of always, failure, change; got "sometimes"' },
      {
        path: 'notify.channels.1',
        message: 'must be a channel name (slack, webhook, slack-<suffix>, webhook-<suffix>) or { name, when: always | failure | change }, got number 3',
      },
    ]);
    expect(problemsOf({ ...base, notify: { channels: ['slack'], when: { webhook: 'change' } } })).toEqual([
      { path: 'notify.when', message: 'names "webhook", which is not in notify.channels' },
    ]);
  });
});
