/**
 * Kubernetes (and EKS) failures → the named errors of core/errors.ts (architecture §7), so Step Functions
 * retries exactly the retryable ones. Messages carry the API server's Status message, never request
 * headers (the bearer token lives there).
 */
import { ApiException } from '@kubernetes/client-node';
import {
  ClusterConflict,
  ClusterForbidden,
  ClusterGone,
  ClusterNotFound,
  ClusterRejected,
  ClusterThrottled,
  ClusterUnavailable,
  type LoadplaneError,
} from '../core/errors';

/** Socket-level failures: the server was never reached or the connection broke. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The named error for an HTTP status; `undefined` (no response at all) means unavailable. */
export function clusterErrorForStatus(status: number | undefined, message: string, cause?: unknown): LoadplaneError {
  const options = cause === undefined ? undefined : { cause };
  if (status === undefined || status >= 500) return new ClusterUnavailable(message, status, options);
  if (status === 404) return new ClusterNotFound(message, status, options);
  if (status === 409) return new ClusterConflict(message, status, options);
  if (status === 410) return new ClusterGone(message, status, options);
  if (status === 429) return new ClusterThrottled(message, status, options);
  if (status === 401 || status === 403) return new ClusterForbidden(message, status, options);
  return new ClusterRejected(message, status, options);
}

/**
 * Maps what client-node (or a raw request) threw. `what` names the call (`create Job ns/name`).
 * Anything that is neither an HTTP error nor a network error is a bug of ours and is rethrown as is.
 */
export function toClusterError(err: unknown, what: string): unknown {
  if (err instanceof ApiException) {
    const code = err.code as number;
    return clusterErrorForStatus(code, `${what}: HTTP ${code}${statusMessageSuffix(err.body)}`, err);
  }
  if (isNetworkError(err)) {
    const code = (err as { code?: string }).code;
    return clusterErrorForStatus(undefined, `${what}: API server unreachable (${code ?? (err as Error).name})`, err);
  }
  return err;
}

export function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    err.name === 'FetchError' ||
    err.name === 'AbortError' ||
    (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) ||
    (err.cause !== undefined && isNetworkError(err.cause))
  );
}

/** `: <message>` from a Kubernetes Status body (a JSON string or already parsed), or nothing. */
export function statusMessageSuffix(body: unknown): string {
  const message = statusOf(body)?.message;
  return typeof message === 'string' && message ? `: ${message}` : '';
}

/** The body as a Kubernetes Status object, if it is one. */
export function statusOf(body: unknown): { kind: 'Status'; message?: unknown; reason?: unknown } | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return typeof parsed === 'object' && parsed !== null && (parsed as { kind?: unknown }).kind === 'Status' ? (parsed as { kind: 'Status' }) : undefined;
}
