import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EKSClient } from '@aws-sdk/client-eks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeClusterEndpoint } from '../../lambdas/cluster/eks-endpoint';
import { ClusterNotFound, ClusterThrottled, ClusterUnavailable } from '../../lambdas/core/errors';

/** A stand-in for the EKS DescribeCluster REST endpoint (`GET /clusters/<name>`): no local EKS exists. */
let server: Server;
let endpoint: string;
const requests: string[] = [];
const clusters = new Map<string, { status: number; body: object; errorType?: string }>();

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const name = decodeURIComponent(req.url!.replace(/^\/clusters\//, ''));
    const answer = clusters.get(name) ?? {
      status: 404,
      errorType: 'ResourceNotFoundException',
      body: { message: `No cluster found for name: ${name}.` },
    };
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      ...(answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {}),
    });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requests.length = 0;
  clusters.clear();
});

function eks(): EKSClient {
  return new EKSClient({
    region: 'us-east-1',
    endpoint,
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
}
const active = (id: string) => ({
  status: 200,
  body: { cluster: { name: id, status: 'ACTIVE', endpoint: `https://${id}.gr7.us-east-1.eks.amazonaws.com`, certificateAuthority: { data: `CA-${id}` } } },
});

describe('describeClusterEndpoint', () => {
  it('returns endpoint and CA, and asks EKS once per cluster per client', async () => {
    clusters.set('prod', active('prod'));
    clusters.set('stage', active('stage'));
    const client = eks();
    const results = await Promise.all([
      describeClusterEndpoint(client, 'prod'),
      describeClusterEndpoint(client, 'prod'),
      describeClusterEndpoint(client, 'stage'),
    ]);
    expect(await describeClusterEndpoint(client, 'prod')).toEqual({
      endpoint: 'https://prod.gr7.us-east-1.eks.amazonaws.com',
      caData: 'CA-prod',
    });
    expect(results[2]).toEqual({ endpoint: 'https://stage.gr7.us-east-1.eks.amazonaws.com', caData: 'CA-stage' });
    expect(requests.sort()).toEqual(['GET /clusters/prod', 'GET /clusters/stage']);
  });

  it('a missing cluster is ClusterNotFound (not retryable) and is not cached', async () => {
    const client = eks();
    const err = await describeClusterEndpoint(client, 'nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterNotFound);
    expect(err).toMatchObject({ retryable: false, status: 404 });
    clusters.set('nope', active('nope'));
    expect((await describeClusterEndpoint(client, 'nope')).caData).toBe('CA-nope');
    expect(requests).toHaveLength(2);
  });

  it('throttling is ClusterThrottled (retryable)', async () => {
    clusters.set('busy', { status: 429, errorType: 'ThrottlingException', body: { message: 'Rate exceeded' } });
    await expect(describeClusterEndpoint(eks(), 'busy')).rejects.toBeInstanceOf(ClusterThrottled);
  });

  it('a cluster without endpoint yet (CREATING) is ClusterUnavailable, then succeeds once ACTIVE', async () => {
    clusters.set('new', { status: 200, body: { cluster: { name: 'new', status: 'CREATING' } } });
    const client = eks();
    await expect(describeClusterEndpoint(client, 'new')).rejects.toBeInstanceOf(ClusterUnavailable);
    clusters.set('new', active('new'));
    expect((await describeClusterEndpoint(client, 'new')).endpoint).toContain('new.gr7');
  });
});
