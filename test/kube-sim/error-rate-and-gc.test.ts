/**
 * Two behaviours of kube-sim that loadplane's hardening leans on: a seeded error rate (a fraction of
 * requests fail, the same ones on every run), and Kubernetes' garbage collection of objects with
 * several owners (deleted when the LAST owner goes; until then the gone owner's reference is dropped).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SEED, mulberry32 } from '../../local/kube-sim/seeded-random';
import type { KubeSim } from '../../local/kube-sim/index';
import { closeKubeSim, createConfigMap, createJob, http, newRunId, NS, startVirtualKubeSim, restrictedPodSpec, type Json } from './helpers';

let sim: KubeSim;

beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});
beforeEach(() => {
  sim.faults.clear();
});

const LIST = `/api/v1/namespaces/${NS}/configmaps`;

/** Statuses of `n` sequential GETs of the ConfigMap list. */
async function statuses(n: number, path = LIST): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await http(sim, 'GET', path)).status);
  return out;
}

describe('setErrorRate', () => {
  it('fails each matching request with the given probability, from a seeded source: the failures are the draws below the rate', async () => {
    sim.faults.setErrorRate(0.25, 500);
    const seen = await statuses(200);
    const draws = mulberry32(DEFAULT_FAULT_SEED);
    expect(seen).toEqual(Array.from({ length: 200 }, () => (draws() < 0.25 ? 500 : 200)));
    const failed = seen.filter((s) => s === 500).length;
    expect(failed).toBeGreaterThan(30);
    expect(failed).toBeLessThan(70);
  });

  it('clear() restarts the source at the default seed: the same requests fail again; setRandomSeed changes which', async () => {
    sim.faults.setErrorRate(0.3, 500);
    const first = await statuses(60);
    sim.faults.clear();
    sim.faults.setErrorRate(0.3, 500);
    expect(await statuses(60)).toEqual(first);
    sim.faults.setRandomSeed(7);
    const seeded = await statuses(60);
    expect(seeded).not.toEqual(first);
    sim.faults.setRandomSeed(7);
    expect(await statuses(60)).toEqual(seeded);
  });

  it.each([
    [429, 'TooManyRequests', '1'],
    [503, 'ServiceUnavailable', '1'],
    [500, 'InternalError', null],
  ] as const)('%i answers a %s Status, with Retry-After %s', async (code, reason, retryAfter) => {
    sim.faults.setErrorRate(1, code);
    const res = await http(sim, 'GET', LIST);
    expect(res.status).toBe(code);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason, code });
    expect(res.headers.get('retry-after')).toBe(retryAfter);
  });

  it('applies to matching requests only; 0 removes it; a rate outside [0, 1] is refused', async () => {
    sim.faults.setErrorRate(1, 503, { method: 'post', pathIncludes: '/configmaps' });
    expect((await http(sim, 'GET', LIST)).status).toBe(200);
    expect((await http(sim, 'POST', LIST, { metadata: { generateName: 'e-' } })).status).toBe(503);
    sim.faults.setErrorRate(0, 503, { method: 'POST', pathIncludes: '/configmaps' });
    expect((await http(sim, 'POST', LIST, { metadata: { generateName: 'e-' } })).status).toBe(201);
    expect(() => sim.faults.setErrorRate(1.5, 500)).toThrow(RangeError);
    expect(() => sim.faults.setErrorRate(-0.1, 500)).toThrow(RangeError);
  });

  it('failNextRequests is served first', async () => {
    sim.faults.setErrorRate(1, 500);
    sim.faults.failNextRequests(1, 429);
    expect(await statuses(2)).toEqual([429, 500]);
  });
});

describe('garbage collection of dependents with several owners', () => {
  async function idleJob(name: string): Promise<Json> {
    return createJob(sim, {
      metadata: { name },
      spec: { backoffLimit: 0, template: { spec: restrictedPodSpec({ name: 'c', image: 'busybox' }) } },
    });
  }
  const ref = (job: Json) => ({ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: false, blockOwnerDeletion: false });
  const deleteJob = (name: string, policy = 'Background') => http(sim, 'DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/${name}?propagationPolicy=${policy}`);
  const configMap = (name: string): Json | undefined => sim.list('ConfigMap', NS).find((c) => c.metadata.name === name);

  it('a dependent lives until its last owner is deleted; the references to deleted owners are dropped', async () => {
    const id = newRunId();
    const [a, b, c] = [await idleJob(`a-${id}`), await idleJob(`b-${id}`), await idleJob(`c-${id}`)];
    await createConfigMap(sim, { metadata: { name: `cm-${id}`, ownerReferences: [ref(a), ref(b), ref(c)] } });
    await deleteJob(a.metadata.name);
    expect(configMap(`cm-${id}`).metadata.ownerReferences).toEqual([ref(b), ref(c)]);
    await deleteJob(b.metadata.name, 'Foreground');
    expect(configMap(`cm-${id}`).metadata.ownerReferences).toEqual([ref(c)]);
    await deleteJob(c.metadata.name);
    expect(configMap(`cm-${id}`)).toBeUndefined();
  });

  it('a dependent whose only owner is deleted goes with it (Background), or stays without the reference (Orphan)', async () => {
    const id = newRunId();
    const [a, b] = [await idleJob(`a-${id}`), await idleJob(`b-${id}`)];
    await createConfigMap(sim, { metadata: { name: `one-${id}`, ownerReferences: [ref(a)] } });
    await createConfigMap(sim, { metadata: { name: `orphan-${id}`, ownerReferences: [ref(b)] } });
    await deleteJob(a.metadata.name);
    expect(configMap(`one-${id}`)).toBeUndefined();
    await deleteJob(b.metadata.name, 'Orphan');
    expect(configMap(`orphan-${id}`).metadata.ownerReferences).toBeUndefined();
  });

  it('a remaining reference to an owner that no longer exists (same name, another uid) does not keep the dependent', async () => {
    const id = newRunId();
    const [a, b] = [await idleJob(`a-${id}`), await idleJob(`b-${id}`)];
    const stale = { ...ref(b), uid: '00000000-0000-0000-0000-000000000000' };
    await createConfigMap(sim, { metadata: { name: `cm-${id}`, ownerReferences: [ref(a), stale] } });
    await deleteJob(a.metadata.name);
    expect(configMap(`cm-${id}`)).toBeUndefined();
  });
});
