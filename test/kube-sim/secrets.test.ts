/**
 * Secrets in kube-sim (stored as the API server stores them) and the kubelet resolving env references
 * when it starts a container, as pkg/kubelet/kubelet_pods.go makeEnvironmentVariables does: a missing
 * Secret/ConfigMap or key that is not optional leaves the container waiting in CreateContainerConfigError
 * with the kubelet's message and a Warning `Failed` event, until the object appears.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  http,
  isRunning,
  newRunId,
  NS,
  podsOf,
  podWhen,
  runnerJob,
  scriptConfigMap,
  startVirtualKubeSim,
  type Json,
} from './helpers';

const SCRIPT = `export const options = { vus: 1, duration: '30s' };\nexport default function () {}`;
const PAUSED_ARGV = ['k6', 'run', '/loadplane/scripts/test.js', '--address=0.0.0.0:6565', '--paused'];

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(() => closeKubeSim(sim));

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

async function createSecret(body: Json): Promise<Json> {
  const res = await http(sim, 'POST', `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', ...body });
  if (res.status !== 201) throw new Error(`create secret: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('the Secret kind', () => {
  it('stringData is merged into data as base64 (its keys winning) and never stored; type defaults to Opaque', async () => {
    const created = await createSecret({
      metadata: { name: 'merge' },
      data: { a: b64('from-data'), b: b64('kept') },
      stringData: { a: 'from-stringData', c: 'ünï' },
    });
    expect(created.type).toBe('Opaque');
    expect(created.stringData).toBeUndefined();
    expect(created.data).toEqual({ a: b64('from-stringData'), b: b64('kept'), c: b64('ünï') });
    const read = await http(sim, 'GET', `/api/v1/namespaces/${NS}/secrets/merge`);
    expect(read.body.data).toEqual(created.data);
    const patched = await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/secrets/merge`, { stringData: { d: 'patched' } }, 'application/merge-patch+json');
    expect(patched.status).toBe(200);
    expect(patched.body.data.d).toBe(b64('patched'));
    expect(patched.body.stringData).toBeUndefined();
  });

  it('data that is not base64 is a 400; a key that is no config key a 422', async () => {
    const bad = await http(sim, 'POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name: 'bad' }, data: { a: 'not base64!' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/illegal base64 data at input byte 3/);
    const key = await http(sim, 'POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name: 'bad-key' }, stringData: { 'a/b': 'x' } });
    expect(key.status).toBe(422);
    expect(key.body.details.causes[0]).toMatchObject({ field: 'data[a/b]', message: expect.stringContaining('a valid config key must consist of') });
  });

  it('is listed by discovery and selectable by type', async () => {
    const discovery = await http(sim, 'GET', '/api/v1');
    expect(discovery.body.resources.map((r: Json) => r.name)).toContain('secrets');
    await createSecret({ metadata: { name: 'typed' }, type: 'kubernetes.io/basic-auth', stringData: { username: 'u', password: 'p' } });
    const list = await http(sim, 'GET', `/api/v1/namespaces/${NS}/secrets?fieldSelector=type%3Dkubernetes.io%2Fbasic-auth`);
    expect(list.body.items.map((s: Json) => s.metadata.name)).toEqual(['typed']);
  });
});

/** A paused k6 runner whose container has `env` and `envFrom` as given. */
async function runnerWith(container: { env?: Json[]; envFrom?: Json[] }): Promise<{ name: string; runId: string }> {
  const runId = newRunId('sec');
  const name = `lp-${runId}-runner-0`;
  await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
  const job = runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: PAUSED_ARGV });
  Object.assign(job.spec.template.spec.containers[0], container);
  await createJob(sim, job);
  return { name, runId };
}

const waitingOf = (pod: Json) => pod.status.containerStatuses?.[0]?.state?.waiting;
const failedEvents = (jobName: string) =>
  sim
    .list('Event', NS)
    .filter((e) => e.reason === 'Failed' && String(e.involvedObject.name).startsWith(jobName))
    .map((e) => ({ type: e.type, message: e.message, fieldPath: e.involvedObject.fieldPath }));

describe('the kubelet resolves env references when it starts a container', () => {
  beforeAll(async () => {
    await createSecret({ metadata: { name: 'present' }, stringData: { other: 'x' } });
    await createConfigMap(sim, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings-present' }, data: { other: 'x' } });
  });

  it.each<[string, { env?: Json[]; envFrom?: Json[] }, string]>([
    ['a missing Secret', { env: [{ name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api-token', key: 'token' } } }] }, 'secret "api-token" not found'],
    [
      'a missing Secret key',
      { env: [{ name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'present', key: 'token' } } }] },
      `couldn't find key token in Secret ${NS}/present`,
    ],
    [
      'a missing ConfigMap key',
      { env: [{ name: 'REGION', valueFrom: { configMapKeyRef: { name: 'settings-present', key: 'region' } } }] },
      `couldn't find key region in ConfigMap ${NS}/settings-present`,
    ],
    [
      'a missing ConfigMap',
      { env: [{ name: 'REGION', valueFrom: { configMapKeyRef: { name: 'settings', key: 'region' } } }] },
      'configmap "settings" not found',
    ],
    ['a missing envFrom Secret', { envFrom: [{ secretRef: { name: 'shop-creds' } }] }, 'secret "shop-creds" not found'],
    ['a missing envFrom ConfigMap', { envFrom: [{ configMapRef: { name: 'shop-settings' } }] }, 'configmap "shop-settings" not found'],
  ])('%s: CreateContainerConfigError with the kubelet message and a Failed event', async (_title, container, message) => {
    const { name } = await runnerWith(container);
    const pod = await podWhen(sim, name, (p) => waitingOf(p)?.reason === 'CreateContainerConfigError', 'CreateContainerConfigError');
    expect(pod.status.phase).toBe('Pending');
    expect(waitingOf(pod)).toEqual({ reason: 'CreateContainerConfigError', message });
    expect(failedEvents(name)).toContainEqual({ type: 'Warning', message: `Error: ${message}`, fieldPath: 'spec.containers{runner}' });
  });

  it('retries, and starts the container with the values once the Secret appears; the process has env over envFrom, prefixes applied', async () => {
    const { name } = await runnerWith({
      env: [
        { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'late-token', key: 'token' } } },
        { name: 'SHOP_user', value: 'explicit-wins' },
        { name: 'OPTIONAL', valueFrom: { secretKeyRef: { name: 'never-created', key: 'x', optional: true } } },
        { name: 'OPTIONAL_KEY', valueFrom: { secretKeyRef: { name: 'late-token', key: 'absent', optional: true } } },
      ],
      envFrom: [{ secretRef: { name: 'late-token' }, prefix: 'SHOP_' }, { configMapRef: { name: 'never-created-either', optional: true } }],
    });
    await podWhen(sim, name, (p) => waitingOf(p)?.reason === 'CreateContainerConfigError', 'CreateContainerConfigError');
    await createSecret({ metadata: { name: 'late-token' }, stringData: { token: 'canary-7f3a', user: 'from-secret' } });
    const running = await podWhen(sim, name, isRunning, 'running once the Secret exists');
    const env = sim.containerEnvironment(NS, running.metadata.name)!;
    expect(env.get('API_TOKEN')).toBe('canary-7f3a');
    expect(env.get('SHOP_token')).toBe('canary-7f3a');
    expect(env.get('SHOP_user')).toBe('explicit-wins');
    expect(env.has('OPTIONAL')).toBe(false);
    expect(env.has('OPTIONAL_KEY')).toBe(false);
    // The pod object carries the references only.
    expect(JSON.stringify(podsOf(sim, name))).not.toContain('canary-7f3a');
  });
});
