/**
 * kube-sim's k6 reads its metrics outputs as k6 1.8.1 does (local/kube-sim/programs/k6-outputs.ts):
 * `-o` flags win over K6_OUT, K6_OUT splits on commas, unknown and removed types fail, and each
 * output is described as its Description() prints it.
 */
import { describe, expect, it } from 'vitest';
import { k6Outputs, outputLine } from '../../local/kube-sim/programs/k6-outputs';
import { parseK6Argv } from '../../local/kube-sim/programs/k6-argv';

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];
const described = (flags: string[], vars: Record<string, string> = {}, stock = true) => {
  const result = k6Outputs(flags, envOf(vars), stock);
  return result.ok ? outputLine(result.outputs) : `error: ${result.message}`;
};

describe('k6Outputs', () => {
  it('no output: `-` (K6_OUT empty is none)', () => {
    expect(described([])).toBe('-');
    expect(described([], { K6_OUT: '' })).toBe('-');
  });

  it('K6_OUT is split on commas; -o flags replace it entirely', () => {
    expect(described([], { K6_OUT: 'json=/tmp/a.json,csv=/tmp/b.csv' })).toBe('json (/tmp/a.json), csv (/tmp/b.csv)');
    expect(described(['json'], { K6_OUT: 'csv=/tmp/b.csv' })).toBe('json(stdout)');
  });

  it('each output as k6 describes it, from its env and argument', () => {
    expect(described(['experimental-prometheus-rw=ignored'])).toBe('Prometheus remote write (http://localhost:9090/api/v1/write)');
    expect(described(['experimental-prometheus-rw'], { K6_PROMETHEUS_RW_SERVER_URL: 'https://prom.example/api/v1/write' })).toBe(
      'Prometheus remote write (https://prom.example/api/v1/write)',
    );
    expect(described(['influxdb=http://influx:8086/k6'], { K6_INFLUXDB_ADDR: 'http://other:8086' })).toBe('InfluxDBv1 (http://influx:8086)');
    expect(described(['influxdb'], { K6_INFLUXDB_ADDR: 'http://other:8086' })).toBe('InfluxDBv1 (http://other:8086)');
    expect(described(['opentelemetry'])).toBe('opentelemetry (grpc, localhost:4317)');
    expect(described(['opentelemetry'], { K6_OTEL_EXPORTER_PROTOCOL: 'http/protobuf', K6_OTEL_HTTP_EXPORTER_ENDPOINT: 'collector:4318' })).toBe(
      'opentelemetry (http/protobuf, https://collector:4318/v1/metrics)',
    );
    expect(described(['experimental-opentelemetry'], { K6_OTEL_EXPORTER_TYPE: 'grpc', K6_OTEL_GRPC_EXPORTER_INSECURE: 'true' })).toBe(
      'opentelemetry (grpc (insecure), localhost:4317)',
    );
    expect(described(['cloud'], { K6_CLOUD_PUSH_REF_ID: '4242' })).toBe('cloud (https://app.k6.io/runs/4242)');
    expect(described(['web-dashboard', 'json=out.json'])).toBe('json (out.json)');
  });

  it("a type k6 1.8 does not have fails, listing its types; removed ones with k6's own message; an extension passes on another image", () => {
    expect(described(['prometheus-rw'])).toBe(
      "error: invalid output type 'prometheus-rw', available types are: cloud, csv, experimental-opentelemetry, experimental-prometheus-rw, influxdb, json, opentelemetry, statsd, web-dashboard",
    );
    expect(described(['statsd'])).toMatch(/^error: the statsd output was deprecated in k6 v0\.47\.0 and removed in k6 v0\.55\.0/);
    expect(described(['xk6-influxdb=http://influx:8086'])).toMatch(/^error: invalid output type 'xk6-influxdb'/);
    expect(described(['xk6-influxdb=http://influx:8086'], {}, false)).toBe('xk6-influxdb');
  });
});

describe('parseK6Argv: outputs, --quiet, --verbose', () => {
  it('collects every -o/--out form in order', () => {
    const argv = parseK6Argv(['k6', 'run', '-o', 'a', '--out', 'b', '--out=c=1', '-od', '-o=e', '-q', '-v', 'script.js']);
    expect(argv.outputs).toEqual(['a', 'b', 'c=1', 'd', 'e']);
    expect([argv.quiet, argv.verbose, argv.positionals]).toEqual([true, true, ['script.js']]);
  });
});
