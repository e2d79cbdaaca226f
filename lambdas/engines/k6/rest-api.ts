/**
 * The k6 REST API of a runner, reached through the API server's pods/proxy subresource (architecture §3.4):
 * the stage Lambda needs no route to pod IPs.
 */
import type { ClusterClient } from '../../cluster/cluster-client';
import { ClusterUnavailable } from '../../core/errors';
import { K6_API_PORT } from '../../core/runner-contract';

const STATUS_PATH = '/v1/status';

export interface K6Status {
  paused?: boolean;
  running?: boolean;
  stopped?: boolean;
}

/** The runner's status, or undefined while its API does not answer yet (below 400 counts as ready). */
export async function k6Status(cluster: ClusterClient, namespace: string, pod: string): Promise<K6Status | undefined> {
  let response;
  try {
    response = await cluster.podProxy(namespace, pod, K6_API_PORT, 'GET', STATUS_PATH);
  } catch (err) {
    // The API server answers 503 while nothing listens on the pod's port yet: not ready, not an error.
    if (err instanceof ClusterUnavailable && err.status === 503) return undefined;
    throw err;
  }
  if (response.status >= 400) return undefined;
  return (response.body as { data?: { attributes?: K6Status } } | undefined)?.data?.attributes ?? {};
}

/** PATCH /v1/status with the JSON:API body k6 expects (k6 REST API docs: start = paused false; stop = stopped true). */
export async function patchK6Status(
  cluster: ClusterClient,
  namespace: string,
  pod: string,
  attributes: { paused?: boolean; stopped?: boolean },
): Promise<number> {
  const body = { data: { type: 'status', id: 'default', attributes } };
  const response = await cluster.podProxy(namespace, pod, K6_API_PORT, 'PATCH', STATUS_PATH, body);
  return response.status;
}
