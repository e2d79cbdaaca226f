/**
 * The CLI's SigV4 signing (local/cli/sigv4.ts) against an independent implementation of the
 * algorithm written here from the specification, step by step, with node:crypto only (canonical
 * request, string to sign, signing key, signature): nothing of @smithy's is used for the expected
 * values. The reference itself is checked first against the AWS test suite's `get-vanilla` example.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../local/cli/api-client';
import { isLocalServeUrl } from '../../local/cli/remote-run';
import { createSigV4Signer, regionOfApiHost, SIGNING_SERVICE } from '../../local/cli/sigv4';

// ---- The reference: AWS Signature Version 4, from the specification -------------------------------

/** RFC 3986 unreserved characters stay; every other byte is %XX (uppercase hex). */
function uriEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

interface ReferenceRequest {
  method: string;
  /** The path as sent, percent-encoded (every service but S3 encodes each segment once more). */
  path: string;
  /** Decoded query parameters, in any order. */
  query: [string, string][];
  /** Headers to sign, any case. */
  headers: Record<string, string>;
  body: string;
}

function referenceAuthorization(
  request: ReferenceRequest,
  credentials: { accessKeyId: string; secretAccessKey: string },
  region: string,
  service: string,
  amzDate: string,
): string {
  // 1. The canonical request.
  const canonicalUri = request.path
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
  const canonicalQuery = request.query
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headers = Object.entries(request.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, ' ')] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const canonicalHeaders = headers.map(([k, v]) => `${k}:${v}\n`).join('');
  const signedHeaders = headers.map(([k]) => k).join(';');
  const canonicalRequest = [request.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, sha256Hex(request.body)].join('\n');
  // 2. The string to sign.
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  // 3. The signing key.
  const kDate = hmac(`AWS4${credentials.secretAccessKey}`, date);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  const kSigning = hmac(kService, 'aws4_request');
  // 4. The signature.
  const signature = createHmac('sha256', kSigning).update(stringToSign, 'utf8').digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

// ---------------------------------------------------------------------------------------------------

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session/token+example==' };
const SIGNING_DATE = new Date('2025-01-02T03:04:05.678Z');
const AMZ_DATE = '20250102T030405Z';

describe('the reference SigV4 implementation of this test', () => {
  it("reproduces the AWS SigV4 test suite's get-vanilla signature", () => {
    const authorization = referenceAuthorization(
      { method: 'GET', path: '/', query: [], headers: { Host: 'example.amazonaws.com', 'X-Amz-Date': '20150830T123600Z' }, body: '' },
      CREDENTIALS,
      'us-east-1',
      'service',
      '20150830T123600Z',
    );
    expect(authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });
});

describe('createSigV4Signer', () => {
  const body = '{"name":"k6-smoke","engine":"k6","parallelism":2,"script":{"inline":"export default function () {}"}}';
  const url = new URL('https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod/runs?status=RUNNING&limit=5&name=k6-smoke&next=a%2Bb%2Fc%3D%3D%20d');

  it('signs a fixed request (query string, body, temporary credentials) as the specification says', async () => {
    const sign = createSigV4Signer({ region: regionOfApiHost(url.hostname)!, credentials: CREDENTIALS, now: () => SIGNING_DATE });
    const given = { 'content-type': 'application/json; charset=utf-8', 'Idempotency-Key': 'ci-job-4711', accept: 'application/json' };
    const headers = await sign({ method: 'POST', url, headers: given, body: new TextEncoder().encode(body) });

    expect(headers['x-amz-date']).toBe(AMZ_DATE);
    expect(headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
    expect(headers.host).toBe(url.host);
    const expected = referenceAuthorization(
      {
        method: 'POST',
        path: '/prod/runs',
        query: [
          ['status', 'RUNNING'],
          ['limit', '5'],
          ['name', 'k6-smoke'],
          ['next', 'a+b/c== d'],
        ],
        headers: { ...given, host: url.host, 'x-amz-date': AMZ_DATE, 'x-amz-security-token': CREDENTIALS.sessionToken },
        body,
      },
      CREDENTIALS,
      'eu-west-1',
      'execute-api',
      AMZ_DATE,
    );
    expect(headers.authorization).toBe(expected);
    expect(expected).toContain('Credential=AKIDEXAMPLE/20250102/eu-west-1/execute-api/aws4_request');
  });

  it('a different body, or another second, is another signature', async () => {
    const sign = (now: Date, text: string) =>
      createSigV4Signer({ region: 'eu-west-1', credentials: CREDENTIALS, now: () => now })({
        method: 'POST',
        url,
        headers: {},
        body: new TextEncoder().encode(text),
      });
    const a = (await sign(SIGNING_DATE, body)).authorization;
    expect((await sign(SIGNING_DATE, `${body} `)).authorization).not.toBe(a);
    expect((await sign(new Date(SIGNING_DATE.getTime() + 1000), body)).authorization).not.toBe(a);
    expect((await sign(SIGNING_DATE, body)).authorization).toBe(a);
  });

  it('credentials may come from a provider (the default chain is one), called per request', async () => {
    let calls = 0;
    const sign = createSigV4Signer({
      region: 'us-east-2',
      credentials: async () => {
        calls++;
        return { accessKeyId: 'AKIDPROVIDED', secretAccessKey: 'secret' };
      },
      now: () => SIGNING_DATE,
    });
    const headers = await sign({ method: 'GET', url: new URL('https://api.example.com/runs'), headers: {} });
    expect(headers.authorization).toBe(
      referenceAuthorization(
        { method: 'GET', path: '/runs', query: [], headers: { host: 'api.example.com', 'x-amz-date': AMZ_DATE }, body: '' },
        { accessKeyId: 'AKIDPROVIDED', secretAccessKey: 'secret' },
        'us-east-2',
        SIGNING_SERVICE,
        AMZ_DATE,
      ),
    );
    expect(headers['x-amz-security-token']).toBeUndefined();
    expect(calls).toBe(1);
  });
});

describe('what is signed, and for which region', () => {
  it.each([
    ['a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com', 'eu-west-1'],
    ['A1B2C3D4E5.EXECUTE-API.US-EAST-2.AMAZONAWS.COM', 'us-east-2'],
    ['a1b2c3d4e5-vpce-0123456789abcdef0.execute-api.ap-southeast-2.vpce.amazonaws.com', 'ap-southeast-2'],
    ['a1b2c3d4e5.execute-api.cn-north-1.amazonaws.com.cn', 'cn-north-1'],
    ['a1b2c3d4e5.execute-api.us-gov-west-1.amazonaws.com', 'us-gov-west-1'],
    ['loadtest.example.com', undefined],
    ['execute-api.eu-west-1.amazonaws.com.evil.example', undefined],
  ])('the region of %s is %s', (host, region) => {
    expect(regionOfApiHost(host)).toBe(region);
  });

  it.each([
    ['http://127.0.0.1:8787', true],
    ['http://localhost:8787/', true],
    ['http://[::1]:8787', true],
    ['http://127.1.2.3:80', true],
    ['https://127.0.0.1:8787', false],
    ['http://10.0.0.5:8787', false],
    ['http://127.0.0.1.example.com', false],
    ['https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod', false],
  ])('%s goes unsigned (a local serve): %s', (url, local) => {
    expect(isLocalServeUrl(new URL(url))).toBe(local);
  });
});

describe('a signed request as a server receives it', () => {
  let server: ReturnType<typeof createServer>;
  let base: string;
  const received: { req: IncomingMessage; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ req, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ runs: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prod`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('verifies: the signature the server recomputes from the wire (path, query, headers, body) is the one sent', async () => {
    const client = new ApiClient({
      baseUrl: base,
      sign: createSigV4Signer({ region: 'eu-west-1', credentials: CREDENTIALS, now: () => SIGNING_DATE }),
      userAgent: 'loadplane-cli/test',
    });
    await client.listRuns({ status: 'RUNNING', name: 'k6-smoke', limit: 5, next: "a+b/c== d!'()*~" });
    const { req, body } = received.at(-1)!;
    const url = new URL(req.url!, 'http://placeholder');
    const sent = req.headers.authorization!;
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(sent)![1]!.split(';');
    expect(signedHeaders).toEqual(['accept', 'host', 'x-amz-date', 'x-amz-security-token']);
    const headers = Object.fromEntries(signedHeaders.map((h) => [h, String(req.headers[h])]));
    const recomputed = referenceAuthorization(
      { method: req.method!, path: url.pathname, query: [...url.searchParams], headers, body },
      CREDENTIALS,
      'eu-west-1',
      'execute-api',
      String(req.headers['x-amz-date']),
    );
    expect(sent).toBe(recomputed);
    expect(url.searchParams.get('next')).toBe("a+b/c== d!'()*~");
    // The user agent is sent, never signed (proxies may rewrite it).
    expect(req.headers['user-agent']).toBe('loadplane-cli/test');
  });
});
