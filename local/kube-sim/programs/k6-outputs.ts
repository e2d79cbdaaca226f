/**
 * The metrics outputs a simulated `k6 run` is configured with, as k6 1.8.1 reads them
 * (internal/cmd/config.go, outputs.go, ui.go), and the `output:` line of its execution description:
 *
 * - `-o/--out <type>[=<arg>]` is a string array (each flag one entry, no comma splitting); when any is
 *   given, `K6_OUT` is ignored (Config.Apply replaces the list). Otherwise `K6_OUT` is split on `,`
 *   (envconfig; an empty value is no output).
 * - the type is what precedes the first `=`; an unknown one fails the run before the REST API is up:
 *   `invalid output type '<type>', available types are: <sorted list>` (a plain error: exit 255).
 * - the line lists each output's Description(), `-` when there is none; `web-dashboard` gets a line
 *   of its own and is left out here. With `--quiet` (loadplane's runners) k6 prints the whole
 *   description at debug level only, so it is in the log with `-v/--verbose` only.
 *
 * Descriptions follow each output's source (1.8.1), from its documented env and the `=<arg>`:
 * Prometheus remote write takes its URL from K6_PROMETHEUS_RW_SERVER_URL only (the arg is ignored);
 * InfluxDB v1 from the arg's scheme://host, else K6_INFLUXDB_ADDR; OpenTelemetry from
 * K6_OTEL_EXPORTER_PROTOCOL (or K6_OTEL_EXPORTER_TYPE) and the endpoint variables. Unverified here:
 * `cloud` (real k6 creates a Grafana Cloud test run first and prints its URL; kube-sim creates none and
 * shows K6_CLOUD_PUSH_REF_ID or `simulated`), and extension outputs of a custom image (any type is
 * accepted on an image that is not grafana/k6, described by its name).
 */

/** k6 1.8.1's output types (getAllOutputConstructors; kafka and datadog are left out of its list). */
export const K6_OUTPUT_TYPES = [
  'cloud',
  'csv',
  'experimental-opentelemetry',
  'experimental-prometheus-rw',
  'influxdb',
  'json',
  'opentelemetry',
  'statsd',
  'web-dashboard',
] as const;

/** Outputs k6 1.8.1 still knows by name and refuses with these messages (removed in earlier releases). */
const REMOVED: Readonly<Record<string, string>> = {
  kafka:
    'the kafka output was deprecated in k6 v0.32.0 and removed in k6 v0.34.0, please use the new xk6 kafka output extension instead - https://github.com/k6io/xk6-output-kafka',
  statsd:
    'the statsd output was deprecated in k6 v0.47.0 and removed in k6 v0.55.0, please use the new xk6 statsd output extension instead. ' +
    'It can be found at https://github.com/LeonAdato/xk6-output-statsd and more info at https://github.com/grafana/k6/issues/2982',
  datadog:
    'the datadog output was deprecated in k6 v0.32.0 and removed in k6 v0.34.0, please use the statsd output extension https://github.com/LeonAdato/xk6-output-statsd with environment ' +
    'variable K6_STATSD_ENABLE_TAGS=true or an experimental opentelemetry output instead',
};

export interface K6Output {
  type: string;
  /** What follows `=`, if anything. */
  arg?: string;
  /** The output's Description(), as the `output:` line shows it. */
  description: string;
}

export type K6OutputsResult = { ok: true; outputs: K6Output[] } | { ok: false; message: string };

/** The outputs of a `k6 run` with these `--out` values and environment; `stockImage`: grafana/k6 (no extensions). */
export function k6Outputs(flags: readonly string[], env: (name: string) => string | undefined, stockImage: boolean): K6OutputsResult {
  const fromEnv = env('K6_OUT');
  const entries = flags.length > 0 ? flags : fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv.split(',') : [];
  const outputs: K6Output[] = [];
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const type = eq < 0 ? entry : entry.slice(0, eq);
    const arg = eq < 0 ? undefined : entry.slice(eq + 1);
    if (REMOVED[type] !== undefined) return { ok: false, message: REMOVED[type] };
    const known = (K6_OUTPUT_TYPES as readonly string[]).includes(type);
    if (!known && stockImage) return { ok: false, message: `invalid output type '${type}', available types are: ${K6_OUTPUT_TYPES.join(', ')}` };
    outputs.push({ type, ...(arg === undefined ? {} : { arg }), description: known ? describe(type, arg, env) : type });
  }
  return { ok: true, outputs };
}

/** The `output:` line's value: the descriptions, comma-separated, `-` for none (web-dashboard has its own line). */
export function outputLine(outputs: readonly K6Output[]): string {
  const shown = outputs.filter((o) => o.type !== 'web-dashboard').map((o) => o.description);
  return shown.length > 0 ? shown.join(', ') : '-';
}

const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

function describe(type: string, arg: string | undefined, env: (name: string) => string | undefined): string {
  switch (type) {
    case 'experimental-prometheus-rw':
      return `Prometheus remote write (${env('K6_PROMETHEUS_RW_SERVER_URL') ?? 'http://localhost:9090/api/v1/write'})`;
    case 'influxdb': {
      const url = arg && URL.canParse(arg) ? new URL(arg) : undefined;
      const fromArg = url && url.host !== '' ? `${url.protocol}//${url.host}` : undefined;
      return `InfluxDBv1 (${fromArg ?? env('K6_INFLUXDB_ADDR') ?? 'http://localhost:8086'})`;
    }
    case 'opentelemetry':
    case 'experimental-opentelemetry':
      return `opentelemetry (${otelEndpoint(env)})`;
    case 'cloud':
      return `cloud (${env('K6_CLOUD_WEB_APP_URL') ?? 'https://app.k6.io'}/runs/${env('K6_CLOUD_PUSH_REF_ID') ?? 'simulated'})`;
    case 'json':
      return !arg || arg === '-' ? 'json(stdout)' : `json (${arg})`;
    case 'csv':
      return !arg || arg === '-' ? 'csv (stdout)' : `csv (${arg})`;
    default:
      return type;
  }
}

/** opentelemetry's Config.String(): `grpc, localhost:4317`, `grpc (insecure), …`, `http/protobuf, https://localhost:4318/v1/metrics`. */
function otelEndpoint(env: (name: string) => string | undefined): string {
  const type = env('K6_OTEL_EXPORTER_TYPE');
  const protocol = env('K6_OTEL_EXPORTER_PROTOCOL') ?? (type === 'http' ? 'http/protobuf' : type === 'grpc' ? 'grpc' : (type ?? 'grpc'));
  if (protocol === 'http/protobuf') {
    const insecure = GO_TRUE.has(env('K6_OTEL_HTTP_EXPORTER_INSECURE') ?? '');
    return `${protocol}, http${insecure ? '' : 's'}://${env('K6_OTEL_HTTP_EXPORTER_ENDPOINT') ?? 'localhost:4318'}${env('K6_OTEL_HTTP_EXPORTER_URL_PATH') ?? '/v1/metrics'}`;
  }
  const insecure = GO_TRUE.has(env('K6_OTEL_GRPC_EXPORTER_INSECURE') ?? '');
  return `${protocol}${insecure ? ' (insecure)' : ''}, ${env('K6_OTEL_GRPC_EXPORTER_ENDPOINT') ?? 'localhost:4317'}`;
}
