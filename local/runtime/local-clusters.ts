/**
 * Several simulated clusters locally (`--clusters N`): kube-sim, kube-sim-2, … kube-sim-N, each a
 * kube-sim of its own (its own server, objects and kubelet), so a run across clusters
 * (core/placements.ts) is exercised as on EKS: every stage reaches each cluster over HTTP. The
 * deployment config allows each of them with the namespaces (and service accounts) of its first
 * allowed cluster.
 */
import type { DeploymentConfig } from '../../lambdas/core/config';
import type { ClusterShare } from '../../lambdas/core/placements';
import type { RunSpec } from '../../lambdas/core/spec';

/** The name of the first local cluster, as the default config and the examples name it. */
export const FIRST_LOCAL_CLUSTER = 'kube-sim';

/** `kube-sim`, `kube-sim-2`, … for `count` clusters. */
export function localClusterNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? FIRST_LOCAL_CLUSTER : `${FIRST_LOCAL_CLUSTER}-${i + 1}`));
}

/** `config` allowing the local clusters 2..count as it allows its first cluster (unchanged for one). */
export function withLocalClusters(config: DeploymentConfig, count: number): DeploymentConfig {
  const [first] = config.allowedClusters;
  const names = localClusterNames(count);
  const missing = names.filter((name) => !config.allowedClusters.some((c) => c.name === name));
  if (!first || missing.length === 0) return config;
  return { ...config, allowedClusters: [...config.allowedClusters, ...missing.map((name) => ({ ...first, name }))] };
}

/**
 * `spec` with its runners spread over the local clusters (`npm start -- --clusters N`): one block each,
 * in order, the first blocks one larger when they do not divide evenly, in the namespace of its
 * cluster; over `parallelism` clusters when there are fewer runners than clusters. One cluster: `spec`.
 */
export function spreadOverLocalClusters(spec: RunSpec, count: number): RunSpec {
  const used = Math.min(count, spec.parallelism);
  if (used < 2) return spec;
  const { cluster: _one, ...rest } = spec;
  return { ...rest, clusters: clusterShares(spec.parallelism, used, (spec.cluster ?? spec.clusters![0]!).namespace) };
}

/** Each simulated cluster by name at its API server's URL (in localClusterNames order): `kube-sim at http://…, kube-sim-2 at http://…`. */
export function describeClusterUrls(urls: readonly string[]): string {
  const names = localClusterNames(urls.length);
  return urls.map((url, i) => `${names[i]} at ${url}`).join(', ');
}

/** `parallelism` runners over the first `count` local clusters in `namespace`, in blocks as even as can be (the first ones take the remainder). */
export function clusterShares(parallelism: number, count: number, namespace: string): ClusterShare[] {
  return localClusterNames(count).map((name, i) => ({ name, namespace, runners: Math.floor(parallelism / count) + (i < parallelism % count ? 1 : 0) }));
}
