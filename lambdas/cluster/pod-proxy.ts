/**
 * One request through the API server's pods/proxy subresource
 * (`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy<path>`), so the Lambda reaches a runner's k6 REST
 * API without a route to pod IPs. client-node's generated connect*PodProxyWithPath calls escape the `/`
 * of the path and send no body, so this goes through node:http(s) with the KubeConfig's own TLS and auth.
 * Like every Kubernetes call (architecture §7) it has a request timeout and is retried per call-retry.ts.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseRetryAfter, withRetries, type CallFailure, type RetryRunner } from './call-retry';
import { clusterErrorForStatus, statusMessageSuffix, statusOf } from './cluster-errors';
import { withRequestTimeout } from './request-timeout';

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

export interface ProxyOptions {
  /** Bound on each attempt, in real ms. */
  timeoutMs: number;
  retry: RetryRunner;
  /** Whether repeating the request is harmless (then transport failures are retried too). */
  idempotent: boolean;
}

/**
 * The pod's answer, whatever its status. Failures of the API server itself (a Kubernetes Status
 * object: pod not found, pod not reachable, throttled, forbidden) and network errors are thrown as
 * named cluster errors, after the retries call-retry.ts allows. A 503 without Retry-After is the API
 * server saying the pod does not answer (not running yet, nothing listening): not retried here,
 * because the stages poll for exactly that.
 */
export async function podProxyRequest(kc: KubeConfig, req: ProxyRequest, options: ProxyOptions): Promise<ProxyResponse> {
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

  const once = async (): Promise<ProxyResponse> => {
    let reply: Reply;
    try {
      reply = await withRequestTimeout(options.timeoutMs, (signal) => send(url, opts, payload, signal));
    } catch (err) {
      // Every failure here is transport-level (network, TLS, timeout): the API server may answer a retry.
      const detail = (err as { code?: string }).code === 'ETIMEDOUT' ? (err as Error).message : ((err as { code?: string }).code ?? 'transport error');
      throw new ProxyFailure({ kind: 'transport' }, clusterErrorForStatus(undefined, `${what}: API server unreachable (${detail})`, err));
    }
    const body = parseBody(reply.text);
    // The API server answers for itself with a Status; the pod (k6) never does.
    const status = reply.status;
    if (status === 401 || status === 403 || status === 429 || (status >= 400 && statusOf(body))) {
      const retryAfterSeconds = parseRetryAfter(reply.retryAfter);
      const failure: CallFailure = {
        kind: 'status',
        status,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        ...(status === 503 && retryAfterSeconds === undefined ? { podUnreachable: true } : {}),
      };
      throw new ProxyFailure(failure, clusterErrorForStatus(status, `${what}: HTTP ${status}${statusMessageSuffix(body)}`));
    }
    return { status, body };
  };

  try {
    return await withRetries(
      options.retry,
      { idempotent: options.idempotent, classify: (err) => (err instanceof ProxyFailure ? err.failure : { kind: 'other' }) },
      once,
    );
  } catch (err) {
    throw err instanceof ProxyFailure ? err.named : err;
  }
}

/** An attempt's failure: what it means for retrying, and the named error it becomes. */
class ProxyFailure extends Error {
  constructor(
    readonly failure: CallFailure,
    readonly named: unknown,
  ) {
    super((named as Error).message);
  }
}

interface Reply {
  status: number;
  text: string;
  retryAfter: string | undefined;
}

function send(url: URL, opts: https.RequestOptions, payload: string | undefined, signal: AbortSignal): Promise<Reply> {
  const request = url.protocol === 'http:' ? http.request : https.request;
  return new Promise((resolve, reject) => {
    const r = request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          retryAfter: headerValue(res.headers['retry-after']),
        }),
      );
      res.on('error', reject);
    });
    r.on('error', reject);
    // A pod (or the API server) that accepts the connection and never answers must not hold the stage:
    // the request timeout aborts the attempt, and the socket goes with it.
    signal.addEventListener('abort', () => r.destroy(signal.reason as Error), { once: true });
    r.end(payload);
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
