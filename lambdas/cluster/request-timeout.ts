/**
 * A bound on one request (architecture §7: "Every Kubernetes call has a timeout"). @kubernetes/client-node
 * 1.4 sets no timeout of its own: a request to an API server that accepts the connection and never
 * answers waits as long as the Lambda lives. Each attempt gets an AbortSignal that fires after the
 * timeout (client-node hands it to node-fetch through the RequestContext; pod-proxy.ts destroys its
 * request), and the attempt's promise is settled at that instant whatever the request does.
 */

/** No answer within the request timeout: a transport failure (ClusterUnavailable, retryable). */
export class RequestTimedOut extends Error {
  override readonly name = 'RequestTimedOut';
  /** A socket-level code, so the generic network-error checks class it as transport. */
  readonly code = 'ETIMEDOUT';
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** Runs `request` with a signal that aborts after `timeoutMs`; rejects with RequestTimedOut then. */
export async function withRequestTimeout<T>(timeoutMs: number, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new RequestTimedOut(timeoutMs);
      // Settle first, then abort: the attempt fails with RequestTimedOut, not with the abort it causes.
      reject(err);
      controller.abort(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([request(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
