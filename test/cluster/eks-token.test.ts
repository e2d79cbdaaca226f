import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EksTokenSource, presignEksToken, TOKEN_PREFIX, type AwsCredentials } from '../../lambdas/cluster/eks-token';

const CREDS: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const SESSION_CREDS: AwsCredentials = { ...CREDS, sessionToken: 'FwoGZXIvYXdzEJr//////////wEaDH+session/token=' };
const SIGNING_DATE = new Date('2026-12-01T10:20:30Z');

function decode(token: string): URL {
  expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
  const encoded = token.slice(TOKEN_PREFIX.length);
  expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
  return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
}

/** RFC 3986 encoding as SigV4 wants it, written independently of the code under test. */
function uriEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** SigV4 query-string signing by hand (docs.aws.amazon.com "Create a signed AWS API request"). */
function expectedSignature(
  creds: AwsCredentials,
  region: string,
  host: string,
  cluster: string,
  date: Date,
): { signature: string; params: Record<string, string> } {
  const amzDate = date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const shortDate = amzDate.slice(0, 8);
  const scope = `${shortDate}/${region}/sts/aws4_request`;
  const params: Record<string, string> = {
    Action: 'GetCallerIdentity',
    Version: '2011-06-15',
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${creds.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': '60',
    'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
    ...(creds.sessionToken ? { 'X-Amz-Security-Token': creds.sessionToken } : {}),
  };
  const canonicalQuery = Object.keys(params)
    .map((k) => [uriEncode(k), uriEncode(params[k]!)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    '/',
    canonicalQuery,
    `host:${host}\nx-k8s-aws-id:${cluster}\n`,
    'host;x-k8s-aws-id',
    createHash('sha256').update('').digest('hex'),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  let key = hmac(`AWS4${creds.secretAccessKey}`, shortDate);
  for (const part of [region, 'sts', 'aws4_request']) key = hmac(key, part);
  return { signature: createHmac('sha256', key).update(stringToSign).digest('hex'), params };
}

describe('EKS token', () => {
  // The STS hosts per partition, as the AWS docs' endpoint tables and aws-iam-authenticator's
  // GetSTSPartitionDomain name them: China's suffix is amazonaws.com.cn, GovCloud's amazonaws.com.
  it.each([
    ['long-term credentials', CREDS, 'us-east-1', 'sts.us-east-1.amazonaws.com', 'prod-load'],
    ['session credentials', SESSION_CREDS, 'eu-west-1', 'sts.eu-west-1.amazonaws.com', 'team.cluster_2'],
    ['session credentials in aws-cn', SESSION_CREDS, 'cn-north-1', 'sts.cn-north-1.amazonaws.com.cn', 'prod-load'],
    ['session credentials in aws-cn, Ningxia', SESSION_CREDS, 'cn-northwest-1', 'sts.cn-northwest-1.amazonaws.com.cn', 'prod-load'],
    ['long-term credentials in aws-us-gov', CREDS, 'us-gov-west-1', 'sts.us-gov-west-1.amazonaws.com', 'prod-load'],
  ])(
    'with %s (%s): the signature equals an independent SigV4 presign, and the URL carries exactly the expected query',
    async (_, creds, region, host, cluster) => {
      const token = await presignEksToken({ clusterName: cluster, region, credentials: async () => creds }, SIGNING_DATE);
      const url = decode(token);
      const { signature, params } = expectedSignature(creds, region, host, cluster, SIGNING_DATE);

      expect(url.protocol).toBe('https:');
      expect(url.host).toBe(host);
      expect(url.searchParams.get('X-Amz-Credential')).toBe(`${creds.accessKeyId}/20261201/${region}/sts/aws4_request`);
      expect(url.pathname).toBe('/');
      const query = Object.fromEntries(url.searchParams);
      expect(query).toEqual({ ...params, 'X-Amz-Signature': signature });
      expect(query['X-Amz-SignedHeaders']!.split(';')).toContain('x-k8s-aws-id');
      expect(query['x-k8s-aws-id']).toBeUndefined(); // signed as a header, not hoisted into the query
    },
  );

  it('a name that is no region is refused, naming it, before anything is signed', async () => {
    let asked = 0;
    const credentials = async () => {
      asked++;
      return CREDS;
    };
    await expect(presignEksToken({ clusterName: 'a', region: 'sts.evil.example/', credentials }, SIGNING_DATE)).rejects.toThrow(
      '"sts.evil.example/" is not an AWS region: cannot name its STS endpoint',
    );
    expect(asked).toBe(0);
  });

  it('a different cluster name gives a different signature (the header is signed)', async () => {
    const sign = (clusterName: string) => presignEksToken({ clusterName, region: 'us-east-1', credentials: async () => CREDS }, SIGNING_DATE);
    const a = decode(await sign('a')).searchParams.get('X-Amz-Signature');
    const b = decode(await sign('b')).searchParams.get('X-Amz-Signature');
    expect(a).not.toBe(b);
  });
});

describe('EksTokenSource', () => {
  function source(start: number) {
    let now = start;
    let signings = 0;
    const tokens = new EksTokenSource({
      clusterName: 'prod',
      region: 'us-east-1',
      credentials: async () => {
        signings++;
        return CREDS;
      },
      now: () => now,
    });
    return {
      tokens,
      advance: (ms: number) => (now += ms),
      signings: () => signings,
    };
  }
  const t0 = SIGNING_DATE.getTime();
  const dateOf = (token: string) => decode(token).searchParams.get('X-Amz-Date');

  it('reuses a token until a minute before its 15 minutes are up, then signs a new one', async () => {
    const s = source(t0);
    const first = await s.tokens.token();
    expect(s.signings()).toBe(1);
    s.advance(13 * 60_000 + 59_999);
    expect(await s.tokens.token()).toBe(first);
    expect(s.signings()).toBe(1);
    s.advance(1);
    const second = await s.tokens.token();
    expect(s.signings()).toBe(2);
    expect(second).not.toBe(first);
    expect(dateOf(second)).toBe('20261201T103430Z');
    expect(await s.tokens.token()).toBe(second);
    expect(s.signings()).toBe(2);
  });

  it('concurrent callers share one signing', async () => {
    const s = source(t0);
    const all = await Promise.all([s.tokens.token(), s.tokens.token(), s.tokens.token()]);
    expect(new Set(all).size).toBe(1);
    expect(s.signings()).toBe(1);
  });

  it('a failed signing is not cached', async () => {
    let calls = 0;
    const tokens = new EksTokenSource({
      clusterName: 'prod',
      region: 'us-east-1',
      credentials: async () => {
        if (calls++ === 0) throw new Error('credentials not ready');
        return CREDS;
      },
      now: () => t0,
    });
    await expect(tokens.token()).rejects.toThrow('credentials not ready');
    expect(decode(await tokens.token()).searchParams.get('X-Amz-Date')).toBe('20261201T102030Z');
    expect(calls).toBe(2);
  });
});
