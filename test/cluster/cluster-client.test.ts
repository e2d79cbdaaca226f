/**
 * ClusterClient over HTTP against kube-sim, client-node unstubbed: the objects are the real builders'
 * output, so this also checks that kube-sim runs what the builders produce.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type V1ConfigMap, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient, type ClusterClient } from '../../lambdas/cluster/cluster-client';
import { launchManifests, prepareManifests } from '../../lambdas/cluster/manifests/index';
import { scriptConfigMap } from '../../lambdas/cluster/manifests/script-configmap';
import type { RunnerPlan } from '../../lambdas/cluster/plan';
import {
  ClusterConflict,
  ClusterNotFound,
  ClusterThrottled,
  ClusterUnavailable,
  isRetryable,
} from '../../lambdas/core/errors';
import { K6_API_PORT, Labels, Role, SimAnnotations } from '../../lambdas/core/runner-contract';
import { parseSummaryFromLog } from '../../lambdas/core/summary';
import { startKubeSim } from '../../local/kube-sim/index';
import { k6Plan } from './fixtures/plan';

const NAMESPACE = 'loadplane';
const SCRIPT = `import http from 'k6/http';
export const options = { vus: 2, duration: '30s', thresholds: { http_req_duration: ['p(95)<500'] } };
export default function () { http.get('https://test.k6.io'); }
`;
const START = { data: { type: 'status', id: 'default', attributes: { paused: false, stopped: false } } };

let sim: Awaited<ReturnType<typeof startKubeSim>>;
let client: ClusterClient;
let kc: KubeConfig;

beforeAll(async () => {
  // 600× time: a 30 s simulated test takes 50 ms.
  sim = await startKubeSim({ port: 0, timeScale: 600 });
  kc = sim.kubeConfig();
  client = createClusterClient(kc);
});
afterAll(async () => {
  await sim?.close();
});

let runSeq = 0;
function plan(overrides: Partial<RunnerPlan> = {}): RunnerPlan {
  return k6Plan({
    runId: `run${++runSeq}x${Date.now().toString(36)}`,
    namespace: NAMESPACE,
    parallelism: 2,
    script: { kind: 'inline', file: 'test.js', content: SCRIPT },
    ...overrides,
  });
}

/** Polls until `check` returns a value (not a wall-clock assertion: only a bound on the wait). */
async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function createAll(p: RunnerPlan): Promise<void> {
  for (const obj of [...prepareManifests(p), ...launchManifests(p)]) await client.createIfAbsent(obj);
}

function runnerPods(pods: V1Pod[]): V1Pod[] {
  return pods.filter((p) => p.metadata?.labels?.[Labels.role] === Role.runner);
}

describe('createIfAbsent', () => {
  it('creating twice leaves one object: created, then exists', async () => {
    const p = plan();
    const cm = scriptConfigMap(p)!;
    expect(await client.createIfAbsent(cm)).toBe('created');
    expect(await client.createIfAbsent(cm)).toBe('exists');
    expect(await client.listByRun('ConfigMap', NAMESPACE, p.runId)).toHaveLength(1);
  });

  it('every object of a run, created twice, converges on one set', async () => {
    const p = plan();
    const objects = [...prepareManifests(p), ...launchManifests(p)];
    expect(await Promise.all(objects.map((o) => client.createIfAbsent(o)))).toEqual(objects.map(() => 'created'));
    expect(await Promise.all(objects.map((o) => client.createIfAbsent(o)))).toEqual(objects.map(() => 'exists'));
    expect((await client.listByRun('Job', NAMESPACE, p.runId)).map((j) => j.metadata!.name).sort()).toEqual([
      `lp-${p.runId}-initializer`,
      `lp-${p.runId}-runner-0`,
      `lp-${p.runId}-runner-1`,
    ]);
    expect(await client.listByRun('Service', NAMESPACE, p.runId)).toHaveLength(2);
  });

  it('an object of the same name that belongs to another run is a conflict (not retryable)', async () => {
    const mine = plan();
    const theirs = plan();
    await client.createIfAbsent(scriptConfigMap(theirs)!);
    const clash: V1ConfigMap = { ...scriptConfigMap(mine)!, metadata: { ...scriptConfigMap(mine)!.metadata, name: `lp-${theirs.runId}-script` } };
    const err = await client.createIfAbsent(clash).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterConflict);
    expect(isRetryable(err)).toBe(false);
    expect((err as Error).message).toContain(`run ${theirs.runId}`);
  });

  it('an unlabelled object of the same name is a conflict too', async () => {
    const p = plan();
    const name = `lp-${p.runId}-script`;
    const unlabelled: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE }, data: {} };
    expect(await client.createIfAbsent(unlabelled)).toBe('created');
    await expect(client.createIfAbsent(scriptConfigMap(p)!)).rejects.toThrow(/belongs to no loadplane run/);
  });
});

describe('listByRun', () => {
  it('returns this run’s objects only, each with its kind', async () => {
    const a = plan();
    const b = plan();
    await createAll(a);
    await createAll(b);
    const jobs = await client.listByRun('Job', NAMESPACE, a.runId);
    expect(jobs).toHaveLength(3);
    for (const job of jobs) {
      expect(job.kind).toBe('Job');
      expect(job.metadata!.labels![Labels.runId]).toBe(a.runId);
    }
    const pods = await eventually(async () => {
      const list = (await client.listByRun('Pod', NAMESPACE, a.runId)) as V1Pod[];
      return list.length === 3 ? list : undefined;
    }, 'three pods');
    expect(pods.every((p) => p.metadata!.labels![Labels.runId] === a.runId)).toBe(true);

    sim.clearRequestLog();
    await client.listByRun('Pod', NAMESPACE, a.runId);
    expect(sim.requestLog.map((r) => [r.method, r.path, r.query.labelSelector])).toEqual([
      ['GET', `/api/v1/namespaces/${NAMESPACE}/pods`, `${Labels.runId}=${a.runId}`],
    ]);
  });
});

describe('a k6 run end to end through the interface', () => {
  it('log tail, readiness and start through pods/proxy, result line in the log, then deleteRun leaves nothing', async () => {
    const p = plan({ parallelism: 2 });
    await createAll(p);

    // The initializer's output (k6 inspect --execution-requirements) is read from its log.
    const initializer = `lp-${p.runId}-initializer`;
    const initPod = await eventually(async () => {
      const pods = (await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[];
      const pod = pods.find((x) => x.metadata!.labels![Labels.role] === Role.initializer);
      return pod?.status?.phase === 'Succeeded' ? pod : undefined;
    }, 'the initializer to succeed');
    const inspect = await client.podLogTail(NAMESPACE, initPod.metadata!.name!, 50);
    expect(inspect).toContain('maxVUs');
    expect(initPod.metadata!.name!.startsWith(`${initializer}-`)).toBe(true);

    // AwaitReady: every runner answers GET /v1/status through the API server's proxy.
    const runners = await eventually(async () => {
      const pods = runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[]);
      if (pods.length !== 2 || pods.some((x) => x.status?.phase !== 'Running')) return undefined;
      const answers = await Promise.all(
        pods.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'GET', '/v1/status').catch(() => undefined)),
      );
      return answers.every((a) => a && a.status < 400) ? pods : undefined;
    }, 'runners ready');
    const status = await client.podProxy(NAMESPACE, runners[0]!.metadata!.name!, K6_API_PORT, 'GET', '/v1/status');
    expect(status.body).toMatchObject({ data: { attributes: { paused: true } } });

    // Start: PATCH every runner at once.
    const started = await Promise.all(
      runners.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'PATCH', '/v1/status', START)),
    );
    for (const s of started) {
      expect(s.status).toBe(200);
      expect(s.body).toMatchObject({ data: { attributes: { paused: false } } });
    }

    // Collect: each runner's log ends with its result line.
    for (const runner of runners) {
      const name = runner.metadata!.name!;
      const summary = await eventually(async () => parseSummaryFromLog(await client.podLogTail(NAMESPACE, name, 20)), `${name} result`);
      expect(summary.runner).toBe(Number(runner.metadata!.labels![Labels.runnerIndex]));
      expect(summary.exitCode).toBe(0);
    }

    // Cleanup.
    const { deleted } = await client.deleteRun(NAMESPACE, p.runId);
    expect(deleted).toBeGreaterThanOrEqual(1 + 3 + 2); // ConfigMap, 3 Jobs, 2 Services (+ pods still there)
    await eventually(async () => {
      const left = await Promise.all(
        (['Job', 'Pod', 'Service', 'ConfigMap'] as const).map((k) => client.listByRun(k, NAMESPACE, p.runId)),
      );
      return left.every((l) => l.length === 0) ? true : undefined;
    }, 'nothing labelled with the run');
    expect(sim.list('Pod', NAMESPACE, `${Labels.runId}=${p.runId}`)).toHaveLength(0);
    expect(await client.deleteRun(NAMESPACE, p.runId)).toEqual({ deleted: 0 });
  });
});

/** Waits until the run's runners are Running and answer the k6 API, then starts them all. */
async function startRunners(p: RunnerPlan): Promise<V1Pod[]> {
  const pods = await eventually(async () => {
    const list = runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[]);
    if (list.length !== p.parallelism || list.some((x) => x.status?.phase !== 'Running')) return undefined;
    const answers = await Promise.all(
      list.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'GET', '/v1/status').catch(() => undefined)),
    );
    return answers.every((a) => a && a.status < 400) ? list : undefined;
  }, 'runners ready');
  await Promise.all(pods.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'PATCH', '/v1/status', START)));
  return pods;
}

describe('what the builders put on pods reaches the cluster', () => {
  it('fault annotations from the plan apply to the chosen runner only (exit 99 on runner 1)', async () => {
    const p = plan({
      parallelism: 2,
      podAnnotations: { [SimAnnotations.exitCode]: '99', [SimAnnotations.faultRunners]: '1' },
    });
    await createAll(p);
    const runners = await startRunners(p);
    const codes = await Promise.all(
      runners.map(async (r) => {
        const summary = await eventually(
          async () => parseSummaryFromLog(await client.podLogTail(NAMESPACE, r.metadata!.name!, 20)),
          'a result line',
        );
        return [summary.runner, summary.exitCode];
      }),
    );
    expect(codes.sort()).toEqual([
      [0, 0],
      [1, 99],
    ]);
  });

  it.each([
    ['restart', 'a replacement pod (new UID), Job not failed'],
    ['fail', 'no replacement, the Job fails'],
  ] as const)('onRunnerRestart=%s, a disrupted runner pod → %s', async (policy, _outcome) => {
    const p = plan({ parallelism: 1, onRunnerRestart: policy });
    await createAll(p);
    const [first] = await startRunners(p);
    sim.faults.restartPod(NAMESPACE, first!.metadata!.name!);
    const job = `lp-${p.runId}-runner-0`;
    if (policy === 'restart') {
      const replacement = await eventually(async () => {
        const pods = runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[]);
        return pods.find((x) => x.metadata!.uid !== first!.metadata!.uid && x.status?.phase !== 'Failed');
      }, 'a replacement pod');
      expect(replacement.metadata!.labels![Labels.runnerIndex]).toBe('0');
      const [j] = (await client.listByRun('Job', NAMESPACE, p.runId)).filter((x) => x.metadata!.name === job) as V1Job[];
      expect(j!.status?.failed ?? 0).toBe(0);
    } else {
      const failed = await eventually(async () => {
        const jobs = (await client.listByRun('Job', NAMESPACE, p.runId)) as V1Job[];
        const j = jobs.find((x) => x.metadata!.name === job);
        return j?.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ? j : undefined;
      }, 'the Job to fail');
      expect(failed.status!.active ?? 0).toBe(0);
      expect(runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[])).toHaveLength(1);
    }
  });
});

describe('errors', () => {
  it.each([
    [429, ClusterThrottled],
    [500, ClusterUnavailable],
    [503, ClusterUnavailable],
  ] as const)('an injected %i surfaces as %s, retryable', async (status, type) => {
    sim.faults.failNextRequests(1, status);
    const err = await client.listByRun('Job', NAMESPACE, 'whatever').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(isRetryable(err)).toBe(true);
    expect((err as { status?: number }).status).toBe(status);
    expect(await client.listByRun('Job', NAMESPACE, 'whatever')).toEqual([]);
  });

  it('a proxy call to a missing pod is ClusterNotFound; to a pod not running is ClusterUnavailable', async () => {
    await expect(client.podProxy(NAMESPACE, 'no-such-pod', K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterNotFound);
    const p = plan({ parallelism: 1, podAnnotations: { 'kube-sim.loadplane.io/schedule-delay': 'never' } });
    await createAll(p);
    const pod = await eventually(async () => runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[])[0], 'a pending runner');
    await expect(client.podProxy(NAMESPACE, pod.metadata!.name!, K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterUnavailable);
  });

  it('an unreachable API server is ClusterUnavailable (retryable), and the token never appears in the message', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const unreachable = new KubeConfig();
    unreachable.loadFromClusterAndUser(
      { name: 'gone', server: `http://127.0.0.1:${port}`, skipTLSVerify: true },
      { name: 'me', token: 'k8s-aws-v1.secret-token' },
    );
    const gone = createClusterClient(unreachable);
    for (const call of [
      () => gone.listByRun('Pod', NAMESPACE, 'r'),
      () => gone.podProxy(NAMESPACE, 'p', K6_API_PORT, 'PATCH', '/v1/status', START),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailable);
      expect(isRetryable(err)).toBe(true);
      expect((err as Error).message).not.toContain('secret-token');
    }
  });
});
