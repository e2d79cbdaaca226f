/**
 * The local clusters of `--clusters N` (local/runtime/local-clusters.ts): their names, the config that
 * allows them, and the example's runners spread over them as a valid run across clusters.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { placementsOf } from '../../lambdas/core/placements';
import { validateSpec, type RunSpec } from '../../lambdas/core/spec';
import { localClusterNames, spreadOverLocalClusters, withLocalClusters } from '../../local/runtime/local-clusters';

function validSpec(parallelism: number): RunSpec {
  const checked = validateSpec(
    { name: 'spread', engine: 'k6', parallelism, script: { inline: 'export default function () {}' }, cluster: { name: 'kube-sim', namespace: 'loadplane' } },
    DEFAULT_CONFIG,
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.spec;
}

describe('local clusters', () => {
  it('kube-sim, kube-sim-2, …; the config allows each as its first cluster, unchanged for one', () => {
    expect(localClusterNames(3)).toEqual(['kube-sim', 'kube-sim-2', 'kube-sim-3']);
    expect(withLocalClusters(DEFAULT_CONFIG, 1)).toBe(DEFAULT_CONFIG);
    const three = withLocalClusters(DEFAULT_CONFIG, 3);
    expect(three.allowedClusters.map((c) => c.name)).toEqual(['kube-sim', 'kube-sim-2', 'kube-sim-3']);
    expect(three.allowedClusters[2]!.namespaces).toEqual(DEFAULT_CONFIG.allowedClusters[0]!.namespaces);
    expect(withLocalClusters(three, 3)).toBe(three);
  });

  it.each([
    [4, 3, [2, 1, 1]],
    [6, 3, [2, 2, 2]],
    [4, 10, [1, 1, 1, 1]],
    [7, 2, [4, 3]],
  ])('%i runners over %i clusters: blocks %j, in order, a spec that validates again as one run across them', (parallelism, count, blocks) => {
    const spread = spreadOverLocalClusters(validSpec(parallelism), count);
    expect(spread.cluster).toBeUndefined();
    expect(spread.clusters!.map((c) => c.runners)).toEqual(blocks);
    expect(spread.clusters!.map((c) => c.name)).toEqual(localClusterNames(blocks.length));
    const again = validateSpec(spread, withLocalClusters(DEFAULT_CONFIG, count));
    expect(again.ok && again.spec.parallelism).toBe(parallelism);
    expect(again.ok && placementsOf(again.spec).map((p) => [p.name, p.first, p.runners])).toEqual(
      localClusterNames(blocks.length).map((name, i) => [name, blocks.slice(0, i).reduce((a, b) => a + b, 0), blocks[i]]),
    );
  });

  it('one cluster, or one runner: the spec unchanged', () => {
    const spec = validSpec(4);
    expect(spreadOverLocalClusters(spec, 1)).toBe(spec);
    const single = validSpec(1);
    expect(spreadOverLocalClusters(single, 3)).toBe(single);
  });
});
