/**
 * docs/metrics-outputs.md, one example per output: the spec validates, and the Jobs built from it
 * (runnerPlan and the k6 manifest builders, as Prepare and Launch build them) give each runner the
 * user's `-o`/K6_* settings beside loadplane's own flags, give the initializer's `k6 archive` no `-o`,
 * and give the coordinator no output at all. Credentials are Secret references, as in the docs: the
 * Jobs carry the reference, never a value.
 */
import type { V1EnvVar, V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { K6_API_PORT, K6_SUMMARY_EXPORT_PATH, SCRIPT_MOUNT_PATH } from '../../lambdas/core/runner-contract';
import { assertValidSpec, type RunSpecInput } from '../../lambdas/core/spec';
import { archiveArguments, withoutOutputs } from '../../lambdas/engines/k6/archive-arguments';
import { k6CoordinatorJob, k6InitializerJob, k6RunnerJob } from '../../lambdas/engines/k6/manifests';
import { k6SummaryFlags } from '../../lambdas/engines/k6/summary-export';
import { runnerPlan } from '../../lambdas/stages/runner-plan';

const ECR = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
const config: DeploymentConfig = { ...DEFAULT_CONFIG, allowedImagePrefixes: [...DEFAULT_CONFIG.allowedImagePrefixes, `${ECR}/k6-influxdb:`] };

const base = (name: string, fields: Partial<RunSpecInput>): RunSpecInput =>
  ({ name, engine: 'k6', parallelism: 3, script: { inline: 'export default function () {}\n' }, ...fields }) as RunSpecInput;

interface Example {
  output: string;
  spec: RunSpecInput;
  /** The runner's `-o` entries, as given. */
  out: string[];
  /** The env the pods get: a value, or `secret <name>/<key>` for a reference. */
  env: Record<string, string>;
  /** The pods' envFrom, as `secret <name>`. */
  envFrom?: string[];
}

const EXAMPLES: Example[] = [
  {
    output: 'Prometheus remote write, native histograms',
    spec: base('prom-rw', {
      arguments: ['-o', 'experimental-prometheus-rw'],
      env: {
        K6_PROMETHEUS_RW_SERVER_URL: 'https://prometheus.example.com/api/v1/write',
        K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
        K6_PROMETHEUS_RW_USERNAME: 'k6',
        K6_PROMETHEUS_RW_PASSWORD: { secretKeyRef: { name: 'prometheus-rw', key: 'password' } },
      },
    }),
    out: ['-o', 'experimental-prometheus-rw'],
    env: { K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true', K6_PROMETHEUS_RW_PASSWORD: 'secret prometheus-rw/password' },
  },
  {
    output: 'Grafana Cloud Prometheus (remote write)',
    spec: base('grafana-prom', {
      arguments: ['--out=experimental-prometheus-rw'],
      env: {
        K6_PROMETHEUS_RW_SERVER_URL: 'https://prometheus-prod-01-eu-west-0.grafana.net/api/prom/push',
        K6_PROMETHEUS_RW_USERNAME: '1234567',
        K6_PROMETHEUS_RW_PASSWORD: { secretKeyRef: { name: 'grafana-cloud', key: 'token' } },
        K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
      },
    }),
    out: ['--out=experimental-prometheus-rw'],
    env: { K6_PROMETHEUS_RW_USERNAME: '1234567', K6_PROMETHEUS_RW_PASSWORD: 'secret grafana-cloud/token' },
  },
  {
    output: 'InfluxDB v1 (built in)',
    spec: base('influx-v1', {
      arguments: ['-o', 'influxdb=http://influxdb.monitoring:8086/k6'],
      env: { K6_INFLUXDB_USERNAME: 'k6', K6_INFLUXDB_PASSWORD: { secretKeyRef: { name: 'influxdb', key: 'password' } } },
    }),
    out: ['-o', 'influxdb=http://influxdb.monitoring:8086/k6'],
    env: { K6_INFLUXDB_USERNAME: 'k6', K6_INFLUXDB_PASSWORD: 'secret influxdb/password' },
  },
  {
    output: 'InfluxDB v2 (xk6-output-influxdb, an image of your own)',
    spec: base('influx-v2', {
      arguments: ['-o', 'xk6-influxdb=http://influxdb.monitoring:8086'],
      env: { K6_INFLUXDB_ORGANIZATION: 'perf', K6_INFLUXDB_BUCKET: 'k6' },
      envFrom: [{ secretRef: { name: 'influxdb-v2' } }],
      runner: { image: `${ECR}/k6-influxdb:1.8.1` },
    }),
    out: ['-o', 'xk6-influxdb=http://influxdb.monitoring:8086'],
    env: { K6_INFLUXDB_ORGANIZATION: 'perf', K6_INFLUXDB_BUCKET: 'k6' },
    envFrom: ['secret influxdb-v2'],
  },
  {
    output: 'Grafana Cloud k6 (-o cloud)',
    spec: base('cloud', {
      arguments: ['-o', 'cloud'],
      env: { K6_CLOUD_TOKEN: { secretKeyRef: { name: 'grafana-cloud-k6', key: 'token' } }, K6_CLOUD_PROJECT_ID: '123456' },
    }),
    out: ['-o', 'cloud'],
    env: { K6_CLOUD_TOKEN: 'secret grafana-cloud-k6/token', K6_CLOUD_PROJECT_ID: '123456' },
  },
  {
    output: 'OpenTelemetry (K6_OUT, no flag)',
    spec: base('otel', {
      env: {
        K6_OUT: 'opentelemetry',
        K6_OTEL_EXPORTER_PROTOCOL: 'http/protobuf',
        K6_OTEL_HTTP_EXPORTER_ENDPOINT: 'otel-collector.monitoring:4318',
        K6_OTEL_HTTP_EXPORTER_INSECURE: 'true',
        K6_OTEL_HEADERS: { secretKeyRef: { name: 'otel', key: 'headers' } },
      },
    }),
    out: [],
    env: { K6_OUT: 'opentelemetry', K6_OTEL_EXPORTER_PROTOCOL: 'http/protobuf', K6_OTEL_HEADERS: 'secret otel/headers' },
  },
];

function envOf(job: V1Job): Record<string, string | undefined> {
  const ref = (e: V1EnvVar) => e.valueFrom?.secretKeyRef && `secret ${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`;
  return Object.fromEntries((job.spec!.template.spec!.containers[0]!.env ?? []).map((e) => [e.name, e.value ?? ref(e)]));
}
const envFromOf = (job: V1Job) => (job.spec!.template.spec!.containers[0]!.envFrom ?? []).map((e) => `secret ${e.secretRef?.name}`);
const argsOf = (job: V1Job) => job.spec!.template.spec!.containers[0]!.args!;

describe.each(EXAMPLES)('$output', ({ spec: input, out, env, envFrom = [] }) => {
  const spec = assertValidSpec(input, config);
  const plan = runnerPlan('01jdx7k2m9q4r8s6t0v3w5y7z9', spec, { prepareSeconds: 600, runSeconds: 3600 });

  it("each runner: the user's -o and env beside loadplane's segment, REST API, paused start and summary export", () => {
    for (const index of [0, 1, 2]) {
      const job = k6RunnerJob(plan, index);
      const args = argsOf(job);
      expect(args.slice(0, 5)).toEqual([
        'k6',
        'run',
        '--quiet',
        expect.stringMatching(/^--execution-segment=/),
        expect.stringMatching(/^--execution-segment-sequence=/),
      ]);
      expect(args.slice(5, 5 + out.length)).toEqual(out);
      expect(args.slice(5 + out.length)).toEqual([
        `${SCRIPT_MOUNT_PATH}/script.js`,
        `--address=0.0.0.0:${K6_API_PORT}`,
        '--paused',
        '--tag',
        `instance_id=${index}`,
        '--tag',
        `testrun_name=${spec.name}`,
        '--no-setup',
        '--no-teardown',
        ...k6SummaryFlags(K6_SUMMARY_EXPORT_PATH),
      ]);
      expect(envOf(job)).toMatchObject(env);
      expect(envFromOf(job)).toEqual(envFrom);
    }
  });

  it("the coordinator: no -o, K6_OUT emptied (no output at all), the rest of its env as the runners'", () => {
    const job = k6CoordinatorJob(plan);
    const args = argsOf(job);
    expect(args.filter((a) => a === '-o' || a.startsWith('--out') || a.startsWith('-o'))).toEqual([]);
    expect(args).toEqual(expect.arrayContaining(['--paused', '--no-setup', '--no-teardown']));
    const { K6_OUT, ...rest } = env;
    expect(envOf(job)).toMatchObject({ ...rest, K6_OUT: '' });
    expect(envFromOf(job)).toEqual(envFrom);
    expect(K6_OUT === undefined || envOf(k6RunnerJob(plan, 0)).K6_OUT === K6_OUT).toBe(true);
  });

  it('the initializer: `k6 archive` without -o (it has no such flag)', () => {
    const args = argsOf(k6InitializerJob(plan));
    for (const entry of out) expect(args).not.toContain(entry);
    expect(args.at(-1)).toBe(`${SCRIPT_MOUNT_PATH}/script.js`);
  });
});

describe('withoutOutputs / archiveArguments', () => {
  it('drops every form of -o/--out and only those for the coordinator; the initializer drops --no-usage-report too', () => {
    const args = [
      '-o',
      'cloud',
      '--out',
      'json=a.json',
      '--out=influxdb=http://i:8086/k6',
      '-oexperimental-prometheus-rw',
      '-o=csv=x.csv',
      '--tag',
      'a=b',
      '--no-usage-report',
    ];
    expect(withoutOutputs(args)).toEqual(['--tag', 'a=b', '--no-usage-report']);
    expect(archiveArguments(args)).toEqual(['--tag', 'a=b']);
  });
});
