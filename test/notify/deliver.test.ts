import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliver, type DeliveryResult } from '../../lambdas/notify/deliver';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { SECRET_PATH } from './fixtures';

let receiver: WebhookReceiver;
let url: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  url = receiver.url + SECRET_PATH;
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

const send = (options: { timeoutMs?: number; to?: string } = {}) =>
  deliver({
    url: options.to ?? url,
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'run1:SUCCEEDED' },
    body: '{"hello":"wörld"}',
    receiver: 'webhook-ops',
    timeoutMs: options.timeoutMs ?? 5_000,
  });

/** No part of the URL's secret path may appear in what deliver returns. */
function expectNoSecret(result: DeliveryResult) {
  const text = JSON.stringify(result);
  expect(text).not.toContain('SECRET');
  expect(text).not.toContain(SECRET_PATH);
  expect(text).not.toContain(url);
}

describe('deliver', () => {
  it('POSTs the body with its headers and exact length, and no redirect or pooling surprises', async () => {
    const result = await send();
    expect(result).toEqual({ kind: 'delivered', status: 200 });
    expect(receiver.deliveries).toBe(1);
    const [received] = receiver.requests;
    expect(received).toMatchObject({ method: 'POST', path: SECRET_PATH });
    expect(received!.body.toString('utf8')).toBe('{"hello":"wörld"}');
    expect(received!.headers).toMatchObject({
      'content-type': 'application/json',
      'idempotency-key': 'run1:SUCCEEDED',
      'content-length': String(Buffer.byteLength('{"hello":"wörld"}')),
      'user-agent': 'loadplane',
    });
  });

  it.each([
    { status: 200, expected: { kind: 'delivered', status: 200 } },
    { status: 201, expected: { kind: 'delivered', status: 201 } },
    { status: 204, expected: { kind: 'delivered', status: 204 } },
    { status: 400, expected: { kind: 'rejected', status: 400 } },
    { status: 401, expected: { kind: 'rejected', status: 401 } },
    { status: 403, expected: { kind: 'rejected', status: 403 } },
    { status: 404, expected: { kind: 'rejected', status: 404 } },
    { status: 410, expected: { kind: 'rejected', status: 410 } },
    { status: 301, expected: { kind: 'rejected', status: 301 } },
    { status: 302, expected: { kind: 'rejected', status: 302 } },
    { status: 408, expected: { kind: 'not-delivered', reason: 'webhook-ops answered HTTP 408' } },
    { status: 429, expected: { kind: 'not-delivered', reason: 'webhook-ops answered HTTP 429' } },
    { status: 500, expected: { kind: 'not-delivered', reason: 'webhook-ops answered HTTP 500' } },
    { status: 502, expected: { kind: 'not-delivered', reason: 'webhook-ops answered HTTP 502' } },
    { status: 503, expected: { kind: 'not-delivered', reason: 'webhook-ops answered HTTP 503' } },
  ])('HTTP $status → $expected.kind', async ({ status, expected }) => {
    receiver.respondWith(status, { times: 1, headers: status >= 300 && status < 400 ? { location: `${receiver.url}/elsewhere` } : {} });
    const result = await send();
    expect(result).toEqual(expected);
    expectNoSecret(result);
    // Exactly one request: a redirect is not followed.
    expect(receiver.requests.map((r) => r.path)).toEqual([SECRET_PATH]);
  });

  it('passes on Retry-After in seconds', async () => {
    receiver.respondWith(429, { times: 1, headers: { 'retry-after': '30' } });
    expect(await send()).toEqual({ kind: 'not-delivered', reason: 'webhook-ops answered HTTP 429', retryAfterSeconds: 30 });
  });

  it('passes on Retry-After given as an HTTP date, as seconds from now', async () => {
    receiver.respondWith(503, { times: 1, headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() } });
    const result = await send();
    expect(result.kind).toBe('not-delivered');
    const seconds = result.kind === 'not-delivered' ? result.retryAfterSeconds : undefined;
    expect(seconds).toBeGreaterThan(3_000);
    expect(seconds).toBeLessThanOrEqual(3_600);
  });

  it('ignores a Retry-After it cannot read', async () => {
    receiver.respondWith(503, { times: 1, headers: { 'retry-after': 'soon' } });
    expect(await send()).toEqual({ kind: 'not-delivered', reason: 'webhook-ops answered HTTP 503' });
  });

  it('a refused connection is a definite non-delivery; the same URL works once the receiver is back', async () => {
    await receiver.close();
    try {
      const refused = await send();
      expect(refused).toEqual({
        kind: 'not-delivered',
        reason: 'webhook-ops: connection refused (ECONNREFUSED) before the request was sent; nothing was delivered',
      });
      expectNoSecret(refused);
    } finally {
      await receiver.listen();
    }
    expect(receiver.deliveries).toBe(0);
    expect(await send()).toEqual({ kind: 'delivered', status: 200 });
    expect(receiver.deliveries).toBe(1);
  });

  it('no answer after the request was received is unknown, after the timeout', async () => {
    receiver.acceptThenHang(1);
    const result = await send({ timeoutMs: 150 });
    expect(result).toEqual({
      kind: 'unknown',
      reason: 'webhook-ops: no answer within 0.15 s after the request was sent; it may have been received',
      cause: 'no answer within 0.15 s',
    });
    expectNoSecret(result);
    // It was received: this is exactly the case a retry must not blindly repeat.
    expect(receiver.deliveries).toBe(1);
  });

  it('a connection dropped after the request was received is unknown', async () => {
    receiver.acceptThenReset(1);
    const result = await send();
    expect(result).toEqual({
      kind: 'unknown',
      reason: 'webhook-ops: connection reset (ECONNRESET) after the request was sent; it may have been received',
      cause: 'connection dropped',
    });
    expectNoSecret(result);
    expect(receiver.deliveries).toBe(1);
  });

  it('a request that could not be sent in time is a definite non-delivery', async () => {
    // Accepts connections and never reads: once the kernel buffers are full the request cannot be sent whole.
    const sockets: Socket[] = [];
    const stalled = createTcpServer({ pauseOnConnect: true }, (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    try {
      const result = await deliver({
        url: `http://127.0.0.1:${(stalled.address() as AddressInfo).port}${SECRET_PATH}`,
        headers: {},
        body: Buffer.alloc(64 * 1024 * 1024, 0x20),
        receiver: 'webhook-ops',
        timeoutMs: 300,
      });
      expect(result).toEqual({
        kind: 'not-delivered',
        reason: 'webhook-ops: could not connect and send within 0.3 s; nothing was delivered',
      });
      expectNoSecret(result);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => stalled.close(resolve));
    }
  });

  it.each([
    { case: 'not a URL', to: `not a url ${SECRET_PATH}`, reason: 'webhook-ops: the configured URL is not a valid URL; nothing was sent' },
    { case: 'not http(s)', to: `ftp://127.0.0.1${SECRET_PATH}`, reason: 'webhook-ops: the configured URL is not http(s); nothing was sent' },
  ])('a URL that is $case is not delivered, and not quoted', async ({ to, reason }) => {
    const result = await send({ to });
    expect(result).toEqual({ kind: 'not-delivered', reason });
    expectNoSecret(result);
    expect(receiver.deliveries).toBe(0);
  });

  it('names "the receiver" when the caller gives no name', async () => {
    receiver.respondWith(500, { times: 1 });
    expect(await deliver({ url, headers: {}, body: '{}' })).toEqual({ kind: 'not-delivered', reason: 'the receiver answered HTTP 500' });
  });
});
