/**
 * Retry policy of ONE Kubernetes call (architecture §7: "429/5xx are retried per call with backoff
 * (`Retry-After`)"). A stage makes hundreds of calls; at a 1 % error rate almost every stage attempt
 * would meet one, and a stage-level retry (Step Functions) repeats the whole stage. Retrying the call
 * where it failed keeps one unlucky request from costing the stage.
 *
 * Pure: which failures are retried, how long to wait, and the loop itself, with the sleep function
 * and the random source passed in (tests run it without waiting; the local runtime passes its
 * simulated clock's sleep). After the last attempt the caller's named error (ClusterThrottled,
 * ClusterUnavailable) goes up, and the state machine's Retry takes over.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff before attempt n+1 is drawn uniformly from [0, min(maxDelayMs, baseDelayMs · 2^(n-1))) (full jitter). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server's Retry-After is honoured up to this much. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 10_000,
};

/** What one attempt's failure was, as far as retrying is concerned. */
export type CallFailure =
  /** The API server answered with an error status. */
  | {
      kind: 'status';
      status: number;
      /** Seconds, from the Retry-After header (or the Status body's details.retryAfterSeconds). */
      retryAfterSeconds?: number;
      /**
       * pods/proxy only: the API server could not reach the pod (503 without Retry-After): the pod is
       * not ready, which the stages poll for; the API server itself is fine.
       */
      podUnreachable?: boolean;
    }
  /** No answer: connection refused or reset, DNS, TLS, or no answer within the request timeout. */
  | { kind: 'transport' }
  /** Anything else (a bug of ours): never retried. */
  | { kind: 'other' };

/**
 * Whether a failure may be retried. 429 and 5xx (but 501 Not Implemented) are the API server
 * shedding load or failing for a moment; every other status is an answer a retry cannot change.
 * A transport failure may have happened after the request was applied, so it is retried only for an
 * idempotent call (list, read, delete, create whose 409 is resolved, a PATCH that sets absolute values).
 */
export function isRetryableFailure(failure: CallFailure, idempotent: boolean): boolean {
  switch (failure.kind) {
    case 'status':
      if (failure.podUnreachable) return false;
      return failure.status === 429 || (failure.status >= 500 && failure.status <= 599 && failure.status !== 501);
    case 'transport':
      return idempotent;
    case 'other':
      return false;
  }
}

/** Full-jitter exponential backoff after `attempt` (1-based) failed attempts. */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(clamp01(random) * ceiling);
}

/**
 * The wait before the next attempt: the server's Retry-After (capped at maxRetryAfterMs) when it
 * sent one, never less than the jittered backoff.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, failure: CallFailure, random: number): number {
  const backoff = backoffDelayMs(policy, attempt, random);
  const retryAfter = failure.kind === 'status' ? failure.retryAfterSeconds : undefined;
  if (retryAfter === undefined || !Number.isFinite(retryAfter) || retryAfter < 0) return backoff;
  return Math.max(backoff, Math.min(policy.maxRetryAfterMs, Math.round(retryAfter * 1000)));
}

/** Retry-After in seconds (the API server sends delta-seconds; an HTTP-date is not used by it and is ignored). */
export function parseRetryAfter(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string' || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value.trim());
}

/** What happens after attempt `attempt` failed with `failure`. */
export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

export function decideRetry(policy: RetryPolicy, attempt: number, failure: CallFailure, idempotent: boolean, random: number): RetryDecision {
  if (attempt >= policy.maxAttempts || !isRetryableFailure(failure, idempotent)) return { retry: false };
  return { retry: true, delayMs: retryDelayMs(policy, attempt, failure, random) };
}

export interface RetryRunner {
  policy: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

/**
 * Runs `attempt` until it succeeds or decideRetry says stop; then rethrows the last failure as it was
 * thrown (the caller turns it into a named error). `attempt` gets the 1-based attempt number.
 */
export async function withRetries<T>(
  runner: RetryRunner,
  options: { idempotent: boolean; classify: (err: unknown) => CallFailure },
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const decision = decideRetry(runner.policy, n, options.classify(err), options.idempotent, runner.random());
      if (!decision.retry) throw err;
      await runner.sleep(decision.delayMs);
    }
  }
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
}
