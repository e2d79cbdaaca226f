/**
 * Shared by the kube-sim tests: raw HTTP calls, waiting on conditions, sim-time sleeps, and minimal
 * manifests shaped like runner-contract.ts says loadplane's builders make them.
 */
import {
  ENV_START_AT,
  Labels,
  RUNNER_CONTAINER,
  SCRIPT_MOUNT_PATH,
  WRAPPER_ARGV_SEPARATOR,
  WRAPPER_COMMAND,
} from '../../lambdas/core/runner-contract';
import type { KubeSim } from '../../local/kube-sim/index';

export const NS = 'loadplane';

/** API bodies as the tests read them: JSON whose shape each test asserts field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the server under test
export type Json = any;

export interface HttpResult {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

export async function http(
  sim: KubeSim,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<HttpResult> {
  const res = await fetch(sim.url + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text (logs)
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Polls until `check` returns a value other than undefined; the timeout only bounds the wait. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until at least `simMs` of simulated time has passed. */
export async function simSleep(sim: KubeSim, simMs: number): Promise<void> {
  const until = sim.now() + simMs;
  while (sim.now() < until) await sim.clock.sleep(until - sim.now());
}

let seq = 0;
/** A fresh DNS-safe run id per test. */
export function newRunId(prefix = 'r'): string {
  seq += 1;
  return `${prefix}${seq}${Math.random().toString(36).slice(2, 8)}`;
}

export function scriptConfigMap(runId: string, script: string, file = 'test.js'): Json {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `lp-${runId}-script`, labels: { [Labels.runId]: runId } },
    data: { [file]: script },
  };
}

export interface JobOptions {
  runId: string;
  name: string;
  engine: 'k6' | 'gatling';
  role: 'initializer' | 'runner';
  index?: number;
  engineArgv: string[];
  annotations?: Record<string, string>;
  env?: Record<string, string>;
  spec?: Record<string, unknown>;
}

/** A Job running the loadplane wrapper, with the script ConfigMap mounted at SCRIPT_MOUNT_PATH. */
export function wrapperJob(o: JobOptions): Json {
  const labels: Record<string, string> = { [Labels.runId]: o.runId, [Labels.role]: o.role };
  if (o.index !== undefined) labels[Labels.runnerIndex] = String(o.index);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: o.name, labels },
    spec: {
      backoffLimit: 0,
      ...o.spec,
      template: {
        metadata: { labels, annotations: o.annotations },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: RUNNER_CONTAINER,
              image: o.engine === 'k6' ? 'grafana/k6:1.4.2' : 'loadplane/gatling-runner:3.14.3',
              command: [WRAPPER_COMMAND],
              args: ['--engine', o.engine, '--role', o.role, '--index', String(o.index ?? 0), WRAPPER_ARGV_SEPARATOR, ...o.engineArgv],
              env: Object.entries(o.env ?? {}).map(([name, value]) => ({ name, value })),
              volumeMounts: [{ name: 'script', mountPath: SCRIPT_MOUNT_PATH, readOnly: true }],
            },
          ],
          volumes: [{ name: 'script', configMap: { name: `lp-${o.runId}-script` } }],
        },
      },
    },
  };
}

export function k6RunArgv(index: number, of: number, extra: string[] = []): string[] {
  return [
    'k6',
    'run',
    '--quiet',
    `--execution-segment=${index}/${of}:${index + 1}/${of}`,
    ...extra,
    `${SCRIPT_MOUNT_PATH}/test.js`,
    '--address=0.0.0.0:6565',
    '--paused',
  ];
}

export const K6_INSPECT_ARGV = ['k6', 'inspect', '--execution-requirements', `${SCRIPT_MOUNT_PATH}/test.js`];

export const GATLING_ARGV = ['gatling.sh', '--simulations-folder', SCRIPT_MOUNT_PATH];

export function gatlingEnv(startAt: number): Record<string, string> {
  return { [ENV_START_AT]: new Date(startAt).toISOString() };
}

export async function createJob(sim: KubeSim, job: Json): Promise<Json> {
  const res = await http(sim, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, job);
  if (res.status !== 201) throw new Error(`creating job: ${res.status} ${res.text}`);
  return res.body;
}

export async function createConfigMap(sim: KubeSim, cm: Json): Promise<void> {
  const res = await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, cm);
  if (res.status !== 201) throw new Error(`creating configmap: ${res.status} ${res.text}`);
}

export function podsOf(sim: KubeSim, jobName: string): Json[] {
  return sim.list('Pod', NS, `job-name=${jobName}`);
}

/** The job's pod once it matches `ready`. */
export function podWhen(sim: KubeSim, jobName: string, ready: (pod: Json) => boolean, what: string): Promise<Json> {
  return eventually(() => podsOf(sim, jobName).find(ready), `${jobName}: ${what}`);
}

export function jobWhen(sim: KubeSim, jobName: string, ready: (job: Json) => boolean, what: string): Promise<Json> {
  return eventually(() => sim.list('Job', NS).find((j) => j.metadata.name === jobName && ready(j)), `${jobName}: ${what}`);
}

export const isRunning = (pod: Json) => pod.status?.phase === 'Running';
export const isDone = (pod: Json) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export function condition(job: Json, type: string): Json {
  return job.status?.conditions?.find((c: Json) => c.type === type && c.status === 'True');
}

export function exitCodeOf(pod: Json): number | undefined {
  return pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode;
}

export async function podLog(sim: KubeSim, podName: string, query = ''): Promise<string> {
  const res = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${podName}/log${query}`);
  if (res.status !== 200) throw new Error(`log of ${podName}: ${res.status} ${res.text}`);
  return res.text;
}

export const K6_START = { data: { type: 'status', id: 'default', attributes: { paused: false, stopped: false } } };
export const K6_STOP = { data: { type: 'status', id: 'default', attributes: { stopped: true } } };

export function k6Status(sim: KubeSim, podName: string, method = 'GET', body?: unknown): Promise<HttpResult> {
  return http(sim, method, `/api/v1/namespaces/${NS}/pods/${podName}:6565/proxy/v1/status`, body);
}
