/**
 * Requests to pods through the pods/proxy subresource, for pods that may be in several clusters (a
 * run across clusters, core/placements.ts): prepared per cluster client, every batch before anything
 * is sent, and handed back in the order of the pods, so a caller sends them all together as it would
 * in one cluster.
 */
import type { ClusterClient } from '../cluster/cluster-client';
import type { PreparedProxyRequest, ProxyRequest } from '../cluster/pod-proxy';

/** A pod of the run, where it is. */
export interface PodRef {
  cluster: ClusterClient;
  namespace: string;
  name: string;
}

/** One request per pod (`request` gives its port, method, path and body), prepared, none sent; in the order of `pods`. */
export async function preparePodRequests(
  pods: readonly PodRef[],
  request: (pod: PodRef) => Omit<ProxyRequest, 'namespace' | 'pod'>,
): Promise<PreparedProxyRequest[]> {
  const prepared: PreparedProxyRequest[] = new Array(pods.length);
  const byCluster = new Map<ClusterClient, number[]>();
  pods.forEach((pod, i) => byCluster.set(pod.cluster, [...(byCluster.get(pod.cluster) ?? []), i]));
  await Promise.all(
    [...byCluster].map(async ([cluster, indexes]) => {
      const sends = await cluster.preparePodProxy(indexes.map((i) => ({ ...request(pods[i]!), namespace: pods[i]!.namespace, pod: pods[i]!.name })));
      indexes.forEach((i, k) => (prepared[i] = sends[k]!));
    }),
  );
  return prepared;
}
