/**
 * Watches, dry runs and event expiry at the HTTP level, on the virtual clock: a watch's stream is
 * read while the test moves simulated time itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeSim } from '../../local/kube-sim/index';
import { WATCH_HISTORY_LENGTH } from '../../local/kube-sim/object-store';
import { closeKubeSim, http, NS, simSleep, startVirtualKubeSim, restrictedPodSpec, type Json } from './helpers';

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(() => closeKubeSim(sim));

const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { a: '1' } });

/** Reads watch events as they arrive. */
async function openWatch(query: string): Promise<{ events: Json[]; done: Promise<void>; abort: () => void }> {
  const controller = new AbortController();
  const res = await fetch(`${sim.url}/api/v1/namespaces/${NS}/configmaps?watch=true&${query}`, { signal: controller.signal });
  const events: Json[] = [];
  const reader = res.body!.getReader();
  const done = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        buffer += Buffer.from(value).toString('utf8');
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buffer.slice(0, nl)));
          buffer = buffer.slice(nl + 1);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { events, done, abort: () => controller.abort() };
}

/** Waits for the stream's own I/O (never a simulated delay); the bound only ends a broken test before vitest's timeout. */
async function until(check: () => boolean): Promise<void> {
  const limit = Date.now() + 25_000;
  while (!check()) {
    if (Date.now() > limit) throw new Error('the watch stream did not deliver it');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('watch', () => {
  it('streams ADDED / MODIFIED / DELETED after the list’s resourceVersion, filtered by label and field selectors', async () => {
    const list = await http(sim, 'GET', `/api/v1/namespaces/${NS}/configmaps`);
    const w = await openWatch(`resourceVersion=${list.body.metadata.resourceVersion}&labelSelector=app%3Dw&fieldSelector=metadata.name%3Dw1`);
    await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, cm('w1', { app: 'w' }));
    await http(sim, 'POST', `/api/v1/namespaces/${NS}/configmaps`, cm('w2', { app: 'w' }));
    await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/w1`, { data: { a: '2' } }, 'application/merge-patch+json');
    await http(sim, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/w1`);
    await until(() => w.events.length >= 3);
    w.abort();
    expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'w1'],
      ['MODIFIED', 'w1'],
      ['DELETED', 'w1'],
    ]);
  });

  it('without a resourceVersion starts with what exists; timeoutSeconds ends it in simulated time', async () => {
    const w = await openWatch('timeoutSeconds=30&fieldSelector=metadata.name%3Dw2');
    await until(() => w.events.length === 1);
    expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w2' } } });
    await simSleep(sim, 30_000);
    await w.done; // the server ended the stream
  });

  it('a resourceVersion older than the kept history is an ERROR event with a 410 Expired Status', async () => {
    for (let i = 0; i < WATCH_HISTORY_LENGTH / 2 + 1; i++) {
      await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/w2`, { data: { a: String(i) } }, 'application/merge-patch+json');
      await http(sim, 'PATCH', `/api/v1/namespaces/${NS}/configmaps/w2`, { data: { a: 'x' } }, 'application/merge-patch+json');
    }
    const res = await http(sim, 'GET', `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });
});

describe('dryRun=All', () => {
  it('create, update, patch, delete and deletecollection answer and change nothing', async () => {
    const version = async () => (await http(sim, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion;
    const before = await version();
    const base = `/api/v1/namespaces/${NS}/configmaps`;
    const created = await http(sim, 'POST', `${base}?dryRun=All`, cm('dry'));
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: 'dry', namespace: NS });
    expect(created.body.metadata.resourceVersion).toBeUndefined();
    expect((await http(sim, 'GET', `${base}/dry`)).status).toBe(404);
    const current = (await http(sim, 'GET', `${base}/w2`)).body;
    const put = await http(sim, 'PUT', `${base}/w2?dryRun=All`, { ...current, data: { a: 'put' } });
    expect(put.body).toMatchObject({ data: { a: 'put' }, metadata: { resourceVersion: current.metadata.resourceVersion } });
    const patched = await http(sim, 'PATCH', `${base}/w2?dryRun=All`, { data: { a: 'patched' } }, 'application/merge-patch+json');
    expect(patched.body.data).toEqual({ a: 'patched' });
    expect((await http(sim, 'DELETE', `${base}/w2?dryRun=All`)).status).toBe(200);
    expect((await http(sim, 'DELETE', `${base}?labelSelector=app%3Dw&dryRun=All`)).body.items.map((i: Json) => i.metadata.name)).toEqual(['w2']);
    expect((await http(sim, 'GET', `${base}/w2`)).body).toEqual(current);
    expect(await version()).toBe(before);
    expect((await http(sim, 'POST', `${base}?dryRun=Some`, cm('dry'))).status).toBe(400);
  });
});

describe('events', () => {
  it('expire an hour (simulated) after they were last seen', async () => {
    await http(sim, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: 'ev-pod' },
      spec: restrictedPodSpec({ name: 'main', image: 'busybox' }),
    });
    const events = () => sim.list('Event', NS).filter((e) => e.involvedObject.name === 'ev-pod');
    await simSleep(sim, 5_000);
    expect(events().map((e) => e.reason)).toEqual(expect.arrayContaining(['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started']));
    await simSleep(sim, 61 * 60_000);
    expect(events()).toEqual([]);
  });
});
