/**
 * The k6 REST API of a runner, reached through the API server's pods/proxy subresource (architecture §3.4):
 * the stage Lambda needs no route to pod IPs. The batch forms prepare every runner's request before the
 * first is sent (ClusterClient.preparePodProxy), so N runners are asked, or started, or read (live
 * metrics), at once.
 */
import type { ClusterClient } from '../../cluster/cluster-client';
import type { ProxyResponse } from '../../cluster/pod-proxy';
import { ClusterUnavailable } from '../../core/errors';
import { K6_API_PORT } from '../../core/runner-contract';
import type { LiveReading } from '../engine-adapter';
import { settledWithin } from '../within-budget';
import { liveReadingFromK6Metrics } from './live-reading';
import { preparePodRequests, type PodRef } from '../pod-requests';

const STATUS_PATH = '/v1/status';
const METRICS_PATH = '/v1/metrics';

/** The attributes of k6's `GET /v1/status` answer (k6 1.x, as recorded: test/fixtures/real-k6). */
export interface K6Status {
  /** k6's execution status (execution-status.ts); absent only from an answer that is not k6's. */
  status?: number;
  paused?: boolean;
  running?: boolean;
  stopped?: boolean;
  tainted?: boolean;
  vus?: number;
  /** The VUs initialized so far: all of the runner's segment once status is 4 (PausedBeforeRun). */
  'vus-max'?: number;
}

/** A status answer with the cluster-clock time it arrived at. */
export interface TimedK6Status {
  status: K6Status | undefined;
  /** Cluster clock (epoch ms) when the answer came back. */
  at: number;
}

/** What PATCH /v1/status sets (k6 REST API docs: start = paused false; stop = stopped true). */
export type K6StatusChange = { paused?: boolean; stopped?: boolean };

/** The runner's status, or undefined while its API does not answer yet (below 400 counts as ready). */
export async function k6Status(cluster: ClusterClient, namespace: string, pod: string): Promise<K6Status | undefined> {
  return statusFrom(() => cluster.podProxy(namespace, pod, K6_API_PORT, 'GET', STATUS_PATH));
}

/** Each runner's status, all asked at once, each with the time (`now`, the cluster clock) its answer came back. */
export async function k6StatusesTimed(pods: readonly PodRef[], now: () => number): Promise<TimedK6Status[]> {
  if (pods.length === 0) return [];
  const requests = await preparePodRequests(pods, () => ({ port: K6_API_PORT, method: 'GET', path: STATUS_PATH }));
  return Promise.all(requests.map(async (send) => ({ status: await statusFrom(send), at: now() })));
}

/**
 * Each runner's live reading from its `GET /v1/metrics` (live-reading.ts), all asked at once; undefined
 * for a runner that did not answer it within `budgetMs` (real ms, the whole batch), or at all (not
 * reachable, an error status, a failed request, a body that is not k6's): a live reading is best
 * effort. Throws only when the batch cannot be prepared.
 */
export async function k6LiveReadings(
  cluster: ClusterClient,
  namespace: string,
  pods: readonly string[],
  budgetMs: number,
): Promise<(LiveReading | undefined)[]> {
  const requests = await cluster.preparePodProxy(pods.map((pod) => ({ namespace, pod, port: K6_API_PORT, method: 'GET' as const, path: METRICS_PATH })));
  const readings = requests.map(async (send) => {
    try {
      const response = await send();
      return response.status >= 400 ? undefined : liveReadingFromK6Metrics(response.body);
    } catch {
      return undefined;
    }
  });
  return settledWithin(readings, budgetMs, undefined);
}

async function statusFrom(send: () => Promise<ProxyResponse>): Promise<K6Status | undefined> {
  let response;
  try {
    response = await send();
  } catch (err) {
    // The API server answers 503 while nothing listens on the pod's port yet: not ready, not an error.
    if (err instanceof ClusterUnavailable && err.status === 503) return undefined;
    throw err;
  }
  if (response.status >= 400) return undefined;
  return (response.body as { data?: { attributes?: K6Status } } | undefined)?.data?.attributes ?? {};
}

/** PATCH /v1/status with the JSON:API body k6 expects; the pod's HTTP status. */
export async function patchK6Status(cluster: ClusterClient, namespace: string, pod: string, attributes: K6StatusChange): Promise<number> {
  const response = await cluster.podProxy(namespace, pod, K6_API_PORT, 'PATCH', STATUS_PATH, statusDocument(attributes));
  return response.status;
}

/**
 * The same PATCH to every runner, prepared and not sent: each returned function sends one (and
 * resolves to the pod's HTTP status) and does nothing else first.
 */
export async function prepareK6StatusPatches(pods: readonly PodRef[], attributes: K6StatusChange): Promise<(() => Promise<number>)[]> {
  const body = statusDocument(attributes);
  const requests = await preparePodRequests(pods, () => ({ port: K6_API_PORT, method: 'PATCH', path: STATUS_PATH, body }));
  return requests.map((send) => async () => (await send()).status);
}

function statusDocument(attributes: K6StatusChange) {
  return { data: { type: 'status', id: 'default', attributes } };
}
