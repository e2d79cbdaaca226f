/**
 * The CLI's HTTP client (local/cli/api-client.ts) against a tiny node:http server scripted per test:
 * retries and what they keep (the Idempotency-Key), what they give up on, and how each failure is
 * typed for the CLI's exit codes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunResource } from '../../lambdas/api/resources';
import { IDEMPOTENCY_KEY_RULE, MAX_IDEMPOTENCY_KEY_LENGTH } from '../../lambdas/api/idempotency-key';
import { ApiBadAnswer, ApiClient, ApiRefused, ApiSigningFailed, ApiUnreachable, type ApiClientOptions } from '../../local/cli/api-client';
import { parseIdempotencyKey } from '../../local/cli/commands/run';

const RUN: RunResource = {
  runId: 'kq5w7amd6z3qdyxmzs29vfk978',
  name: 'k6-smoke',
  status: 'PENDING',
  trigger: { kind: 'api', caller: 'arn:aws:iam::000000000000:user/local', idempotencyKey: 'key-1' },
  createdAt: '2025-01-02T03:04:05.000Z',
  updatedAt: '2025-01-02T03:04:05.000Z',
  engine: 'k6',
  parallelism: 4,
  stages: [],
  links: { self: '/runs/kq5w7amd6z3qdyxmzs29vfk978' },
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The server answers request n with handlers[n] (the last one again after that). */
let handlers: ((res: ServerResponse, seen: Seen) => void)[] = [];
let seen: Seen[] = [];
let server: ReturnType<typeof createServer>;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(request);
      const handler = handlers[Math.min(seen.length - 1, handlers.length - 1)]!;
      handler(res, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  handlers = [];
  seen = [];
});

const answer =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
  };

/** A client with no real waiting: the backoff delays are recorded instead. */
function client(options: Partial<ApiClientOptions> = {}): { api: ApiClient; delays: number[]; retries: string[] } {
  const delays: number[] = [];
  const retries: string[] = [];
  const api = new ApiClient({
    baseUrl: base,
    backoffMs: () => 5,
    sleep: async (ms) => {
      delays.push(ms);
    },
    onRetry: (note) => retries.push(note.reason),
    ...options,
  });
  return { api, delays, retries };
}

const SPEC = new TextEncoder().encode('name: k6-smoke\nengine: k6\n');

describe('ApiClient: retries', () => {
  it('503 then 201: succeeds, and the retry carries the same Idempotency-Key and body', async () => {
    handlers = [answer(503, { message: 'Service Unavailable' }), answer(201, RUN)];
    const { api, retries } = client();
    const result = await api.submitRun(SPEC, 'application/yaml; charset=utf-8', 'ci-job-4711');
    expect(result.status).toBe(201);
    expect(result.value.runId).toBe(RUN.runId);
    expect(seen).toHaveLength(2);
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['ci-job-4711', 'ci-job-4711']);
    expect(seen.map((s) => s.body)).toEqual([new TextDecoder().decode(SPEC), new TextDecoder().decode(SPEC)]);
    expect(seen.map((s) => [s.method, s.url, s.headers['content-type']])).toEqual([
      ['POST', '/runs', 'application/yaml; charset=utf-8'],
      ['POST', '/runs', 'application/yaml; charset=utf-8'],
    ]);
    expect(retries).toEqual(['HTTP 503: Service Unavailable']);
  });

  it('a connection dropped without an answer is retried with the same key; 200 (same key and spec) is the same run', async () => {
    handlers = [(res) => res.socket!.destroy(), answer(200, { ...RUN, status: 'RUNNING' })];
    const { api, retries } = client();
    const result = await api.submitRun(SPEC, 'application/yaml', 'key-2');
    expect(result).toMatchObject({ status: 200, value: { runId: RUN.runId, status: 'RUNNING' } });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['key-2', 'key-2']);
    expect(retries).toHaveLength(1);
  });

  it('429, 500, 502, 503 and 504 are retried; once the attempts are spent it is ApiUnreachable with the last status', async () => {
    handlers = [
      answer(429, {}),
      answer(500, { errors: [{ path: '(server)', message: 'retrying it is safe' }] }),
      answer(502, {}),
      answer(504, 'Gateway Timeout'),
    ];
    const { api, retries } = client({ attempts: 4 });
    const err = await api.getRun(RUN.runId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiUnreachable);
    expect(err).not.toBeInstanceOf(ApiBadAnswer);
    expect((err as ApiUnreachable).attempts).toBe(4);
    expect((err as ApiUnreachable).reason).toBe('HTTP 504: "Gateway Timeout"');
    expect(retries).toEqual(['HTTP 429', 'HTTP 500: retrying it is safe', 'HTTP 502']);
    expect(seen).toHaveLength(4);
  });

  it('Retry-After is honoured (up to its bound) when longer than the backoff', async () => {
    handlers = [answer(503, {}, { 'retry-after': '3' }), answer(503, {}, { 'retry-after': '3600' }), answer(200, RUN)];
    const { api, delays } = client({ maxRetryAfterMs: 10_000 });
    await api.getRun(RUN.runId);
    expect(delays).toEqual([3_000, 10_000]);
  });

  it('connection refused: ApiUnreachable after every attempt, saying so', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { api, retries } = client({ baseUrl: `http://127.0.0.1:${port}`, attempts: 3 });
    const err = await api.submitRun(SPEC, 'application/yaml', 'k').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiUnreachable);
    expect(err).toMatchObject({ reason: 'connection refused', attempts: 3 });
    expect((err as Error).message).toBe(`cannot reach the API at http://127.0.0.1:${port}: connection refused (3 attempts)`);
    expect(retries).toEqual(['connection refused', 'connection refused']);
  });

  it('a server that never answers: each attempt times out, then ApiUnreachable', async () => {
    handlers = [() => undefined]; // never answers
    const { api, retries } = client({ timeoutMs: 200, attempts: 2 });
    const started = Date.now();
    const err = await api.getRun(RUN.runId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiUnreachable);
    expect(err).toMatchObject({ reason: 'no answer within 0.2 s', attempts: 2 });
    expect(retries).toEqual(['no answer within 0.2 s']);
    expect(seen).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('a server that stalls mid-answer times out too (the timeout covers reading the answer)', async () => {
    handlers = [
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"runId":'); // and nothing more
      },
    ];
    const { api } = client({ timeoutMs: 200, attempts: 1 });
    await expect(api.getRun(RUN.runId)).rejects.toMatchObject({ name: 'ApiUnreachable', reason: 'no answer within 0.2 s' });
  });
});

describe('ApiClient: refusals and answers', () => {
  it("400: ApiRefused with the API's problems, not retried", async () => {
    const errors = [
      { path: 'parallelism', message: 'must be at least 1' },
      { path: 'runner.image', message: 'image "evil/x:1" is not on the allow-list' },
    ];
    handlers = [answer(400, { errors })];
    const { api, retries } = client();
    const err = await api.submitRun(SPEC, 'application/yaml', 'k').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiRefused);
    expect(err).toMatchObject({ status: 400, errors, body: { errors } });
    expect(seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('409: ApiRefused carries the run it collided with', async () => {
    const run = { runId: RUN.runId, status: 'SUCCEEDED', outcome: 'SUCCEEDED', trigger: { kind: 'api' }, createdAt: RUN.createdAt, updatedAt: RUN.updatedAt };
    handlers = [answer(409, { errors: [{ path: 'id', message: `run ${RUN.runId} already ended SUCCEEDED` }], run })];
    const err = await client()
      .api.abortRun(RUN.runId)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiRefused);
    expect((err as ApiRefused).status).toBe(409);
    expect((err as ApiRefused).run).toMatchObject({ runId: RUN.runId, status: 'SUCCEEDED' });
  });

  it("API Gateway's own 403 ({ message }) is an ApiRefused naming the authorization", async () => {
    handlers = [answer(403, { message: 'Missing Authentication Token' })];
    const err = await client()
      .api.getRun(RUN.runId)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiRefused);
    expect((err as ApiRefused).errors).toEqual([{ path: '(authorization)', message: 'HTTP 403: Missing Authentication Token' }]);
  });

  it('a redirect is not followed (a signed request would go elsewhere): refused, naming where it pointed', async () => {
    handlers = [answer(301, '', { location: 'https://elsewhere.example.com/runs' })];
    const err = await client()
      .api.getRun(RUN.runId)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiRefused);
    expect((err as ApiRefused).errors[0]!.message).toContain('https://elsewhere.example.com/runs');
  });

  it("a 2xx that is not the API's answer (another server at that URL) is ApiBadAnswer, an ApiUnreachable", async () => {
    handlers = [answer(200, '<html>hello</html>')];
    const err = await client()
      .api.getRun(RUN.runId)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiBadAnswer);
    expect(err).toBeInstanceOf(ApiUnreachable);
    handlers = [answer(200, { hello: 'world' })];
    await expect(client().api.getRun(RUN.runId)).rejects.toMatchObject({ name: 'ApiBadAnswer', message: expect.stringContaining('runId') });
  });

  it('answers keep their raw document (for --json) beside the parsed one', async () => {
    handlers = [answer(200, { ...RUN, futureField: 1 })];
    const result = await client().api.getRun(RUN.runId);
    expect(result.raw).toMatchObject({ futureField: 1 });
    expect(result.value).not.toHaveProperty('futureField');
  });

  it("a signer's failure (no credentials) is ApiSigningFailed, and nothing is sent", async () => {
    handlers = [answer(200, RUN)];
    const { api } = client({
      sign: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    });
    await expect(api.getRun(RUN.runId)).rejects.toBeInstanceOf(ApiSigningFailed);
    expect(seen).toHaveLength(0);
  });
});

describe('ApiClient: URLs', () => {
  it("routes go under the base URL's path (an API Gateway stage); ids and query values are encoded", async () => {
    handlers = [
      answer(200, RUN),
      answer(200, { runs: [], next: 'tok' }),
      answer(202, { runId: RUN.runId, status: 'RUNNING', abortRequestedAt: RUN.createdAt, message: 'abort recorded' }),
    ];
    const { api } = client({ baseUrl: `${base}/prod/` });
    await api.getRun('a/b?c');
    const list = await api.listRuns({ status: 'RUNNING', name: 'k6-smoke', limit: 5, next: 'a+b/c= d&x=1' });
    expect(list.value).toEqual({ runs: [], next: 'tok' });
    await api.abortRun(RUN.runId);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /prod/runs/a%2Fb%3Fc',
      'GET /prod/runs?status=RUNNING&name=k6-smoke&limit=5&next=a%2Bb%2Fc%3D%20d%26x%3D1',
      `DELETE /prod/runs/${RUN.runId}`,
    ]);
    expect(new URL(seen[1]!.url, base).searchParams.get('next')).toBe('a+b/c= d&x=1');
  });

  it("the CLI's --key takes what the API takes, and refuses the rest with the API's rule", () => {
    const longest = 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH);
    expect(parseIdempotencyKey(longest)).toBe(longest);
    for (const bad of [longest + 'k', 'has space', '', 'tab\there', 'naïve']) expect(() => parseIdempotencyKey(bad), bad).toThrow(IDEMPOTENCY_KEY_RULE);
  });
});
