/**
 * One request through the API server's pods/proxy subresource
 * (`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy<path>`), so the Lambda reaches a runner's k6 REST
 * API without a route to pod IPs. client-node's generated connect*PodProxyWithPath calls escape the `/`
 * of the path and send no body, so this goes through node:http(s) with the KubeConfig's own TLS and auth.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { clusterErrorForStatus, statusMessageSuffix, statusOf } from './cluster-errors';

export interface ProxyRequest {
  namespace: string;
  pod: string;
  port: number;
  method: 'GET' | 'PATCH';
  /** Path on the pod, starting with `/`, e.g. `/v1/status`. */
  path: string;
  /** Sent as JSON. */
  body?: unknown;
}

export interface ProxyResponse {
  status: number;
  /** Parsed JSON, or the raw text when the pod did not answer JSON. */
  body: unknown;
}

/**
 * The pod's answer, whatever its status. Failures of the API server itself (a Kubernetes Status
 * object: pod not found, pod not reachable, throttled, forbidden) and network errors are thrown as
 * named cluster errors.
 */
export async function podProxyRequest(kc: KubeConfig, req: ProxyRequest): Promise<ProxyResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const what = `${req.method} pods/${req.namespace}/${req.pod}:${req.port}/proxy${req.path}`;
  const url = new URL(
    `${cluster.server.replace(/\/+$/, '')}/api/v1/namespaces/${encodeURIComponent(req.namespace)}` +
      `/pods/${encodeURIComponent(req.pod)}:${req.port}/proxy${req.path}`,
  );
  const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
  const opts: https.RequestOptions = {
    method: req.method,
    headers: {
      Accept: 'application/json',
      ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
    },
  };
  await kc.applyToHTTPSOptions(opts);

  let status: number;
  let text: string;
  try {
    ({ status, text } = await send(url, opts, payload));
  } catch (err) {
    // Every failure here is transport-level (network, TLS, timeout): the API server may answer a retry.
    throw clusterErrorForStatus(undefined, `${what}: API server unreachable (${(err as { code?: string }).code ?? 'transport error'})`, err);
  }
  const body = parseBody(text);
  // The API server answers for itself with a Status; the pod (k6) never does.
  if (status === 401 || status === 403 || status === 429 || (status >= 400 && statusOf(body))) {
    throw clusterErrorForStatus(status, `${what}: HTTP ${status}${statusMessageSuffix(body)}`);
  }
  return { status, body };
}

/** Well under the Tasks' TimeoutSeconds, so a hung call fails the attempt instead of the Task timing out. */
const PROXY_TIMEOUT_MS = 15_000;

function send(url: URL, opts: https.RequestOptions, payload: string | undefined): Promise<{ status: number; text: string }> {
  const request = url.protocol === 'http:' ? http.request : https.request;
  return new Promise((resolve, reject) => {
    const r = request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    // A pod (or the API server) that accepts the connection and never answers must not hold the stage.
    r.setTimeout(PROXY_TIMEOUT_MS, () => r.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
    r.end(payload);
  });
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
