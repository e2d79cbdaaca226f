/**
 * k6 metrics outputs (docs/metrics-outputs.md) beside loadplane's own flags, whole runs on
 * kube-sim. The runners start with the user's outputs (`-o/--out` or K6_OUT), and print them in k6's
 * execution description (a debug record under --quiet, so with `-v`); the coordinator runs with none
 * (no second copy of runner 0's vus_max); the initializer's `k6 archive` never sees `-o`. A type k6
 * 1.8 does not have (`prometheus-rw`) fails every runner as k6 does, after the initializer passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outcome } from '../../lambdas/core/status';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { podLog } from '../kube-sim/helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SCRIPT =
  "import http from 'k6/http';\nexport const options = { vus: 4, duration: '20s' };\nexport function setup() { return { at: Date.now() }; }\nexport default function () { http.get(__ENV.TARGET_URL); }\n";

/** The log of each of the run's pods, by role (`runner-<i>`, `coordinator`, `initializer`). */
async function logsOf(runId: string): Promise<Record<string, string>> {
  const pods = h.kubeSim.list('Pod', 'loadplane', `loadplane.io/run-id=${runId}`) as { metadata: { name: string; labels: Record<string, string> } }[];
  const entries = await Promise.all(
    pods.map(async (p) => {
      const { 'loadplane.io/role': role, 'loadplane.io/runner-index': index } = p.metadata.labels;
      return [index === undefined ? role! : `${role}-${index}`, await podLog(h.kubeSim, p.metadata.name)] as const;
    }),
  );
  return Object.fromEntries(entries);
}

const outputLine = (log: string) => /\\n {8}output: ([^\\]+)\\n/.exec(log)?.[1];

describe('k6 metrics outputs on the runners, none on the coordinator', () => {
  it('-o experimental-prometheus-rw with K6_PROMETHEUS_RW_* env: each runner streams to it, the coordinator to nothing, the run succeeds', async () => {
    const spec = k6Spec({
      name: 'prom-rw',
      parallelism: 2,
      cleanup: 'never',
      script: { inline: SCRIPT },
      arguments: ['-o', 'experimental-prometheus-rw', '-v'],
      env: {
        TARGET_URL: 'http://target.invalid/',
        K6_PROMETHEUS_RW_SERVER_URL: 'http://prometheus.monitoring:9090/api/v1/write',
        K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
      },
    });
    const { runId, view } = await h.run(spec);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const logs = await logsOf(runId);
    expect(Object.keys(logs).sort()).toEqual(['coordinator', 'initializer', 'runner-0', 'runner-1']);
    expect(outputLine(logs['runner-0']!)).toBe('Prometheus remote write (http://prometheus.monitoring:9090/api/v1/write)');
    expect(outputLine(logs['runner-1']!)).toBe('Prometheus remote write (http://prometheus.monitoring:9090/api/v1/write)');
    expect(outputLine(logs.coordinator!)).toBe('-');
  }, 120_000);

  it("K6_OUT=opentelemetry with K6_OTEL_* env (no -o): the runners take it from the environment; the coordinator's K6_OUT is emptied", async () => {
    const spec = k6Spec({
      name: 'otel',
      parallelism: 2,
      cleanup: 'never',
      script: { inline: SCRIPT },
      arguments: ['-v'],
      env: {
        TARGET_URL: 'http://target.invalid/',
        K6_OUT: 'opentelemetry',
        K6_OTEL_GRPC_EXPORTER_ENDPOINT: 'otel-collector.monitoring:4317',
        K6_OTEL_GRPC_EXPORTER_INSECURE: 'true',
        K6_OTEL_METRIC_PREFIX: 'k6_',
      },
    });
    const { runId, view } = await h.run(spec);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const logs = await logsOf(runId);
    expect(outputLine(logs['runner-0']!)).toBe('opentelemetry (grpc (insecure), otel-collector.monitoring:4317)');
    expect(outputLine(logs['runner-1']!)).toBe('opentelemetry (grpc (insecure), otel-collector.monitoring:4317)');
    expect(outputLine(logs.coordinator!)).toBe('-');
  }, 120_000);

  it('-o prometheus-rw (k6 1.8 has only experimental-prometheus-rw): the initializer passes (archive drops -o), every runner exits 255 naming the types, the run FAILS', async () => {
    const spec = k6Spec({ name: 'prom-typo', parallelism: 2, cleanup: 'never', script: { inline: SCRIPT }, arguments: ['-o', 'prometheus-rw'] });
    const { runId, view } = await h.run(spec);
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.stages.AwaitPrepared?.state).toBe('completed');
    const logs = await logsOf(runId);
    const refused =
      "invalid output type 'prometheus-rw', available types are: cloud, csv, experimental-opentelemetry, experimental-prometheus-rw, influxdb, json, opentelemetry, statsd, web-dashboard";
    expect(logs['runner-0']).toContain(`level=error msg="${refused}"`);
    expect(logs['runner-1']).toContain(`level=error msg="${refused}"`);
  }, 120_000);
});
