/**
 * A webhook receiver for tests, on 127.0.0.1: records every request it fully received and answers
 * from a programmable queue. It can stop listening and listen again on the same port, so a test can
 * make connections be refused and then bring the receiver back.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  /** Lowercased names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Epoch ms when the whole request had arrived. */
  receivedAt: number;
}

type Answer = { kind: 'respond'; status: number; headers: Record<string, string>; body: string } | { kind: 'hang' } | { kind: 'reset' };

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`: append a path to make a webhook URL. */
  readonly url: string;
  readonly port: number;
  /** Every request fully received, in order. */
  readonly requests: ReceivedRequest[];
  /** How many requests were fully received (whatever the answer was). */
  readonly deliveries: number;
  /**
   * Queues an answer for the next `times` requests (default: every later one). Queued answers are
   * used in order; with the queue empty the receiver answers 200 `ok`.
   */
  respondWith(status: number, options?: { times?: number; headers?: Record<string, string>; body?: string }): void;
  /** Queues a non-answer: the request is read whole and recorded, and no response is ever written. */
  acceptThenHang(times?: number): void;
  /** Queues a dropped connection: the request is read whole and recorded, then the connection is destroyed unanswered. */
  acceptThenReset(times?: number): void;
  /** Forgets the recorded requests and the queued answers. */
  reset(): void;
  /** Stops listening and drops open connections (hanging ones too): connections are now refused. */
  close(): Promise<void>;
  /** Listens again, on the same port. */
  listen(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const queue: { answer: Answer; remaining: number }[] = [];
  const sockets = new Set<Socket>();

  const nextAnswer = (): Answer => {
    const head = queue[0];
    if (!head) return { kind: 'respond', status: 200, headers: {}, body: 'ok' };
    if (--head.remaining <= 0) queue.shift();
    return head.answer;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
      });
      const answer = nextAnswer();
      if (answer.kind === 'hang') return;
      if (answer.kind === 'reset') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const listenOn = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listenOn(0);
  const port = (server.address() as AddressInfo).port;

  const enqueue = (answer: Answer, times = Number.POSITIVE_INFINITY) => queue.push({ answer, remaining: times });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get deliveries() {
      return requests.length;
    },
    respondWith(status, { times, headers = {}, body = '' } = {}) {
      enqueue({ kind: 'respond', status, headers, body }, times);
    },
    acceptThenHang(times) {
      enqueue({ kind: 'hang' }, times);
    },
    acceptThenReset(times) {
      enqueue({ kind: 'reset' }, times);
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    listen: () => listenOn(port),
  };
}
