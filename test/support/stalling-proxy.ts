/**
 * An HTTP forwarder in front of kube-sim that can make chosen requests fail the way a real cluster
 * makes them fail, per path: `unreachable` answers as the API server does when nothing listens on the
 * pod's port (503 Status, no Retry-After: not retried), `hang` accepts the request and never answers
 * (a runner whose REST API is stuck). kube-sim's own faults apply to every pod alike (latency) or
 * carry Retry-After (503): this reaches one runner's endpoint only. `hold` keeps one request back
 * until `release()`, which then forwards it: the API server executes a create the client gave up on
 * long ago (its timeout), and the 201 goes nowhere. Everything else is forwarded as is.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export type StallMode = 'unreachable' | 'hang';

/** Which request `hold` keeps back: the first with this method whose path and body contain these. */
export interface HoldMatch {
  method: string;
  pathIncludes: string;
  bodyIncludes?: string;
}

export interface StallingProxy {
  /** A copy of `base` whose cluster is the forwarder. */
  kubeConfig: KubeConfig;
  /** Requests whose path contains `pathIncludes` fail per `mode` from now on. */
  stall(pathIncludes: string, mode: StallMode): void;
  /** Requests the forwarder holds unanswered now. */
  readonly held: number;
  /** The next request matching `match` is kept back, unanswered and not forwarded, until `release()`. */
  hold(match: HoldMatch): void;
  /** Requests kept back by `hold` now. */
  readonly kept: number;
  /** Forwards every request kept back, in order, to kube-sim; resolves with kube-sim's statuses. */
  release(): Promise<number[]>;
  close(): Promise<void>;
}

interface Kept {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  res: ServerResponse;
}

export async function startStallingProxy(target: string, base: KubeConfig): Promise<StallingProxy> {
  const rules: { pathIncludes: string; mode: StallMode }[] = [];
  const held = new Set<ServerResponse>();
  const holds: HoldMatch[] = [];
  const kept: Kept[] = [];
  /** Sends a request to kube-sim as it came, answering `res` unless its client is gone; resolves with kube-sim's status. */
  const forward = (method: string, url: string, headers: IncomingMessage['headers'], body: Buffer, res: ServerResponse) =>
    new Promise<number>((resolve) => {
      const upstream = request(new URL(url, target), { method, headers }, (answer) => {
        resolve(answer.statusCode ?? 0);
        if (res.destroyed || res.writableEnded) {
          answer.resume();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        resolve(0);
        res.destroy();
      });
      upstream.end(body);
    });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const holding = holds.filter((m) => m.method === req.method && (req.url ?? '').includes(m.pathIncludes));
    if (holding.length > 0) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const match = holding.find((m) => m.bodyIncludes === undefined || body.toString('utf8').includes(m.bodyIncludes));
        if (!match || !holds.includes(match)) {
          void forward(req.method ?? 'GET', req.url ?? '/', req.headers, body, res);
          return;
        }
        holds.splice(holds.indexOf(match), 1);
        kept.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, res });
      });
      return;
    }
    const rule = rules.findLast((r) => (req.url ?? '').includes(r.pathIncludes));
    if (rule?.mode === 'hang') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (rule?.mode === 'unreachable') {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'error trying to reach service: dial tcp 10.0.0.1:6565: connect: connection refused',
          reason: 'ServiceUnavailable',
          code: 503,
        }),
      );
      return;
    }
    const forwarded = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: base.clusters.map((c) => ({ ...c, server: url })),
    users: base.users,
    contexts: base.contexts,
    currentContext: base.currentContext,
  });
  return {
    kubeConfig,
    stall: (pathIncludes, mode) => rules.push({ pathIncludes, mode }),
    get held() {
      return held.size;
    },
    hold: (match) => holds.push(match),
    get kept() {
      return kept.length;
    },
    release: async () => {
      const statuses: number[] = [];
      for (const k of kept.splice(0)) statuses.push(await forward(k.method, k.url, k.headers, k.body, k.res));
      return statuses;
    },
    close: async () => {
      for (const res of held) res.destroy();
      for (const k of kept.splice(0)) k.res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
