/**
 * kube-sim in a process of its own (local/kube-sim/process.ts), as bench's figures and `--clusters N`
 * run it: client-node reaches it over HTTP, the parent's requests (counts, faults, usage) cross the IPC
 * channel, both clocks read the same simulated time (same scale and origin), and close ends the child.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSimProcess, type KubeSimProcess } from '../../local/kube-sim/process';

let sim: KubeSimProcess;
beforeAll(async () => {
  sim = await startKubeSimProcess({ timeScale: 50 });
}, 30_000);
afterAll(() => sim?.close());

describe('kube-sim process', () => {
  it('serves the Kubernetes API over HTTP and answers the parent over IPC', async () => {
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one', labels: { a: 'b' } } } });
    expect(await sim.count('ConfigMap', 'default', 'a=b')).toBe(1);
    expect(await sim.count('ConfigMap', 'default', 'a=c')).toBe(0);
    const posts = await sim.requestLog({ method: 'POST', pathIncludes: '/configmaps' });
    expect(posts.length).toBe(1);
    expect((await sim.usage()).maxRSS).toBeGreaterThan(10_000);
  });

  it("reads the same simulated time as the parent's clock (same scale and origin)", async () => {
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    const before = sim.clock.now();
    const made = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two' } } });
    const after = sim.clock.now();
    const stamped = made.metadata!.creationTimestamp!.getTime();
    // creationTimestamp has whole seconds; at ×50 a real second is 50 simulated ones.
    expect(stamped).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(stamped).toBeLessThanOrEqual(after);
  });

  it('a failing parent request is an error naming it; close ends the child', async () => {
    await expect(sim.fault('noSuchFault')).rejects.toThrow(/kube-sim process: /);
    await sim.close();
    await expect(sim.count('ConfigMap')).rejects.toThrow();
  });
});
