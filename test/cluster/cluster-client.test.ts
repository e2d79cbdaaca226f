/**
 * ClusterClient over HTTP against kube-sim, client-node unstubbed: the objects are the real builders'
 * output, created by the stages' createAll, so this also checks that kube-sim runs what the builders
 * produce. The client's waits between attempts are recorded, not slept: no test waits on a backoff.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchV1Api, KubeConfig, type V1ConfigMap, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient, type ClusterClient, type ClusterClientOptions } from '../../lambdas/cluster/cluster-client';
import { launchAdoptions, prepareObjects } from '../../lambdas/cluster/manifests/index';
import { withoutOwners } from '../../lambdas/cluster/manifests/owners';
import { podFacts } from '../../lambdas/cluster/observe';
import { scriptConfigMap } from '../../lambdas/cluster/manifests/script-configmap';
import type { RunnerPlan } from '../../lambdas/cluster/plan';
import {
  ClusterConflict,
  ClusterForbidden,
  ClusterNotFound,
  ClusterRejected,
  ClusterThrottled,
  ClusterUnavailable,
  isRetryable,
} from '../../lambdas/core/errors';
import { K6_API_PORT, Labels, Role, SIMULATED_OUTPUT_MARKER, SimAnnotations } from '../../lambdas/core/runner-contract';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { engineAdapter } from '../../lambdas/engines';
import { createAll as createStageObjects } from '../../lambdas/stages/create-all';
import type { KubeSim } from '../../local/kube-sim/index';
import { closeKubeSim, eventually as eventuallyInSimTime, simSleep, startVirtualKubeSim } from '../kube-sim/helpers';
import { k6Plan } from './fixtures/plan';

const NAMESPACE = 'loadplane';
const SCRIPT = `import http from 'k6/http';
export const options = { vus: 2, duration: '30s', thresholds: { http_req_duration: ['p(95)<500'] } };
export default function () { http.get('https://test.k6.io'); }
`;
const START = { data: { type: 'status', id: 'default', attributes: { paused: false, stopped: false } } };

let sim: KubeSim;
let client: ClusterClient;
let kc: KubeConfig;
/** Every wait the client asked for between attempts, in ms. */
let slept: number[] = [];
const recordSleep = async (ms: number) => {
  slept.push(ms);
};

/** A client on kube-sim whose backoff waits are recorded instead of slept; the jitter draws 0.5. */
function simClient(options: ClusterClientOptions = {}): ClusterClient {
  return createClusterClient(kc, { sleep: recordSleep, random: () => 0.5, ...options });
}

beforeAll(async () => {
  // A VirtualClock: simulated time moves only while a test waits on it (eventually), never racing the
  // wall clock, so a loaded machine makes these tests slower, not different (architecture §11).
  sim = await startVirtualKubeSim();
  kc = sim.kubeConfig();
  client = simClient();
});
afterAll(async () => {
  await closeKubeSim(sim);
});
afterEach(() => {
  sim.faults.clear();
  slept = [];
});

let runSeq = 0;
function plan(overrides: Partial<RunnerPlan> = {}): RunnerPlan {
  return k6Plan({
    runId: `run${++runSeq}x${Date.now().toString(36)}`,
    namespace: NAMESPACE,
    parallelism: 2,
    script: { kind: 'inline', file: 'test.js', content: SCRIPT },
    // The create/list/own mechanics on runner Jobs alone; the coordinator's Job is one more of the same (owners.test.ts).
    setupTeardown: 'perRunner',
    ...overrides,
  });
}

/**
 * Checks until `check` returns a value, letting a simulated second pass between checks (and standing
 * still while a check makes its requests), bounded by simulated time: see test/kube-sim/helpers.ts.
 * A second, not the helper's finer default: these checks make API calls and see no short-lived state.
 */
function eventually<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  return eventuallyInSimTime(sim, check, what, { stepMs: 1000 });
}

/** Prepare's objects for the plan, as the stage makes them: the run's anchor, then what its engine's adapter builds. */
function prepareManifests(p: RunnerPlan) {
  return prepareObjects(p, engineAdapter(p.engine).prepareManifests(p), engineAdapter(p.engine).anchorData?.(p));
}
/** Launch's objects (the runner Jobs). */
function launchManifests(p: RunnerPlan) {
  return engineAdapter(p.engine).launchManifests(p);
}
/** What Launch adopts: the anchor (owned by the runner Jobs too from then on) and the script ConfigMap. */
function adoptions(p: RunnerPlan) {
  return launchAdoptions(p, launchManifests(p), engineAdapter(p.engine).anchorData?.(p));
}
/** The plan's script ConfigMap on its own, without its owner (the anchor), for the create mechanics. */
function scriptCm(p: RunnerPlan): V1ConfigMap {
  return withoutOwners(scriptConfigMap(p)!);
}

/** Objects of a kind the client no longer makes (Services), as kube-sim holds them for the run. */
function servicesOf(p: RunnerPlan) {
  return sim.list('Service', NAMESPACE, `${Labels.runId}=${p.runId}`);
}

/** What Prepare and Launch create for the plan, as they create it. */
async function createAll(p: RunnerPlan, c: ClusterClient = client): Promise<void> {
  await createStageObjects(c, prepareManifests(p));
  await createStageObjects(c, launchManifests(p), adoptions(p));
}

/** Requests the log holds from index `from` on, as `METHOD path` lines. */
function requestsSince(from: number, method?: string): string[] {
  return sim.requestLog
    .slice(from)
    .filter((r) => method === undefined || r.method === method)
    .map((r) => `${r.method} ${r.path}`);
}

function runnerPods(pods: V1Pod[]): V1Pod[] {
  return pods.filter((p) => p.metadata?.labels?.[Labels.role] === Role.runner);
}

describe('createIfAbsent', () => {
  it('creating twice leaves one object: created, then exists, with the same uid', async () => {
    const p = plan();
    const cm = scriptCm(p);
    const created = await client.createIfAbsent(cm);
    expect(created).toEqual({ outcome: 'created', uid: expect.any(String) });
    expect(await client.createIfAbsent(cm)).toEqual({ outcome: 'exists', uid: created.uid });
    expect(await client.listByRun('ConfigMap', NAMESPACE, p.runId)).toHaveLength(1);
  });

  it('every object of a run, created twice, converges on one set', async () => {
    const p = plan();
    await createAll(p);
    await createAll(p);
    expect((await client.listByRun('Job', NAMESPACE, p.runId)).map((j) => j.metadata!.name).sort()).toEqual([
      `lp-${p.runId}-initializer`,
      `lp-${p.runId}-runner-0`,
      `lp-${p.runId}-runner-1`,
    ]);
    expect((await client.listByRun('ConfigMap', NAMESPACE, p.runId)).map((c) => c.metadata!.name).sort()).toEqual([
      `lp-${p.runId}-anchor`,
      `lp-${p.runId}-script`,
    ]);
    // Start reaches the runners through pods/proxy: no Service per runner.
    expect(servicesOf(p)).toEqual([]);
  });

  it('an object of the same name that belongs to another run is a conflict (not retryable)', async () => {
    const mine = plan();
    const theirs = plan();
    await client.createIfAbsent(scriptCm(theirs));
    const clash: V1ConfigMap = { ...scriptCm(mine), metadata: { ...scriptCm(mine).metadata, name: `lp-${theirs.runId}-script` } };
    const err = await client.createIfAbsent(clash).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterConflict);
    expect(isRetryable(err)).toBe(false);
    expect((err as Error).message).toContain(`run ${theirs.runId}`);
    // createAll does not see it in its list (another run's label) and still finds the clash.
    await expect(createStageObjects(client, [clash])).rejects.toBeInstanceOf(ClusterConflict);
  });

  it('an unlabelled object of the same name is a conflict too', async () => {
    const p = plan();
    const name = `lp-${p.runId}-script`;
    const unlabelled: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE }, data: {} };
    expect((await client.createIfAbsent(unlabelled)).outcome).toBe('created');
    await expect(client.createIfAbsent(scriptCm(p))).rejects.toThrow(/belongs to no loadplane run/);
  });
});

describe('createAll creates only what is missing', () => {
  it('a retried Launch lists each kind once and creates what the failed attempt left, not all N', async () => {
    const p = plan({ parallelism: 6 });
    await createStageObjects(client, prepareManifests(p));
    // The first attempt got as far as runner 2: the Jobs of runners 0, 1 and 2 exist.
    await createStageObjects(client, launchManifests(p).slice(0, 3));
    const before = sim.requestLog.length;
    await createStageObjects(client, launchManifests(p), adoptions(p));
    const creates = requestsSince(before, 'POST');
    expect(creates).toEqual([3, 4, 5].map(() => `POST /apis/batch/v1/namespaces/${NAMESPACE}/jobs`));
    expect(requestsSince(before, 'GET').filter((r) => !r.includes(`lp-${p.runId}-anchor`))).toEqual([
      `GET /apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      `GET /api/v1/namespaces/${NAMESPACE}/configmaps`,
    ]);
    expect(requestsSince(before, 'PATCH')).toEqual([`PATCH /api/v1/namespaces/${NAMESPACE}/configmaps/lp-${p.runId}-anchor`]);
    expect(((await client.listByRun('Job', NAMESPACE, p.runId)) as V1Job[]).map((j) => j.metadata!.name).sort()).toEqual(
      [`lp-${p.runId}-initializer`, ...[0, 1, 2, 3, 4, 5].map((i) => `lp-${p.runId}-runner-${i}`)].sort(),
    );

    // Nothing is left: a third attempt lists and writes nothing.
    const again = sim.requestLog.length;
    await createStageObjects(client, launchManifests(p), adoptions(p));
    expect(requestsSince(again).filter((r) => !r.startsWith('GET'))).toEqual([]);
    expect(requestsSince(again)).toHaveLength(2);
  });

  it("where Prepare did not run (a run's other cluster), Launch makes the anchor and the script ConfigMap before any Job, so no pod waits for its volume", async () => {
    const p = plan({ parallelism: 3 });
    const before = sim.requestLog.length;
    await createStageObjects(client, launchManifests(p), adoptions(p));
    expect(requestsSince(before, 'POST')).toEqual([
      `POST /api/v1/namespaces/${NAMESPACE}/configmaps`,
      `POST /api/v1/namespaces/${NAMESPACE}/configmaps`,
      ...launchManifests(p).map(() => `POST /apis/batch/v1/namespaces/${NAMESPACE}/jobs`),
    ]);
    await simSleep(sim, 5_000);
    const pods = sim.list('Pod', NAMESPACE, `${Labels.runId}=${p.runId}`);
    expect(pods.length).toBe(launchManifests(p).length);
    expect(sim.list('Event', NAMESPACE).filter((e) => e.reason === 'FailedMount' && pods.some((pod) => pod.metadata.name === e.involvedObject.name))).toEqual(
      [],
    );
  });

  it('an injected 500 on a create is retried inside the call: one extra POST, and the stage does not fail', async () => {
    const p = plan({ parallelism: 3 });
    await createStageObjects(client, prepareManifests(p));
    sim.faults.failNextRequests(1, 500, { method: 'POST', pathIncludes: '/jobs' });
    const before = sim.requestLog.length;
    await createStageObjects(client, launchManifests(p), adoptions(p));
    const creates = sim.requestLog.slice(before).filter((r) => r.method === 'POST');
    expect(creates.filter((r) => r.status === 500)).toHaveLength(1);
    expect(creates.filter((r) => r.status === 201)).toHaveLength(3);
    expect(creates).toHaveLength(4);
    expect(await client.listByRun('Job', NAMESPACE, p.runId)).toHaveLength(4);
  });
});

describe('ownership: the anchor owns every other object of the run, every Job of the run owns the anchor', () => {
  const jobRef = (job: V1Job) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.metadata!.name,
    uid: job.metadata!.uid,
    controller: false,
    blockOwnerDeletion: false,
  });
  const anchorRef = (cm: V1ConfigMap) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: cm.metadata!.name,
    uid: cm.metadata!.uid,
    controller: false,
    blockOwnerDeletion: false,
  });
  const configMaps = async (p: RunnerPlan) => {
    const all = (await client.listByRun('ConfigMap', NAMESPACE, p.runId)) as V1ConfigMap[];
    return { anchor: all.find((c) => c.metadata!.name === `lp-${p.runId}-anchor`), script: all.find((c) => c.metadata!.name === `lp-${p.runId}-script`), all };
  };
  const ownerNamesOf = (o: V1ConfigMap | V1Job | undefined) => (o?.metadata?.ownerReferences ?? []).map((r) => r.name).sort();

  it('Prepare: the anchor first (no owner yet), then the script ConfigMap the initializer mounts and the initializer, owned by it, then the initializer owns the anchor', async () => {
    const p = plan();
    const before = sim.requestLog.length;
    await createStageObjects(client, prepareManifests(p), [], { first: true });
    expect(requestsSince(before).filter((r) => !r.startsWith('GET'))).toEqual([
      `POST /api/v1/namespaces/${NAMESPACE}/configmaps`,
      `POST /api/v1/namespaces/${NAMESPACE}/configmaps`,
      `POST /apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      `PATCH /api/v1/namespaces/${NAMESPACE}/configmaps/lp-${p.runId}-anchor`,
    ]);
    // A first attempt lists nothing: nothing of the run exists yet; the one read is addOwners'.
    expect(requestsSince(before, 'GET')).toEqual([`GET /api/v1/namespaces/${NAMESPACE}/configmaps/lp-${p.runId}-anchor`]);
    const [initializer] = (await client.listByRun('Job', NAMESPACE, p.runId)) as V1Job[];
    const { anchor, script } = await configMaps(p);
    expect(anchor!.metadata!.ownerReferences).toEqual([jobRef(initializer!)]);
    expect(initializer!.metadata!.ownerReferences).toEqual([anchorRef(anchor!)]);
    expect(script!.metadata!.ownerReferences).toEqual([anchorRef(anchor!)]);
  });

  it('Launch: the runner Jobs owned by the anchor, and the anchor owned by the initializer and every runner Job', async () => {
    const p = plan({ parallelism: 3 });
    await createAll(p);
    const jobs = (await client.listByRun('Job', NAMESPACE, p.runId)) as V1Job[];
    expect(jobs).toHaveLength(4);
    const { anchor, script, all } = await configMaps(p);
    expect(all).toHaveLength(2);
    for (const job of jobs) expect(job.metadata!.ownerReferences).toEqual([anchorRef(anchor!)]);
    expect(servicesOf(p)).toEqual([]);
    expect(ownerNamesOf(anchor)).toEqual([`lp-${p.runId}-initializer`, `lp-${p.runId}-runner-0`, `lp-${p.runId}-runner-1`, `lp-${p.runId}-runner-2`]);
    expect(anchor!.metadata!.ownerReferences).toEqual(expect.arrayContaining(jobs.map(jobRef)));
    expect(script!.metadata!.ownerReferences).toEqual([anchorRef(anchor!)]);
  });

  it('Gatling: the anchor made at Prepare (no owner yet) is adopted by every runner Job at Launch', async () => {
    const p = plan({ engine: 'gatling', image: 'ghcr.io/st-tech/gatling:latest', parallelism: 2, startAt: new Date(sim.now() + 60_000).toISOString() });
    await createStageObjects(client, prepareManifests(p));
    expect((await configMaps(p)).anchor!.metadata!.ownerReferences).toBeUndefined();
    await createStageObjects(client, launchManifests(p), adoptions(p));
    expect(ownerNamesOf((await configMaps(p)).anchor)).toEqual([`lp-${p.runId}-runner-0`, `lp-${p.runId}-runner-1`]);
  });

  it('an anchor gone before Launch (its initializer was deleted, and it and the script ConfigMap with it) is made again, owned by the runners', async () => {
    const p = plan({ parallelism: 2 });
    await createStageObjects(client, prepareManifests(p));
    sim.faults.deleteObject('Job', NAMESPACE, `lp-${p.runId}-initializer`);
    expect(await client.listByRun('ConfigMap', NAMESPACE, p.runId)).toEqual([]);
    await createStageObjects(client, launchManifests(p), adoptions(p));
    const { anchor, script } = await configMaps(p);
    expect(ownerNamesOf(anchor)).toEqual([`lp-${p.runId}-runner-0`, `lp-${p.runId}-runner-1`]);
    expect(script!.metadata!.ownerReferences).toEqual([anchorRef(anchor!)]);
  });

  it('deleting the Jobs removes the anchor and the script ConfigMap through the garbage collector once the last is gone', async () => {
    const p = plan({ parallelism: 2 });
    await createAll(p);
    const batch = kc.makeApiClient(BatchV1Api);
    const del = (name: string) => batch.deleteNamespacedJob({ namespace: NAMESPACE, name, propagationPolicy: 'Background' });
    await del(`lp-${p.runId}-initializer`);
    expect(ownerNamesOf((await configMaps(p)).anchor)).toEqual([`lp-${p.runId}-runner-0`, `lp-${p.runId}-runner-1`]);
    await del(`lp-${p.runId}-runner-0`);
    // Still owned by runner 1.
    expect((await configMaps(p)).all).toHaveLength(2);
    await del(`lp-${p.runId}-runner-1`);
    expect(await client.listByRun('ConfigMap', NAMESPACE, p.runId)).toEqual([]);
  });

  it('deleting the anchor removes every object of the run, the Jobs with their pods', async () => {
    const p = plan({ parallelism: 2 });
    await createAll(p);
    await eventually(async () => ((await client.listByRun('Pod', NAMESPACE, p.runId)).length === 3 ? true : undefined), 'three pods');
    expect(await client.deleteObject('ConfigMap', NAMESPACE, `lp-${p.runId}-anchor`)).toBe(true);
    for (const kind of ['Job', 'ConfigMap', 'Pod'] as const) expect(await client.listByRun(kind, NAMESPACE, p.runId)).toEqual([]);
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
    const started = await Promise.all(runners.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'PATCH', '/v1/status', START)));
    for (const s of started) {
      expect(s.status).toBe(200);
      expect(s.body).toMatchObject({ data: { attributes: { paused: false } } });
    }

    // Collect: each runner's exit code from its pod, its result from the LOADPLANE_RESULT line at the end of its log.
    for (const runner of runners) {
      const summary = await resultOf(p, runner.metadata!.name!);
      expect(summary.runner).toBe(Number(runner.metadata!.labels![Labels.runnerIndex]));
      expect(summary.exitCode).toBe(0);
      expect(summary.simulated).toBe(true);
      expect(summary.requests.count).toBeGreaterThan(0);
      expect(summary.latency.quantiles.length).toBeGreaterThan(0);
      // The script's threshold, read from k6's summary export.
      expect(summary.thresholds).toEqual([{ metric: 'http_req_duration', expression: 'p(95)<500', ok: true }]);
    }

    // Cleanup. The 3 Jobs go first; the anchor, owned by them, and the script ConfigMap it owns go with them.
    const { deleted } = await client.deleteRun(NAMESPACE, p.runId);
    expect(deleted).toBeGreaterThanOrEqual(3);
    await eventually(async () => {
      const left = await Promise.all((['Job', 'Pod', 'ConfigMap'] as const).map((k) => client.listByRun(k, NAMESPACE, p.runId)));
      return left.every((l) => l.length === 0) ? true : undefined;
    }, 'nothing labelled with the run');
    expect(servicesOf(p)).toEqual([]);
    expect(sim.list('Pod', NAMESPACE, `${Labels.runId}=${p.runId}`)).toHaveLength(0);
    expect(await client.deleteRun(NAMESPACE, p.runId)).toEqual({ deleted: 0 });
  });
});

/**
 * What Collect reads of a finished runner: its exit code from the pod, and its result as the engine's
 * adapter finds it in the end of its log (k6: the runner script's LOADPLANE_RESULT line).
 */
async function resultOf(p: RunnerPlan, pod: string): Promise<RunnerSummary> {
  const engine = engineAdapter(p.engine);
  const facts = await eventually(async () => {
    const found = ((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[]).map(podFacts).find((f) => f.name === pod);
    return found?.exitCode !== undefined ? found : undefined;
  }, `${pod} to exit`);
  const log = await client.podLogTail(NAMESPACE, pod, engine.resultLogLines);
  const summary = engine.parseResult(log, {
    runner: facts.index!,
    exitCode: facts.exitCode!,
    durationMs: facts.finishedAt! - facts.startedAt!,
    simulated: log.includes(SIMULATED_OUTPUT_MARKER),
  });
  expect(summary, `${pod}'s result in:\n${log}`).toBeDefined();
  return summary!;
}

/** Waits until the run's runners are Running and answer the k6 API, then starts them all. */
async function startRunners(p: RunnerPlan): Promise<V1Pod[]> {
  const pods = await eventually(async () => {
    const list = runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[]);
    if (list.length !== p.parallelism || list.some((x) => x.status?.phase !== 'Running')) return undefined;
    const answers = await Promise.all(list.map((x) => client.podProxy(NAMESPACE, x.metadata!.name!, K6_API_PORT, 'GET', '/v1/status').catch(() => undefined)));
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
        const summary = await resultOf(p, r.metadata!.name!);
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
    [429, [1_000, 1_000, 1_000, 1_000]],
    [503, [1_000, 1_000, 1_000, 1_000]],
    [500, [100, 200, 400, 800]],
  ] as const)('a burst of four injected %i is absorbed within one call (waits %j ms: Retry-After, else backoff)', async (status, waits) => {
    sim.faults.failNextRequests(4, status);
    const before = sim.requestLog.length;
    expect(await client.listByRun('Job', NAMESPACE, 'whatever')).toEqual([]);
    expect(sim.requestLog.slice(before).map((r) => r.status)).toEqual([status, status, status, status, 200]);
    expect(slept).toEqual(waits);
  });

  it.each([
    [429, ClusterThrottled],
    [500, ClusterUnavailable],
    [503, ClusterUnavailable],
  ] as const)('a burst longer than the attempts surfaces as %s, retryable, after 5 requests', async (status, type) => {
    sim.faults.failNextRequests(5, status);
    const before = sim.requestLog.length;
    const err = await client.listByRun('Job', NAMESPACE, 'whatever').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(isRetryable(err)).toBe(true);
    expect((err as { status?: number }).status).toBe(status);
    expect(sim.requestLog.length - before).toBe(5);
    expect(await client.listByRun('Job', NAMESPACE, 'whatever')).toEqual([]);
  });

  it('maxAttempts bounds the attempts', async () => {
    sim.faults.failNextRequests(2, 500);
    const before = sim.requestLog.length;
    await expect(simClient({ maxAttempts: 2 }).listByRun('Job', NAMESPACE, 'whatever')).rejects.toBeInstanceOf(ClusterUnavailable);
    expect(sim.requestLog.length - before).toBe(2);
  });

  it('pods/proxy calls are retried too: two 429s, then the API server’s 404 for a missing pod, which is not', async () => {
    sim.faults.failNextRequests(2, 429, { pathIncludes: '/proxy' });
    const before = sim.requestLog.length;
    await expect(client.podProxy(NAMESPACE, 'no-such-pod', K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterNotFound);
    expect(sim.requestLog.slice(before).map((r) => r.status)).toEqual([429, 429, 404]);
    expect(slept).toEqual([1_000, 1_000]);
  });

  it.each([
    ['404', () => client.podLogTail(NAMESPACE, 'no-such-pod', 5), ClusterNotFound],
    ['404 (log head)', () => client.podLogHead(NAMESPACE, 'no-such-pod', 16 * 1024, { timestamps: true }), ClusterNotFound],
    ['400', () => client.listByRun('Job', NAMESPACE, 'not a label value'), ClusterRejected],
    [
      '422',
      () => client.createIfAbsent({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_A_DNS_Name', namespace: NAMESPACE }, data: {} }),
      ClusterRejected,
    ],
  ] as const)('an HTTP %s is answered at once: one request, no retry', async (_, call, type) => {
    const before = sim.requestLog.length;
    await expect(call()).rejects.toBeInstanceOf(type);
    expect(sim.requestLog.length - before).toBe(1);
    expect(slept).toEqual([]);
  });

  it('an HTTP 403 is answered at once: one request, no retry', async () => {
    let requests = 0;
    const forbidding: Server = createServer((_req, res) => {
      requests++;
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'jobs is forbidden', reason: 'Forbidden', code: 403 }));
    });
    await new Promise<void>((r) => forbidding.listen(0, '127.0.0.1', r));
    try {
      const forbidden = new KubeConfig();
      forbidden.loadFromClusterAndUser(
        { name: 'f', server: `http://127.0.0.1:${(forbidding.address() as AddressInfo).port}`, skipTLSVerify: true },
        { name: 'me', token: 't' },
      );
      const c = createClusterClient(forbidden, { sleep: recordSleep });
      await expect(c.listByRun('Job', NAMESPACE, 'r')).rejects.toBeInstanceOf(ClusterForbidden);
      await expect(c.podProxy(NAMESPACE, 'p', K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterForbidden);
      expect(requests).toBe(2);
      expect(slept).toEqual([]);
    } finally {
      await new Promise<void>((r) => forbidding.close(() => r()));
    }
  });

  it('a call that gets no answer times out: ClusterUnavailable (retryable) after its attempts, for the API and for pods/proxy', async () => {
    sim.faults.setLatency(2_000);
    const impatient = simClient({ requestTimeoutMs: 300, maxAttempts: 2 });
    for (const call of [
      () => impatient.listByRun('Job', NAMESPACE, 'whatever'),
      () => impatient.podProxy(NAMESPACE, 'no-such-pod', K6_API_PORT, 'GET', '/v1/status'),
    ]) {
      slept = [];
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailable);
      expect(isRetryable(err)).toBe(true);
      expect((err as Error).message).toMatch(/no answer within 300 ms/);
      expect(slept).toHaveLength(1);
    }
  });

  it('a proxy call to a missing pod is ClusterNotFound; to a pod not running is ClusterUnavailable', async () => {
    await expect(client.podProxy(NAMESPACE, 'no-such-pod', K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterNotFound);
    const p = plan({ parallelism: 1, podAnnotations: { 'kube-sim.loadplane.io/schedule-delay': 'never' } });
    await createAll(p);
    const pod = await eventually(async () => runnerPods((await client.listByRun('Pod', NAMESPACE, p.runId)) as V1Pod[])[0], 'a pending runner');
    await expect(client.podProxy(NAMESPACE, pod.metadata!.name!, K6_API_PORT, 'GET', '/v1/status')).rejects.toBeInstanceOf(ClusterUnavailable);
    // The API server's 503 for a pod it cannot reach (no Retry-After) is the pod not ready: the stages poll, the call does not retry.
    expect(slept).toEqual([]);
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
    const gone = createClusterClient(unreachable, { sleep: recordSleep });
    for (const call of [() => gone.listByRun('Pod', NAMESPACE, 'r'), () => gone.podProxy(NAMESPACE, 'p', K6_API_PORT, 'PATCH', '/v1/status', START)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailable);
      expect(isRetryable(err)).toBe(true);
      expect((err as Error).message).not.toContain('secret-token');
    }
  });
});
