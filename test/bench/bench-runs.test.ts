/**
 * bench/support/bench-runs.ts: a spec spread over the local clusters is one the deployment accepts,
 * and a bench runtime of several kube-sim processes reaches each of them and closes them all.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { assertValidSpec } from '../../lambdas/core/spec';
import { withLocalClusters } from '../../local/runtime/local-clusters';
import { k6BenchSpec, startBenchRuntime } from '../../bench/support/bench-runs';
import { clusterShares } from '../../local/runtime/local-clusters';

describe('bench runs over several clusters', () => {
  it('clusterShares splits the runners in blocks over kube-sim, kube-sim-2, … (the first ones take the remainder)', () => {
    expect(clusterShares(100, 3, 'loadplane').map((s) => [s.name, s.runners])).toEqual([
      ['kube-sim', 34],
      ['kube-sim-2', 33],
      ['kube-sim-3', 33],
    ]);
  });

  it('k6BenchSpec with clusters is a spec the config allowing the local clusters accepts', () => {
    const config = withLocalClusters({ ...DEFAULT_CONFIG, maxParallelism: 1000 }, 3);
    const spec = assertValidSpec(k6BenchSpec({ parallelism: 999, durationSeconds: 1, clusters: 3 }), config);
    expect(spec.parallelism).toBe(999);
    expect(spec.clusters?.map((c) => c.runners)).toEqual([333, 333, 333]);
    expect(assertValidSpec(k6BenchSpec({ parallelism: 5, durationSeconds: 1 }), DEFAULT_CONFIG).cluster?.name).toBe('kube-sim');
  });

  it('startBenchRuntime({ clusters: 2 }) runs a kube-sim process per cluster on one clock origin and closes them all', async () => {
    const bench = await startBenchRuntime({ timeScale: 50, clusters: 2 });
    try {
      expect(bench.clusters).toHaveLength(2);
      expect(bench.cluster).toBe(bench.clusters[0]);
      expect(bench.clusters[1]!.clock.origin).toBe(bench.clusters[0]!.clock.origin);
      expect(bench.runtime.deps.config.allowedClusters.map((c) => c.name)).toEqual(['kube-sim', 'kube-sim-2']);
      const second = await bench.runtime.deps.clusterFor('kube-sim-2');
      await second.createIfAbsent({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'two', namespace: 'loadplane', labels: { 'app.kubernetes.io/managed-by': 'loadplane' } },
      });
      expect(await bench.clusters[1]!.count('ConfigMap', 'loadplane')).toBe(1);
      expect(await bench.clusters[0]!.count('ConfigMap', 'loadplane')).toBe(0);
      expect(await bench.objectsLeft()).toBe(1);
      expect(await bench.requestCount()).toBeGreaterThan(0);
    } finally {
      await bench.close();
    }
    await expect(bench.clusters[1]!.count('ConfigMap')).rejects.toThrow();
  }, 60_000);
});
