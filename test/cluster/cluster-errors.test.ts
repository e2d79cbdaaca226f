import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { clusterErrorForStatus, toClusterError } from '../../lambdas/cluster/cluster-errors';

describe('cluster error mapping', () => {
  it.each([
    [400, 'ClusterRejected', false],
    [401, 'ClusterForbidden', false],
    [403, 'ClusterForbidden', false],
    [404, 'ClusterNotFound', false],
    [409, 'ClusterConflict', false],
    [410, 'ClusterGone', true],
    [422, 'ClusterRejected', false],
    [429, 'ClusterThrottled', true],
    [500, 'ClusterUnavailable', true],
    [502, 'ClusterUnavailable', true],
    [503, 'ClusterUnavailable', true],
    [504, 'ClusterUnavailable', true],
    [undefined, 'ClusterUnavailable', true],
  ])('HTTP %s → %s (retryable: %s)', (status, name, retryable) => {
    const err = clusterErrorForStatus(status, 'x');
    expect(err.name).toBe(name);
    expect(err.retryable).toBe(retryable);
    expect((err as unknown as { status?: number }).status).toBe(status);
  });

  it.each([
    [
      'a JSON string',
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'jobs.batch "lp-x" already exists', reason: 'AlreadyExists', code: 409 }),
    ],
    ['a parsed object', { kind: 'Status', message: 'jobs.batch "lp-x" already exists' }],
  ])('an ApiException whose body is %s carries the Status message, not the headers', (_, body) => {
    const ex = new ApiException(409, 'Conflict', body, { authorization: 'Bearer secret-token' });
    const err = toClusterError(ex, 'create Job ns/lp-x') as Error;
    expect(err.name).toBe('ClusterConflict');
    expect(err.message).toBe('create Job ns/lp-x: HTTP 409: jobs.batch "lp-x" already exists');
    expect(err.message).not.toContain('secret-token');
  });

  it('an ApiException without a Status body still maps by code', () => {
    const err = toClusterError(new ApiException(401, 'Unauthorized', undefined, {}), 'list Pod') as Error;
    expect(err.name).toBe('ClusterForbidden');
    expect(err.message).toBe('list Pod: HTTP 401');
  });

  it.each([
    ['node-fetch FetchError', Object.assign(new Error('request to http://x failed'), { name: 'FetchError', code: 'ECONNREFUSED' })],
    ['a socket error', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a wrapped socket error', new Error('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) })],
  ])('%s → ClusterUnavailable', (_, raw) => {
    expect((toClusterError(raw, 'list Job') as Error).name).toBe('ClusterUnavailable');
  });

  it('a bug of ours (TypeError) is not disguised as a retryable cluster error', () => {
    const bug = new TypeError('cannot read properties of undefined');
    expect(toClusterError(bug, 'list Job')).toBe(bug);
  });
});
