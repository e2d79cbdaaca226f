/**
 * Two behaviours of kube-sim that loadplane's hardening leans on: a seeded error rate (a fraction of
 * requests fail, the same ones on every run), and Kubernetes' garbage collection: of objects with
 * several owners (deleted when the LAST owner goes; until then the gone owner's reference is dropped),
 * and of objects created or updated naming an owner that is already gone (test/scenarios/late-creates.test.ts: a create
 * the API server executes after the run's Cleanup), as pkg/controller/garbagecollector does.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SEED, mulberry32 } from '../../local/kube-sim/seeded-random';
import type { KubeSim } from '../../local/kube-sim/index';
import { ABSENT_OWNER_COLLECTION_MS } from '../../local/kube-sim/garbage-collector';
import { closeKubeSim, createConfigMap, createJob, http, newRunId, NS, podsOf, simSleep, startVirtualKubeSim, restrictedPodSpec, type Json } from './helpers';

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
  const ref = (job: Json) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.metadata.name,
    uid: job.metadata.uid,
    controller: false,
    blockOwnerDeletion: false,
  });
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

describe('garbage collection of objects written with an owner that is already gone (graph_builder.go: a "virtual" owner node)', () => {
  async function idleJob(name: string, extra: Json = {}): Promise<Json> {
    return createJob(sim, {
      metadata: { name, ...extra },
      spec: { backoffLimit: 0, template: { spec: restrictedPodSpec({ name: 'c', image: 'busybox' }) } },
    });
  }
  const ref = (obj: Json, apiVersion = 'batch/v1', kind = 'Job') => ({
    apiVersion,
    kind,
    name: obj.metadata.name,
    uid: obj.metadata.uid,
    controller: false,
    blockOwnerDeletion: false,
  });
  const deleteJob = (name: string) => http(sim, 'DELETE', `/apis/batch/v1/namespaces/${NS}/jobs/${name}?propagationPolicy=Background`);
  const configMap = (name: string): Json | undefined => sim.list('ConfigMap', NS).find((c) => c.metadata.name === name);
  const job = (name: string): Json | undefined => sim.list('Job', NS).find((j) => j.metadata.name === name);
  /** A Job that existed and was deleted: a reference to it is one to an owner that is gone. */
  async function goneJob(name: string): Promise<Json> {
    const gone = await idleJob(name);
    await deleteJob(name);
    return gone;
  }

  it('a ConfigMap created owned by a deleted Job is collected (before the fix it stayed for good)', async () => {
    const id = newRunId();
    const owner = await goneJob(`init-${id}`);
    await createConfigMap(sim, { metadata: { name: `late-${id}`, ownerReferences: [ref(owner)] } });
    expect(configMap(`late-${id}`)).toBeDefined(); // the create succeeds, as on a real API server
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(configMap(`late-${id}`)).toBeUndefined();
  });

  it('a Job created owned by a deleted ConfigMap is collected with its pods (Background, never orphaned)', async () => {
    const id = newRunId();
    await createConfigMap(sim, { metadata: { name: `anchor-${id}` } });
    const anchor = sim.list('ConfigMap', NS).find((c) => c.metadata.name === `anchor-${id}`);
    await http(sim, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/anchor-${id}`);
    await idleJob(`late-${id}`, { ownerReferences: [ref(anchor, 'v1', 'ConfigMap')] });
    // The Job controller makes its pod at once; the collector comes after it, and the pod goes with the Job.
    await simSleep(sim, 1);
    expect(podsOf(sim, `late-${id}`)).toHaveLength(1);
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(job(`late-${id}`)).toBeUndefined();
    expect(podsOf(sim, `late-${id}`)).toEqual([]);
  });

  it('an owner is found by name and uid: the same name with another uid is gone', async () => {
    const id = newRunId();
    const first = await goneJob(`again-${id}`);
    await idleJob(`again-${id}`); // the name is taken again, by another object
    await createConfigMap(sim, { metadata: { name: `cm-${id}`, ownerReferences: [ref(first)] } });
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(configMap(`cm-${id}`)).toBeUndefined();
  });

  it('with one owner there and one gone, only the reference to the gone one is removed', async () => {
    const id = newRunId();
    const gone = await goneJob(`gone-${id}`);
    const live = await idleJob(`live-${id}`);
    await createConfigMap(sim, { metadata: { name: `cm-${id}`, ownerReferences: [ref(gone), ref(live)] } });
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(configMap(`cm-${id}`).metadata.ownerReferences).toEqual([ref(live)]);
  });

  it('an update that adds a reference to a gone owner: the only one, collected; beside a live one, removed', async () => {
    const id = newRunId();
    const gone = await goneJob(`gone-${id}`);
    const live = await idleJob(`live-${id}`);
    await createConfigMap(sim, { metadata: { name: `alone-${id}` } });
    await createConfigMap(sim, { metadata: { name: `beside-${id}`, ownerReferences: [ref(live)] } });
    const patch = (name: string, refs: Json[]) =>
      http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/${name}`, { metadata: { ownerReferences: refs } }, 'application/merge-patch+json');
    expect((await patch(`alone-${id}`, [ref(gone)])).status).toBe(200);
    expect((await patch(`beside-${id}`, [ref(live), ref(gone)])).status).toBe(200);
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(configMap(`alone-${id}`)).toBeUndefined();
    expect(configMap(`beside-${id}`).metadata.ownerReferences).toEqual([ref(live)]);
  });

  it("a namespaced owner is looked for in the dependent's namespace; a cluster-scoped one (a Namespace) cluster-wide", async () => {
    const id = newRunId();
    const elsewhere = (await http(sim, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `owner-${id}` } })).body;
    const ns = sim.list('Namespace', undefined).find((n) => n.metadata.name === NS);
    await createConfigMap(sim, { metadata: { name: `cross-${id}`, ownerReferences: [ref(elsewhere, 'v1', 'ConfigMap')] } });
    await createConfigMap(sim, { metadata: { name: `in-ns-${id}`, ownerReferences: [ref(ns, 'v1', 'Namespace')] } });
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    // An owner in another namespace is no owner (ownerReferences carry no namespace): collected.
    expect(configMap(`cross-${id}`)).toBeUndefined();
    expect(configMap(`in-ns-${id}`)).toBeDefined();
  });

  it('a reference without a uid, name, kind or version, or a second controller, is refused with 422 naming the field (ValidateOwnerReferences)', async () => {
    const id = newRunId();
    const live = await idleJob(`live-${id}`);
    const post = (name: string, refs: Json[]) => http(sim, 'POST', LIST, { metadata: { name, ownerReferences: refs } });
    const refused = async (name: string, refs: Json[]) => {
      const answer = await post(name, refs);
      expect(answer.status).toBe(422);
      return answer.body.details.causes.map((c: Json) => `${c.field}: ${c.message}`);
    };
    expect(await refused(`no-uid-${id}`, [{ ...ref(live), uid: '' }])).toEqual(['metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']);
    expect(await refused(`no-name-${id}`, [{ ...ref(live), name: '' }])).toEqual(['metadata.ownerReferences.name: Invalid value: "": name must not be empty']);
    expect(await refused(`no-kind-${id}`, [{ ...ref(live), kind: '', apiVersion: 'batch/' }])).toEqual([
      'metadata.ownerReferences.apiVersion: Invalid value: "batch/": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
    ]);
    const second = await idleJob(`second-${id}`);
    expect(
      await refused(`two-controllers-${id}`, [
        { ...ref(live), controller: true },
        { ...ref(second), controller: true },
      ]),
    ).toEqual([
      `metadata.ownerReferences: Invalid value: Only one reference can have Controller set to true. Found "true" in references for live-${id} and second-${id}`,
    ]);
    expect(sim.list('ConfigMap', NS).filter((c) => c.metadata.name.endsWith(id))).toEqual([]);
    expect((await post(`one-controller-${id}`, [{ ...ref(live), controller: true }, ref(second)])).status).toBe(201);
  });

  it('a reference that cannot be resolved (a kind or apiVersion the API server does not serve) leaves the dependent alone', async () => {
    const id = newRunId();
    const gone = await goneJob(`gone-${id}`);
    const unknown = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '11111111-1111-1111-1111-111111111111' };
    const wrongVersion = { ...ref(gone), apiVersion: 'batch/v2' };
    await createConfigMap(sim, { metadata: { name: `widget-${id}`, ownerReferences: [unknown, ref(gone)] } });
    await createConfigMap(sim, { metadata: { name: `v2-${id}`, ownerReferences: [wrongVersion] } });
    await simSleep(sim, ABSENT_OWNER_COLLECTION_MS);
    expect(configMap(`widget-${id}`).metadata.ownerReferences).toEqual([unknown, ref(gone)]);
    expect(configMap(`v2-${id}`)).toBeDefined();
  });
});
