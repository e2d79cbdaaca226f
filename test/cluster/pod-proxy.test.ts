/**
 * pods/proxy requests prepared in a batch (what Start's skew rests on): nothing leaves while they are
 * prepared, every prepared request then goes out, connections opened by one batch carry the next
 * (keep-alive), and those idle connections never hold the process open (a Lambda's, or a test's).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient } from '../../lambdas/cluster/cluster-client';
import { K6_API_PORT } from '../../lambdas/core/runner-contract';

/** A stand-in for the API server's pods/proxy: answers k6's status for any pod, counts connections. */
let server: Server;
let url: string;
let connections = 0;
const received: Array<{ method: string; url: string; body: string; authorization: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, body: Buffer.concat(chunks).toString('utf8'), authorization: req.headers.authorization });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ data: { attributes: { paused: req.method === 'GET' } } }));
    });
  });
  // Longer than the client's own idle timeout: if a connection closes, the client closed it.
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: url, skipTLSVerify: true }, { name: 'u', token: 'the-token' });
  return kc;
}

const pods = ['runner-0', 'runner-1', 'runner-2', 'runner-3'];
const request = (pod: string, method: 'GET' | 'PATCH') => ({
  namespace: 'loadplane',
  pod,
  port: K6_API_PORT,
  method,
  path: '/v1/status',
  ...(method === 'PATCH' ? { body: { data: { attributes: { paused: false } } } } : {}),
});

describe('preparePodProxy', () => {
  it('sends nothing while preparing; then each request as prepared, with auth; the next batch reuses the connections', async () => {
    const client = createClusterClient(kubeConfig());
    received.length = 0;
    connections = 0;

    const gets = await client.preparePodProxy(pods.map((p) => request(p, 'GET')));
    expect(received).toEqual([]);
    expect(connections).toBe(0);
    const statuses = await Promise.all(gets.map((send) => send()));
    expect(statuses.map((s) => s.body)).toEqual(pods.map(() => ({ data: { attributes: { paused: true } } })));

    const patches = await client.preparePodProxy(pods.map((p) => request(p, 'PATCH')));
    expect(received).toHaveLength(pods.length);
    await Promise.all(patches.map((send) => send()));

    expect(received.map((r) => [r.method, r.url])).toEqual([
      ...pods.map((p) => ['GET', `/api/v1/namespaces/loadplane/pods/${p}:${K6_API_PORT}/proxy/v1/status`]),
      ...pods.map((p) => ['PATCH', `/api/v1/namespaces/loadplane/pods/${p}:${K6_API_PORT}/proxy/v1/status`]),
    ]);
    expect(received.filter((r) => r.method === 'PATCH').map((r) => JSON.parse(r.body))).toEqual(pods.map(() => ({ data: { attributes: { paused: false } } })));
    expect(new Set(received.map((r) => r.authorization))).toEqual(new Set(['Bearer the-token']));
    // One connection per pod, opened by the status requests and carrying the start requests.
    expect(connections).toBe(pods.length);
  });

  it('idle keep-alive connections do not keep the process alive', async () => {
    const clientModule = fileURLToPath(new URL('../../lambdas/cluster/cluster-client.ts', import.meta.url));
    // An ES module given with -e, run from the repository root (where @kubernetes/client-node resolves).
    const script = [
      `import { KubeConfig } from '@kubernetes/client-node';`,
      `import { createClusterClient } from ${JSON.stringify(clientModule)};`,
      `const kc = new KubeConfig();`,
      `kc.loadFromClusterAndUser({ name: 'c', server: ${JSON.stringify(url)}, skipTLSVerify: true }, { name: 'u', token: 't' });`,
      `const answer = await createClusterClient(kc).podProxy('loadplane', 'runner-0', ${K6_API_PORT}, 'GET', '/v1/status');`,
      `setImmediate(() => console.log(JSON.stringify({ status: answer.status, resources: process.getActiveResourcesInfo() })));`,
    ].join('\n');
    const before = connections;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    const report = JSON.parse(out.trim().split('\n').pop()!) as { status: number; resources: string[] };
    expect(report.status).toBe(200);
    // The connection was open (kept alive, the server waits a minute) when the child looked, but held nothing.
    expect(connections - before).toBe(1);
    expect(report.resources).not.toContain('TCPSocketWrap');
  }, 60_000);
});
