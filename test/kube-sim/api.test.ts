/**
 * The REST surface over real HTTP: discovery, CRUD with @kubernetes/client-node and raw fetch,
 * label selectors, patches, deletion and cascade, Status bodies for errors, the request log, and
 * injected API failures and latency.
 */
import { ApiException, BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KubeSim } from '../../local/kube-sim/index';
import { closeKubeSim, createConfigMap, createJob, eventually, http, newRunId, NS, podsOf, startVirtualKubeSim, restrictedPodSpec, type Json } from './helpers';

let sim: KubeSim;
let core: CoreV1Api;
let batch: BatchV1Api;

beforeAll(async () => {
  sim = await startVirtualKubeSim();
  core = sim.kubeConfig().makeApiClient(CoreV1Api);
  batch = sim.kubeConfig().makeApiClient(BatchV1Api);
});
afterAll(async () => {
  await closeKubeSim(sim);
});
beforeEach(() => {
  sim.faults.clear();
});

/** The Status body of a client-node failure (ApiException.body is the JSON text). */
async function statusOf(call: Promise<unknown>): Promise<Json> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  return JSON.parse((err as ApiException<string>).body);
}

function idleJob(name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): Json {
  return {
    metadata: { name, labels },
    spec: {
      backoffLimit: 0,
      template: { metadata: { labels }, spec: restrictedPodSpec({ name: 'c', image: 'busybox' }) },
      ...extra,
    },
  };
}

describe('discovery', () => {
  it('serves version, API versions, groups and resource lists', async () => {
    expect((await http(sim, 'GET', '/version')).body).toMatchObject({ major: '1', gitVersion: expect.stringContaining('kube-sim') });
    expect((await http(sim, 'GET', '/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    expect((await http(sim, 'GET', '/apis')).body.groups.map((g: Json) => g.name)).toEqual(['batch']);
    const core = (await http(sim, 'GET', '/api/v1')).body.resources.map((r: Json) => r.name);
    expect(core).toEqual(expect.arrayContaining(['namespaces', 'configmaps', 'services', 'pods', 'pods/log', 'pods/proxy', 'events']));
    const batch = (await http(sim, 'GET', '/apis/batch/v1')).body;
    expect(batch.resources[0]).toMatchObject({ name: 'jobs', kind: 'Job', namespaced: true });
  });

  it('answers unknown paths with a 404 Status', async () => {
    const res = await http(sim, 'GET', '/openapi/v2');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  });
});

describe('objects through @kubernetes/client-node', () => {
  it('creates, reads, lists by label selector, patches and deletes ConfigMaps', async () => {
    const runId = newRunId();
    const created = await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: `cm-${runId}`, labels: { 'loadplane.io/run-id': runId, role: 'a' } }, data: { k: 'v' } },
    });
    expect(created.metadata).toMatchObject({ name: `cm-${runId}`, namespace: NS });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: `cm2-${runId}`, labels: { 'loadplane.io/run-id': runId, role: 'b' } } },
    });

    const read = await core.readNamespacedConfigMap({ namespace: NS, name: `cm-${runId}` });
    expect(read.data).toEqual({ k: 'v' });
    const list = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: `loadplane.io/run-id=${runId},role in (b)` });
    expect(list.items.map((i) => i.metadata?.name)).toEqual([`cm2-${runId}`]);
    expect(Number(list.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata?.resourceVersion));

    // client-node's default PATCH content type is JSON patch.
    const patched = await core.patchNamespacedConfigMap({
      namespace: NS,
      name: `cm-${runId}`,
      body: [{ op: 'add', path: '/data/k2', value: 'v2' }],
    });
    expect(patched.data).toEqual({ k: 'v', k2: 'v2' });
    expect(Number(patched.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion));
    expect(patched.metadata?.uid).toBe(created.metadata?.uid);

    await core.deleteNamespacedConfigMap({ namespace: NS, name: `cm-${runId}` });
    expect((await statusOf(core.readNamespacedConfigMap({ namespace: NS, name: `cm-${runId}` }))).code).toBe(404);
  });

  it('creates a Job with defaults: selector, pod template labels, parallelism, backoffLimit', async () => {
    const job = await batch.createNamespacedJob({ namespace: NS, body: idleJob(`j-${newRunId()}`, { app: 'x' }, { backoffLimit: undefined }) });
    const uid = job.metadata!.uid!;
    expect(job.spec).toMatchObject({ parallelism: 1, completions: 1, backoffLimit: 6 });
    expect(job.spec?.selector?.matchLabels).toEqual({ 'batch.kubernetes.io/controller-uid': uid });
    expect(job.spec?.template.metadata?.labels).toMatchObject({ app: 'x', 'controller-uid': uid, 'job-name': job.metadata!.name });
  });

  it('allocates a cluster IP to a Service', async () => {
    const svc = await core.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: `s-${newRunId()}` }, spec: { selector: { a: 'b' }, ports: [{ port: 6565 }] } },
    });
    expect(svc.spec?.clusterIP).toMatch(/^10\.96\.\d+\.\d+$/);
    expect(svc.spec?.ports?.[0]).toMatchObject({ port: 6565, protocol: 'TCP', targetPort: 6565 });
  });
});

describe('patch and replace over HTTP', () => {
  it.each(['application/merge-patch+json', 'application/strategic-merge-patch+json'])(
    '%s merges maps, deletes with null, replaces lists',
    async (contentType) => {
      const name = `p-${newRunId()}`;
      await createConfigMap(sim, { metadata: { name, labels: { a: '1', b: '2' } }, data: { x: '1', y: '2' } });
      const res = await http(
        sim,
        'PATCH',
        `/api/v1/namespaces/${NS}/configmaps/${name}`,
        { metadata: { labels: { b: null, c: '3' } }, data: { y: '20' } },
        contentType,
      );
      expect(res.status).toBe(200);
      expect(res.body.metadata.labels).toEqual({ a: '1', c: '3' });
      expect(res.body.data).toEqual({ x: '1', y: '20' });
    },
  );

  it('rejects a patch carrying a stale resourceVersion with a 409 Conflict', async () => {
    const name = `p-${newRunId()}`;
    await createConfigMap(sim, { metadata: { name }, data: {} });
    const first = await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/${name}`, { data: { a: '1' } }, 'application/merge-patch+json');
    const stale = String(Number(first.body.metadata.resourceVersion) - 1);
    const res = await http(
      sim,
      'PATCH',
      `/api/v1/namespaces/${NS}/configmaps/${name}`,
      { metadata: { resourceVersion: stale }, data: { a: '2' } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ reason: 'Conflict', code: 409 });
  });

  it('keeps status owned by the controllers: a PUT cannot change it', async () => {
    const name = `j-${newRunId()}`;
    const job = await createJob(sim, idleJob(name, {}));
    // Without a resourceVersion a PUT is an unconditional update (the controller writes status meanwhile).
    const { resourceVersion: _, ...metadata } = job.metadata;
    const res = await http(sim, 'PUT', `/apis/batch/v1/namespaces/${NS}/jobs/${name}`, { ...job, metadata, status: { succeeded: 99 } });
    expect(res.status).toBe(200);
    expect(res.body.status.succeeded).not.toBe(99);
  });

  it('rejects an unsupported patch type with 415', async () => {
    const name = `p-${newRunId()}`;
    await createConfigMap(sim, { metadata: { name } });
    const res = await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/${name}`, {}, 'application/apply-patch+yaml');
    expect(res.status).toBe(415);
  });
});

describe('errors are Kubernetes Status objects', () => {
  it('404 NotFound for a missing object', async () => {
    const body = await statusOf(batch.readNamespacedJob({ namespace: NS, name: 'nope' }));
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'jobs.batch "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'batch', kind: 'jobs' },
      code: 404,
    });
  });

  it('404 for an object in a namespace that does not exist', async () => {
    const body = await statusOf(core.createNamespacedConfigMap({ namespace: 'no-such-ns', body: { metadata: { name: 'x' } } }));
    expect(body).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "no-such-ns" not found' });
  });

  it('409 AlreadyExists when creating an existing name', async () => {
    const name = `dup-${newRunId()}`;
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name } } });
    const body = await statusOf(core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name } } }));
    expect(body).toMatchObject({ code: 409, reason: 'AlreadyExists', message: `configmaps "${name}" already exists`, details: { name, kind: 'configmaps' } });
  });

  it.each([
    ['no name', { metadata: {} }, 'metadata.name'],
    ['a name that is not DNS-1123', { metadata: { name: 'Bad_Name' } }, 'metadata.name'],
    ['a name longer than 63 characters', { metadata: { name: 'x'.repeat(64) } }, 'metadata.name'],
    ['a label value longer than 63 characters', { metadata: { name: 'ok', labels: { a: 'v'.repeat(64) } } }, 'metadata.labels'],
    [
      'no template containers',
      { metadata: { name: 'ok' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [] } } } },
      'spec.template.spec.containers',
    ],
    [
      'no restartPolicy',
      { metadata: { name: 'ok' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } },
      'spec.template.spec.restartPolicy',
    ],
    [
      'a container without image',
      { metadata: { name: 'ok' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } } } },
      'spec.template.spec.containers[0].image',
    ],
  ])('422 Invalid for a Job with %s', async (_what, body, field) => {
    const valid = { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } } };
    const res = await http(sim, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, { ...valid, ...body });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, details: { group: 'batch', kind: 'Job' } });
    expect(res.body.details.causes.map((c: Json) => c.field)).toContain(field);
    expect(res.body.message).toContain('is invalid');
  });

  it('generateName makes a name with a 5-character suffix', async () => {
    const res = await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { generateName: 'gen-' } });
    expect(res.status).toBe(201);
    expect(res.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });
});

describe('deletion', () => {
  it('deletes a collection by label selector, leaving the rest', async () => {
    const runId = newRunId();
    for (const [name, role] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ] as const) {
      await createConfigMap(sim, { metadata: { name: `${name}-${runId}`, labels: { run: runId, role } } });
    }
    const res = await http(sim, 'DELETE', `/api/v1/namespaces/${NS}/configmaps?labelSelector=run%3D${runId},role%3Dx`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: Json) => i.metadata.name).sort()).toEqual([`a-${runId}`, `b-${runId}`]);
    expect(sim.list('ConfigMap', NS, `run=${runId}`).map((c) => c.metadata.name)).toEqual([`c-${runId}`]);
  });

  it.each([
    ['Background', 'propagationPolicy=Background', 0],
    ['Foreground', 'propagationPolicy=Foreground', 0],
    ['Orphan', 'propagationPolicy=Orphan', 1],
    ['the API default for batch/v1 Jobs (orphan)', '', 1],
  ])('a Job deleted with %s (%j): its pods left = %i', async (_what, query, remaining) => {
    const name = `j-${newRunId()}`;
    await createJob(sim, idleJob(name, {}));
    await eventually(sim, () => (podsOf(sim, name).length === 1 ? true : undefined), 'a pod');
    const res = await http(sim, 'DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/${name}${query ? `?${query}` : ''}`);
    expect(res.status).toBe(200);
    const pods = podsOf(sim, name);
    expect(pods).toHaveLength(remaining);
    if (remaining) expect(pods[0].metadata.ownerReferences).toBeUndefined();
  });

  it('takes the propagation policy from a DeleteOptions body (client-node)', async () => {
    const name = `j-${newRunId()}`;
    await createJob(sim, idleJob(name, {}));
    await eventually(sim, () => (podsOf(sim, name).length === 1 ? true : undefined), 'a pod');
    await batch.deleteNamespacedJob({ namespace: NS, name, propagationPolicy: 'Background' });
    expect(podsOf(sim, name)).toHaveLength(0);
  });

  it('deleting a namespace deletes what is in it', async () => {
    const ns = `ns-${newRunId()}`;
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cm' } } });
    const deleted = await http(sim, 'DELETE', `/api/v1/namespaces/${ns}`);
    expect(deleted.body.status.phase).toBe('Terminating');
    expect(sim.list('ConfigMap', ns)).toEqual([]);
    expect((await statusOf(core.readNamespace({ name: ns }))).code).toBe(404);
  });
});

describe('request log', () => {
  it('records method, path, query, status and body bytes of every request; clearRequestLog empties it', async () => {
    sim.clearRequestLog();
    const list = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods?labelSelector=a%3Db`);
    const missing = await http(sim, 'GET', `/api/v1/namespaces/${NS}/configmaps/missing`);
    expect(sim.requestLog.map(({ method, path, query, status }) => ({ method, path, query, status }))).toEqual([
      { method: 'GET', path: `/api/v1/namespaces/${NS}/pods`, query: { labelSelector: 'a=b' }, status: 200 },
      { method: 'GET', path: `/api/v1/namespaces/${NS}/configmaps/missing`, query: {}, status: 404 },
    ]);
    expect(sim.requestLog[0]!.url).toBe(`/api/v1/namespaces/${NS}/pods?labelSelector=a%3Db`);
    expect(sim.requestLog[1]!.simAt).toBeGreaterThanOrEqual(sim.requestLog[0]!.simAt);
    expect(sim.requestLog.map((r) => r.bytes)).toEqual([Buffer.byteLength(list.text), Buffer.byteLength(missing.text)]);
    sim.clearRequestLog();
    expect(sim.requestLog).toEqual([]);
  });
});

describe('injected API failures', () => {
  it.each([
    [429, 'TooManyRequests', '1'],
    [503, 'ServiceUnavailable', '1'],
    [500, 'InternalError', null],
  ] as const)('%i: the next request fails with a %s Status (Retry-After %s), the one after succeeds', async (code, reason, retryAfter) => {
    sim.faults.failNextRequests(1, code);
    const failed = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods`);
    expect(failed.status).toBe(code);
    expect(failed.body).toMatchObject({ kind: 'Status', status: 'Failure', reason, code });
    expect(failed.headers.get('retry-after')).toBe(retryAfter);
    expect((await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods`)).status).toBe(200);
    expect(sim.requestLog.at(-2)!.status).toBe(code);
  });

  it('fails only the requests that match method and path, n times', async () => {
    sim.faults.failNextRequests(2, 429, { method: 'post', pathIncludes: '/configmaps' });
    expect((await http(sim, 'GET', `/api/v1/namespaces/${NS}/configmaps`)).status).toBe(200);
    const body = { metadata: { generateName: 'f-' } };
    expect((await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, body)).status).toBe(429);
    expect((await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, body)).status).toBe(429);
    expect((await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, body)).status).toBe(201);
  });

  it('client-node sees a 429 as an ApiException carrying the Status', async () => {
    sim.faults.failNextRequests(1, 429);
    const body = await statusOf(core.listNamespacedPod({ namespace: NS }));
    expect(body).toMatchObject({ code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
  });

  it('adds latency to every response until reset', async () => {
    // Latency is real milliseconds (it stands for a slow API server), so this is measured on the wall
    // clock; the simulated clock stands still meanwhile, as it does during every request.
    sim.faults.setLatency(50);
    const started = Date.now();
    const simStarted = sim.now();
    await http(sim, 'GET', '/version');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(sim.now()).toBe(simStarted);
    sim.faults.setLatency(0);
  });
});
