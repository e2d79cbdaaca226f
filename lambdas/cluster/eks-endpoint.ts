/**
 * The API server endpoint and CA of an EKS cluster, from DescribeCluster, cached per container
 * (per EKSClient): they do not change for a cluster's life, and DescribeCluster is rate-limited.
 */
import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';
import { ClusterUnavailable } from '../core/errors';
import { clusterErrorForStatus } from './cluster-errors';

export interface ClusterEndpoint {
  /** `https://<id>.<region>.eks.amazonaws.com` */
  endpoint: string;
  /** The cluster CA certificate, base64 PEM as EKS returns it. */
  caData: string;
}

const cache = new WeakMap<EKSClient, Map<string, Promise<ClusterEndpoint>>>();

export function describeClusterEndpoint(eks: EKSClient, name: string): Promise<ClusterEndpoint> {
  let byName = cache.get(eks);
  if (!byName) cache.set(eks, (byName = new Map()));
  const cached = byName.get(name);
  if (cached) return cached;
  const pending = describe(eks, name);
  byName.set(name, pending);
  // Only successes are cached: a cluster still CREATING, or a throttled call, is asked again next time.
  pending.catch(() => {
    if (byName.get(name) === pending) byName.delete(name);
  });
  return pending;
}

async function describe(eks: EKSClient, name: string): Promise<ClusterEndpoint> {
  let cluster;
  try {
    ({ cluster } = await eks.send(new DescribeClusterCommand({ name })));
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    const message = `DescribeCluster ${name}: ${(err as Error).name}: ${(err as Error).message}`;
    throw clusterErrorForStatus(status, message, err);
  }
  const endpoint = cluster?.endpoint;
  const caData = cluster?.certificateAuthority?.data;
  if (!endpoint || !caData) {
    throw new ClusterUnavailable(`EKS cluster ${name} has no endpoint or CA yet (status ${cluster?.status ?? 'unknown'})`);
  }
  return { endpoint, caData };
}
