/**
 * Shared by the kube-sim tests: kube-sim on a VirtualClock, raw HTTP calls, waiting on conditions in
 * simulated time, and minimal manifests shaped like runner-contract.ts says loadplane's builders make
 * them.
 *
 * The suite must not depend on the machine's speed (architecture §11): kube-sim runs on a VirtualClock, which
 * moves only while the test waits on it (`eventually`, `simSleep`) and then jumps through kube-sim's
 * timers to the wake-up instant. An HTTP request to kube-sim is real I/O that completes while the clock
 * stands still (nobody waits on it meanwhile). So what a test sees depends on simulated time only: a
 * loaded machine makes a test slower, never different.
 */
import { ENV_START_AT, ENV_START_AT_EPOCH, Labels, RUNNER_CONTAINER, SCRIPT_MOUNT_PATH, WORK_DIR } from '../../lambdas/core/runner-contract';
import { INITIALIZER_SCRIPT_NAME, K6_INITIALIZER_SCRIPT, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from '../../lambdas/engines/pod-scripts';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startKubeSim, type KubeSim } from '../../local/kube-sim/index';

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

export async function http(sim: KubeSim, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<HttpResult> {
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

/**
 * kube-sim on a VirtualClock of its own, started on a whole second of the wall clock: timestamps
 * (second precision) then fall the same way on every run, and they stay near the real "now" (kubectl's
 * AGE column). Close it with `closeKubeSim`.
 */
export function startVirtualKubeSim(): Promise<KubeSim> {
  return startKubeSim({ clock: new VirtualClock(Math.ceil(Date.now() / 1000) * 1000) });
}

/** Closes kube-sim and then its clock (kube-sim closes only a clock it made itself). */
export async function closeKubeSim(sim: KubeSim | undefined): Promise<void> {
  if (!sim) return;
  await sim.close();
  sim.clock.close();
}

export interface WaitOptions {
  /**
   * Simulated ms between two checks. Default 100: finer than any delay of kube-sim (the shortest,
   * k6's init, is 500 ms), so no state that lasts a kube-sim step is stepped over.
   */
  stepMs?: number;
  /** Simulated ms after which the wait fails. Default 15 minutes, longer than any wait of these tests. */
  limitMs?: number;
}

/**
 * Checks until `check` returns a value other than undefined, letting `stepMs` of simulated time pass
 * between two checks, and fails once `limitMs` of simulated time has passed: the bound is simulated
 * time, never the wall clock.
 *
 * The wait is an actor of the clock: the clock stands still while a check is working (its HTTP
 * requests), also when several waits run at once (Promise.all), and moves only while every one of them
 * sleeps. So the simulated instants at which checks run, and what they see, are the same on every
 * machine, however loaded.
 */
export function eventually<T>(
  sim: KubeSim,
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  { stepMs = 100, limitMs = 15 * 60_000 }: WaitOptions = {},
): Promise<T> {
  return sim.clock.actor(async () => {
    const until = sim.now() + limitMs;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (sim.now() >= until) throw new Error(`${what}: not within ${limitMs / 1000} s of simulated time`);
      await sim.clock.sleep(Math.min(stepMs, until - sim.now()));
    }
  });
}

/** Waits until at least `simMs` of simulated time has passed (the clock jumps through kube-sim's timers on the way). */
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

/**
 * A Job shaped like loadplane's builders make it (runner-contract.ts): the engine's sh script as the
 * command, its argv as args, the labels kube-sim recognises it by, a security context that passes the
 * "restricted" Pod Security Standard (the test namespace enforces it), the script ConfigMap mounted at
 * SCRIPT_MOUNT_PATH.
 */
export function runnerJob(o: JobOptions): Json {
  const labels: Record<string, string> = { [Labels.runId]: o.runId, [Labels.role]: o.role, [Labels.engine]: o.engine };
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
              image: o.engine === 'k6' ? 'grafana/k6:1.8.1' : 'ghcr.io/st-tech/gatling:latest',
              command:
                o.role === 'initializer' ? shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME) : shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME),
              args: o.engineArgv,
              env: Object.entries(o.env ?? {}).map(([name, value]) => ({ name, value })),
              securityContext: RESTRICTED_CONTAINER_SECURITY,
              volumeMounts: [
                { name: 'script', mountPath: SCRIPT_MOUNT_PATH, readOnly: true },
                { name: 'work', mountPath: WORK_DIR },
              ],
            },
          ],
          securityContext: { runAsNonRoot: true, runAsUser: 12345, seccompProfile: { type: 'RuntimeDefault' } },
          volumes: [
            { name: 'script', configMap: { name: `lp-${o.runId}-script` } },
            { name: 'work', emptyDir: {} },
          ],
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

/** What a container must set to pass the "restricted" Pod Security Standard (with the pod's runAsNonRoot and seccomp). */
export const RESTRICTED_CONTAINER_SECURITY = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true };

/** A restricted-compliant pod spec around one plain container (for tests of Jobs and pods as such). */
export function restrictedPodSpec(container: { name: string; image: string }): Json {
  return {
    restartPolicy: 'Never',
    securityContext: { runAsNonRoot: true, runAsUser: 12345, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ ...container, securityContext: RESTRICTED_CONTAINER_SECURITY }],
  };
}

/** The k6 initializer script's parameters: `k6 archive`'s arguments (the user's, then the script). */
export const K6_INITIALIZER_ARGS = [`${SCRIPT_MOUNT_PATH}/test.js`];

export const GATLING_ARGV = ['gatling.sh', '-rm', 'local', '-sf', SCRIPT_MOUNT_PATH];

export function gatlingEnv(startAt: number): Record<string, string> {
  return { [ENV_START_AT]: new Date(startAt).toISOString(), [ENV_START_AT_EPOCH]: String(Math.ceil(startAt / 1000)) };
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

/** The job's pod once it matches `ready` (see `eventually`). */
export function podWhen(sim: KubeSim, jobName: string, ready: (pod: Json) => boolean, what: string, options?: WaitOptions): Promise<Json> {
  return eventually(sim, () => podsOf(sim, jobName).find(ready), `${jobName}: ${what}`, options);
}

/** The Job once it matches `ready` (see `eventually`). */
export function jobWhen(sim: KubeSim, jobName: string, ready: (job: Json) => boolean, what: string, options?: WaitOptions): Promise<Json> {
  return eventually(sim, () => sim.list('Job', NS).find((j) => j.metadata.name === jobName && ready(j)), `${jobName}: ${what}`, options);
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
