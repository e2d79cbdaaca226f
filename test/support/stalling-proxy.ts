/**
 * An HTTP forwarder in front of kube-sim that can make chosen requests fail the way a real cluster
 * makes them fail, per path: `unreachable` answers as the API server does when nothing listens on the
 * pod's port (503 Status, no Retry-After: not retried), `hang` accepts the request and never answers
 * (a runner whose REST API is stuck). kube-sim's own faults apply to every pod alike (latency) or
 * carry Retry-After (503): this reaches one runner's endpoint only. Everything else is forwarded as is.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export type StallMode = 'unreachable' | 'hang';

export interface StallingProxy {
  /** A copy of `base` whose cluster is the forwarder. */
  kubeConfig: KubeConfig;
  /** Requests whose path contains `pathIncludes` fail per `mode` from now on. */
  stall(pathIncludes: string, mode: StallMode): void;
  /** Requests the forwarder holds unanswered now. */
  readonly held: number;
  close(): Promise<void>;
}

export async function startStallingProxy(target: string, base: KubeConfig): Promise<StallingProxy> {
  const rules: { pathIncludes: string; mode: StallMode }[] = [];
  const held = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
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
    close: async () => {
      for (const res of held) res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
