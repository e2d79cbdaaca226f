import { describe, expect, it } from 'vitest';
import * as errors from '../../lambdas/core/errors';
import { ERROR_NAMES, LoadplaneError, RETRYABLE_ERROR_NAMES, isRetryable } from '../../lambdas/core/errors';

/** Constructor arguments for the classes that take more than strings. */
const ARGUMENTS = new Map<unknown, unknown[]>([
  [errors.SpecInvalid, [[]]],
  [errors.NotificationNotDelivered, ['run', ['webhook']]],
]);

/** One instance of every exported error class, built with throwaway arguments. */
function everyError(): LoadplaneError[] {
  const out: LoadplaneError[] = [];
  for (const value of Object.values(errors)) {
    if (typeof value !== 'function' || !(value.prototype instanceof LoadplaneError)) continue;
    const Ctor = value as unknown as new (...args: unknown[]) => LoadplaneError;
    out.push(new Ctor(...(ARGUMENTS.get(value) ?? ['x', 'y', 'z'])));
  }
  return out;
}

describe('error hierarchy', () => {
  const all = everyError();

  it('lists every exported error class in ERROR_NAMES, and nothing else', () => {
    expect(all.map((e) => e.name).sort()).toEqual([...ERROR_NAMES].sort());
  });

  it('lists exactly the retryable ones in RETRYABLE_ERROR_NAMES (the ASL Retry lists are built from it)', () => {
    const retryable = all.filter((e) => e.retryable).map((e) => e.name);
    expect(retryable.sort()).toEqual([...RETRYABLE_ERROR_NAMES].sort());
  });

  it('gives every error a distinct literal name that survives JSON serialisation (Step Functions errorType)', () => {
    const names = all.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    for (const e of all) expect(e.name).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  it('isRetryable is false for foreign errors', () => {
    expect(isRetryable(new Error('boom'))).toBe(false);
    expect(isRetryable(new errors.ClusterThrottled('slow down', 429))).toBe(true);
    expect(isRetryable(new errors.ClusterRejected('bad', 422))).toBe(false);
  });

  it('SpecInvalid carries every problem and names each in its message', () => {
    const e = new errors.SpecInvalid([
      { path: 'parallelism', message: 'must be at most 100 (maxParallelism)' },
      { path: 'name', message: 'required' },
    ]);
    expect(e.problems).toHaveLength(2);
    expect(e.message).toBe('parallelism: must be at most 100 (maxParallelism); name: required');
  });
});
