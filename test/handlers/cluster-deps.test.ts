/**
 * The cluster functions' clusterFor (lambdas/handlers/cluster-deps.ts) resolves a spec's cluster name
 * through the allow-list entry: DescribeCluster in the cluster's region, as the cluster's account (a
 * role assumed once, whatever the regions that use it), and a token signed for that region and
 * identity, sent to the endpoint DescribeCluster gave. The AWS SDK is the boundary: it talks to a
 * stand-in of STS, EKS and the clusters' API servers over HTTP (test/support/fake-aws.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROLE_SESSION_NAME } from '../../lambdas/cluster/eks-clusters';
import { CLUSTER_ID_HEADER, TOKEN_PREFIX } from '../../lambdas/cluster/eks-token';
import { ClusterForbidden, ClusterNotFound } from '../../lambdas/core/errors';
import { createClusterFunctionDeps } from '../../lambdas/handlers/cluster-deps';
import { createLedgerDeps } from '../../lambdas/handlers/ledger-deps';
import { createTelemetry } from '../../lambdas/telemetry/telemetry';
import { BASE_ACCOUNT, BASE_CREDENTIALS, startFakeAws, type FakeAws, type RecordedRequest } from '../support/fake-aws';

const PARTNER = '222222222222';
const PARTNER_ROLE = `arn:aws:iam::${PARTNER}:role/loadplane-access`;
const DENIED = '333333333333';

let aws: FakeAws;
beforeAll(async () => {
  aws = await startFakeAws();
  aws.addCluster(BASE_ACCOUNT, 'eu-west-1', 'perf');
  aws.addCluster(BASE_ACCOUNT, 'us-east-1', 'perf');
  aws.addCluster(PARTNER, 'eu-central-1', 'partner');
  aws.addCluster(PARTNER, 'eu-west-1', 'partner');
  aws.addCluster(DENIED, 'eu-west-1', 'closed');
  aws.denyAssume(DENIED);
});
afterAll(() => aws.close());
beforeEach(() => void (aws.requests.length = 0));

const ALLOWED = [
  { name: 'perf', namespaces: ['lt'] },
  { name: 'perf-us', eksName: 'perf', region: 'us-east-1', namespaces: ['lt'] },
  { name: 'partner', region: 'eu-central-1', roleArn: PARTNER_ROLE, namespaces: ['lt'] },
  { name: 'partner-west', eksName: 'partner', roleArn: PARTNER_ROLE, namespaces: ['lt'] },
  { name: 'closed', roleArn: `arn:aws:iam::${DENIED}:role/nope`, namespaces: ['lt'] },
];

function clusterFor(region: string, allowedClusters: unknown[] = ALLOWED) {
  const env = { AWS_REGION: region, LOADPLANE_TABLE: 't', LOADPLANE_DYNAMODB_ENDPOINT: aws.url, LOADPLANE_CONFIG: JSON.stringify({ allowedClusters }) };
  const { tracer } = createTelemetry({ output: () => undefined });
  const deps = createClusterFunctionDeps(tracer, createLedgerDeps(tracer, env), {
    credentials: async () => BASE_CREDENTIALS,
    endpoints: { eks: aws.url, sts: aws.url },
  });
  return deps.stageDeps({ awsRequestId: 'req' }).clusterFor;
}

/** The presigned URL inside a bearer token. */
function tokenUrl(token: string): URL {
  expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
  return new URL(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}

const of = (kind: 'eks' | 'sts' | 'k8s') => (r: RecordedRequest) =>
  kind === 'k8s' ? r.path.startsWith('/k8s/') : r.signedBy?.service === kind && !r.path.startsWith('/k8s/');
const accountOf = (accessKeyId: string) => accessKeyId.slice(4, 16);

describe('clusterFor', () => {
  it.each([
    // name, the region and account DescribeCluster must be signed for, the EKS name
    ['perf', 'eu-west-1', BASE_ACCOUNT, 'perf'],
    ['perf-us', 'us-east-1', BASE_ACCOUNT, 'perf'],
    ['partner', 'eu-central-1', PARTNER, 'partner'],
    ['partner-west', 'eu-west-1', PARTNER, 'partner'],
  ])('%s: DescribeCluster in %s as account %s, and a token for that region and identity at the endpoint it gave', async (name, region, account, eksName) => {
    const cluster = await clusterFor('eu-west-1')(name);
    expect(await cluster.listByRun('Job', 'lt', 'r1')).toEqual([]);

    const [describe] = aws.requests.filter(of('eks'));
    expect(describe?.path).toBe(`/clusters/${eksName}`);
    expect(describe?.signedBy?.region).toBe(region);
    expect(accountOf(describe!.signedBy!.accessKeyId)).toBe(account);

    const [call] = aws.requests.filter(of('k8s'));
    expect(call?.path.startsWith(`/k8s/${account}/${region}/${eksName}/apis/batch/v1/namespaces/lt/jobs?`)).toBe(true);
    const url = tokenUrl(call!.bearer!);
    expect(url.host).toBe(`sts.${region}.amazonaws.com`);
    const [key, , scopeRegion, service] = url.searchParams.get('X-Amz-Credential')!.split('/');
    expect([accountOf(key!), scopeRegion, service]).toEqual([account, region, 'sts']);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe(`host;${CLUSTER_ID_HEADER}`);
    // Assumed-role credentials carry their session token into the presigned URL.
    expect(url.searchParams.has('X-Amz-Security-Token')).toBe(account !== BASE_ACCOUNT);
  });

  it('assumes a role once for every region that uses it, from the functions’ own region, and describes each cluster once', async () => {
    const clusterFor_ = clusterFor('eu-west-1');
    for (const name of ['partner', 'partner-west', 'partner', 'partner-west']) await (await clusterFor_(name)).listByRun('Job', 'lt', 'r1');
    const assumes = aws.requests.filter(of('sts'));
    expect(assumes).toHaveLength(1);
    expect(assumes[0]!.form).toMatchObject({ Action: 'AssumeRole', RoleArn: PARTNER_ROLE, RoleSessionName: ROLE_SESSION_NAME });
    expect(assumes[0]!.signedBy).toEqual({ accessKeyId: BASE_CREDENTIALS.accessKeyId, region: 'eu-west-1', service: 'sts' });
    expect(aws.requests.filter(of('eks')).map((r) => r.signedBy!.region)).toEqual(['eu-central-1', 'eu-west-1']);
    expect(aws.requests.filter(of('k8s'))).toHaveLength(4);
  });

  it('in aws-cn the token is for the China STS host of the cluster’s region', async () => {
    aws.addCluster(PARTNER, 'cn-northwest-1', 'cn-perf');
    const role = `arn:aws-cn:iam::${PARTNER}:role/loadplane-access`;
    const cluster = await clusterFor('cn-north-1', [{ name: 'cn-perf', region: 'cn-northwest-1', roleArn: role, namespaces: ['lt'] }])('cn-perf');
    await cluster.listByRun('Job', 'lt', 'r1');
    expect(aws.requests.filter(of('sts'))[0]!.signedBy!.region).toBe('cn-north-1');
    const url = tokenUrl(aws.requests.filter(of('k8s'))[0]!.bearer!);
    expect(url.host).toBe('sts.cn-northwest-1.amazonaws.com.cn');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/\/cn-northwest-1\/sts\/aws4_request$/);
  });

  it('a name not on the allow-list is ClusterNotFound, asking AWS nothing', async () => {
    const err = await clusterFor('eu-west-1')('elsewhere').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterNotFound);
    expect((err as Error).message).toBe("cluster elsewhere is not on the deployment's allow-list (allowedClusters)");
    expect(aws.requests).toEqual([]);
  });

  it('a role the functions may not assume is ClusterForbidden, naming the cluster', async () => {
    const err = await clusterFor('eu-west-1')('closed').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterForbidden);
    expect(err).toMatchObject({ status: 403, retryable: false });
    expect((err as Error).message).toMatch(/^DescribeCluster closed: AccessDenied: .*sts:AssumeRole on resource: arn:aws:iam::333333333333:role\/nope$/);
  });

  it('a cluster in another partition than the functions is ClusterNotFound (not retryable), before any call', async () => {
    const err = await clusterFor('eu-west-1', [{ name: 'cn', region: 'cn-north-1', namespaces: ['lt'] }])('cn').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterNotFound);
    expect((err as Error).message).toBe("cluster cn: region cn-north-1 is not in the functions' partition (aws, region eu-west-1)");
    expect(aws.requests).toEqual([]);
  });
});
