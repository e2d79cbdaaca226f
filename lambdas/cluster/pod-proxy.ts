/**
 * Requests through the API server's pods/proxy subresource
 * (`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy<path>`), so the Lambda reaches a runner's k6 REST
 * API without a route to pod IPs. client-node's generated connect*PodProxyWithPath calls escape the `/`
 * of the path and send no body, so this goes through node:http(s) with the KubeConfig's own TLS and auth.
 * Like every Kubernetes call (architecture §7) each request has a timeout and is retried per call-retry.ts.
 *
 * Start unpauses N runners with N of these, and every ms between the first and the last is start skew
 * (a runner that starts late runs its share of the load late). So requests are prepared in a batch
 * before the first is sent (auth resolved once, URLs, headers and bodies built), and they go over one
 * keep-alive agent per KubeConfig, which the status requests before them have warmed: on EKS a new
 * connection is a TLS handshake with the IAM-authenticated API server, not something to do N times in a row.
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { parseRetryAfter, withRetries, type CallFailure, type RetryRunner } from './call-retry';
import { clusterErrorForStatus, statusMessageSuffix, statusOf } from './cluster-errors';
import { withRequestTimeout } from './request-timeout';

export interface ProxyRequest {
  namespace: string;
  pod: string;
  port: number;
  method: 'GET' | 'PATCH' | 'POST' | 'PUT';
  /** Path on the pod, starting with `/`, e.g. `/v1/status`. */
  path: string;
  /** Sent as JSON (`null` too; undefined: no body). */
  body?: unknown;
  /**
   * A request the pod works on for long (k6's POST /v1/setup runs setup() before it answers): its
   * own bound on each attempt, in real ms, instead of the proxy's.
   */
  timeoutMs?: number;
  /**
   * False for a request that must not reach the pod twice (POST /v1/setup runs setup() again): a
   * transport failure, after which it may have reached the pod, is then not retried. Default: the proxy's.
   */
  idempotent?: boolean;
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

/** A request ready to go: calling it sends it (with its timeout and retries) and does nothing else first. */
export type PreparedProxyRequest = () => Promise<ProxyResponse>;

export interface PodProxy {
  /** Prepares every request before any is sent; nothing goes out until a returned function is called. */
  prepare(requests: readonly ProxyRequest[]): Promise<PreparedProxyRequest[]>;
  /** One request, prepared and sent. */
  request(req: ProxyRequest): Promise<ProxyResponse>;
  /** Closes the agent's idle connections (they never hold the process open: the agent unrefs them). */
  close(): void;
}

/**
 * Idle keep-alive connections are closed after this long: below the 5 s keep-alive timeout of Node.js
 * servers (kube-sim) and far below the API server's, so a connection is not reused just as the server
 * drops it. Start's requests follow one another within ms; nothing needs a connection kept longer.
 */
export const FREE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * The answers of pods/proxy requests for one KubeConfig, whatever their status. Failures of the API
 * server itself (a Kubernetes Status object: pod not found, pod not reachable, throttled, forbidden)
 * and network errors are thrown as named cluster errors, after the retries call-retry.ts allows. A 503
 * without Retry-After is the API server saying the pod does not answer (not running yet, nothing
 * listening): not retried here, because the stages poll for exactly that.
 */
export function createPodProxy(kc: KubeConfig, options: ProxyOptions): PodProxy {
  let agent: http.Agent | undefined;

  async function prepare(requests: readonly ProxyRequest[]): Promise<PreparedProxyRequest[]> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    // Once per batch: TLS material, the Authorization header (a token provider may be asked), the agent.
    const resolved: https.RequestOptions = { headers: {} };
    await kc.applyToHTTPSOptions(resolved);
    agent ??= keepAliveAgent(cluster, resolved);
    const server = cluster.server.replace(/\/+$/, '');
    return requests.map((req) => {
      const what = `${req.method} pods/${req.namespace}/${req.pod}:${req.port}/proxy${req.path}`;
      const url = new URL(`${server}/api/v1/namespaces/${encodeURIComponent(req.namespace)}/pods/${encodeURIComponent(req.pod)}:${req.port}/proxy${req.path}`);
      const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
      const opts: http.RequestOptions = {
        ...urlToHttpOptions(url),
        method: req.method,
        agent,
        ...(resolved.auth === undefined ? {} : { auth: resolved.auth }),
        headers: {
          ...resolved.headers,
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': payload.length }),
        },
      };
      const send = url.protocol === 'http:' ? http.request : https.request;
      const own = {
        ...options,
        ...(req.timeoutMs === undefined ? {} : { timeoutMs: req.timeoutMs }),
        ...(req.idempotent === undefined ? {} : { idempotent: req.idempotent }),
      };
      return () => requestWithRetries(what, (signal) => exchange(send, opts, payload, signal), own);
    });
  }

  return {
    prepare,
    async request(req) {
      const [send] = await prepare([req]);
      return send!();
    },
    close() {
      agent?.destroy();
      agent = undefined;
    },
  };
}

/**
 * One agent for every request of the KubeConfig, keeping connections open between them. Through an
 * HTTP(S) or SOCKS proxy, client-node's own proxy agent (made for the first batch) is kept instead. For
 * https the TLS context (CA, client certificate) is built once, not for every connection.
 */
function keepAliveAgent(cluster: Cluster, resolved: https.RequestOptions): http.Agent {
  if (cluster.proxyUrl) return resolved.agent as http.Agent;
  // Node's agent unrefs idle sockets, so they do not keep a Lambda's (or a test's) event loop alive.
  const common = { keepAlive: true, scheduling: 'lifo', timeout: FREE_SOCKET_TIMEOUT_MS } as const;
  if (cluster.server.startsWith('http:')) return new http.Agent(common);
  const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = resolved;
  return new https.Agent({
    ...common,
    secureContext: tls.createSecureContext({ ca, cert, key, pfx, passphrase }),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  });
}

async function requestWithRetries(what: string, exchangeOnce: (signal: AbortSignal) => Promise<Reply>, options: ProxyOptions): Promise<ProxyResponse> {
  const once = async (): Promise<ProxyResponse> => {
    let reply: Reply;
    try {
      reply = await withRequestTimeout(options.timeoutMs, exchangeOnce);
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

function exchange(send: typeof http.request, opts: http.RequestOptions, payload: Buffer | undefined, signal: AbortSignal): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const r = send(opts, (res) => {
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
    // the request timeout aborts the attempt, and the socket goes with it (never back to the agent).
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
