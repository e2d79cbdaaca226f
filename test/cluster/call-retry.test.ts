/**
 * The per-call retry policy (architecture §7), pure: which failures are retried, backoff with full jitter,
 * Retry-After honoured and capped, attempts bounded. The loop runs with a recording sleep: no waiting.
 */
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  decideRetry,
  DEFAULT_RETRY_POLICY,
  isRetryableFailure,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
  type CallFailure,
  type RetryPolicy,
} from '../../lambdas/cluster/call-retry';
import { failureOf } from '../../lambdas/cluster/cluster-client';
import { RequestTimedOut } from '../../lambdas/cluster/request-timeout';

const POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 10_000 };
const status = (code: number, retryAfterSeconds?: number): CallFailure =>
  retryAfterSeconds === undefined ? { kind: 'status', status: code } : { kind: 'status', status: code, retryAfterSeconds };

describe('which failures are retried', () => {
  it.each([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [501, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [410, false],
    [422, false],
  ])('HTTP %i → %s, idempotent or not', (code, retried) => {
    expect(isRetryableFailure(status(code), true)).toBe(retried);
    expect(isRetryableFailure(status(code), false)).toBe(retried);
  });

  it('a transport failure (no answer, timeout) only for an idempotent call: the request may have been applied', () => {
    expect(isRetryableFailure({ kind: 'transport' }, true)).toBe(true);
    expect(isRetryableFailure({ kind: 'transport' }, false)).toBe(false);
  });

  it('pods/proxy: the API server cannot reach the pod (503 without Retry-After) is the pod not ready, not retried', () => {
    expect(isRetryableFailure({ kind: 'status', status: 503, podUnreachable: true }, true)).toBe(false);
  });

  it('anything else (a bug of ours) never', () => {
    expect(isRetryableFailure({ kind: 'other' }, true)).toBe(false);
  });
});

describe('backoff with full jitter', () => {
  it.each([
    [1, 200],
    [2, 400],
    [3, 800],
    [4, 1_600],
    [5, 3_200],
    [6, 5_000],
    [20, 5_000],
  ])('after attempt %i the wait is drawn from [0, %i ms)', (attempt, ceiling) => {
    expect(backoffDelayMs(POLICY, attempt, 0)).toBe(0);
    expect(backoffDelayMs(POLICY, attempt, 0.5)).toBe(ceiling / 2);
    expect(backoffDelayMs(POLICY, attempt, 0.999_999)).toBeLessThan(ceiling);
    expect(backoffDelayMs(POLICY, attempt, 0.999_999)).toBeGreaterThanOrEqual(ceiling - 1);
  });

  it('a random source out of range is clamped', () => {
    expect(backoffDelayMs(POLICY, 1, -3)).toBe(0);
    expect(backoffDelayMs(POLICY, 1, Number.NaN)).toBe(0);
    expect(backoffDelayMs(POLICY, 1, 7)).toBe(200);
  });
});

describe('Retry-After', () => {
  it.each([
    ['1 s, above the backoff drawn', 1, 0.5, 1_000],
    ['0 s: the backoff alone', 0, 0.5, 100],
    ['below the backoff drawn: the backoff', 1, 0.9, 1_000],
    ['capped at maxRetryAfterMs', 120, 0.5, 10_000],
    ['absent: the backoff', undefined, 0.5, 100],
  ] as const)('%s', (_, seconds, random, expected) => {
    expect(retryDelayMs(POLICY, 1, status(429, seconds), random)).toBe(expected);
  });

  it('never less than the backoff of a later attempt', () => {
    expect(retryDelayMs(POLICY, 5, status(503, 1), 0.5)).toBe(1_600);
  });

  it.each([
    ['1', 1],
    [' 10 ', 10],
    [3, 3],
    ['0', 0],
    ['-1', undefined],
    ['1.5', undefined],
    ['Wed, 21 Oct 2015 07:28:00 GMT', undefined],
    [undefined, undefined],
    [Number.NaN, undefined],
  ] as const)('parses %j as %s seconds', (value, seconds) => {
    expect(parseRetryAfter(value)).toBe(seconds);
  });
});

describe('attempts are bounded', () => {
  it('retries until maxAttempts, then stops', () => {
    for (let attempt = 1; attempt < POLICY.maxAttempts; attempt++) {
      expect(decideRetry(POLICY, attempt, status(500), true, 0.5)).toEqual({ retry: true, delayMs: backoffDelayMs(POLICY, attempt, 0.5) });
    }
    expect(decideRetry(POLICY, POLICY.maxAttempts, status(500), true, 0.5)).toEqual({ retry: false });
  });

  it('the default policy: 5 attempts, Retry-After capped at 10 s', () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ maxAttempts: 5, maxRetryAfterMs: 10_000 });
  });
});

describe('withRetries', () => {
  function recorder(random = 0.5) {
    const slept: number[] = [];
    return { slept, runner: { policy: POLICY, sleep: async (ms: number) => void slept.push(ms), random: () => random } };
  }
  const classify = (err: unknown): CallFailure => (err as { failure?: CallFailure }).failure ?? { kind: 'other' };
  const failing = (failure: CallFailure) => Object.assign(new Error('injected'), { failure });

  it('a burst shorter than the attempts is absorbed: the call succeeds, waiting between attempts', async () => {
    const { slept, runner } = recorder();
    const seen: number[] = [];
    const result = await withRetries(runner, { idempotent: true, classify }, async (n) => {
      seen.push(n);
      if (n <= 3) throw failing(status(n === 2 ? 429 : 500, n === 2 ? 1 : undefined));
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(slept).toEqual([100, 1_000, 400]);
  });

  it('after maxAttempts the last failure goes up as it was thrown', async () => {
    const { slept, runner } = recorder();
    let calls = 0;
    const err = await withRetries(runner, { idempotent: true, classify }, async () => {
      calls++;
      throw failing(status(503, 1));
    }).catch((e: unknown) => e);
    expect((err as { failure: CallFailure }).failure).toEqual(status(503, 1));
    expect(calls).toBe(5);
    expect(slept).toHaveLength(4);
  });

  it.each([400, 403, 404, 409])('HTTP %i: one attempt, no wait', async (code) => {
    const { slept, runner } = recorder();
    let calls = 0;
    await expect(
      withRetries(runner, { idempotent: true, classify }, async () => {
        calls++;
        throw failing(status(code));
      }),
    ).rejects.toThrow('injected');
    expect(calls).toBe(1);
    expect(slept).toEqual([]);
  });
});

describe('failureOf: what client-node threw', () => {
  it.each([
    ['a 429 with Retry-After', new ApiException(429, 'x', '{}', { 'retry-after': '3' }), status(429, 3)],
    [
      'a 503 with retryAfterSeconds in its Status',
      new ApiException(503, 'x', JSON.stringify({ kind: 'Status', details: { retryAfterSeconds: 2 } }), {}),
      status(503, 2),
    ],
    ['a 404', new ApiException(404, 'x', '{}', {}), status(404)],
    ['a request timeout', new RequestTimedOut(300), { kind: 'transport' }],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), { kind: 'transport' }],
    ['a TypeError', new TypeError('x is undefined'), { kind: 'other' }],
  ] as const)('%s', (_, err, failure) => {
    expect(failureOf(err)).toEqual(failure);
  });
});
