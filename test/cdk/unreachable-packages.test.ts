/**
 * The packages cdk/function-bundling.ts leaves out of the Lambda bundles (UNREACHABLE_PACKAGES, each
 * replaced by a stub that throws on use) are never used on loadplane's paths.
 *
 * - Where the stub sits: in each handler's bundle, only @kubernetes/client-node and node-fetch import
 *   it, and none of the real packages' files is in a bundle.
 * - That the clusters' path never uses it: the EKS kubeconfig and every ClusterClient call
 *   (test/cdk/fixtures/cluster-path.ts), bundled with the Lambda bundling, run in a fresh process
 *   against kube-sim behind an HTTPS front with a throwaway CA, as a cluster is reached from Lambda.
 *   Every call gets its answer (the missing pod's 404 included), and none meets the stub.
 * - That the stub fails loudly when used: the same entry bundled with a cluster that has a proxyUrl
 *   reaches socks-proxy-agent, and the call fails naming the stub.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_ENTRIES, lambdaBuildOptions, REPO_ROOT, UNREACHABLE_PACKAGES, UNREACHABLE_STUB, type HandlerKind } from '../../cdk/function-bundling';
import { startKubeSim, type KubeSim } from '../../local/kube-sim';
import type { Outcome } from './fixtures/cluster-path';

const KINDS = Object.keys(HANDLER_ENTRIES) as HandlerKind[];
const STUB_MARK = 'left out of the bundle was used';
const dir = mkdtempSync(join(tmpdir(), 'loadplane-unreachable-'));
let sim: KubeSim;
let front: Server;
let endpoint: string;
let caData: string;
let metafile: Metafile;

/** A TLS front for kube-sim (plain HTTP): a self-signed certificate for 127.0.0.1, which is its own CA. */
async function startTlsFront(target: string): Promise<{ server: Server; endpoint: string; caData: string }> {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(join(dir, 'cert.pem'));
  const upstream = new URL(target);
  const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    const up = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, endpoint: `https://127.0.0.1:${port}`, caData: cert.toString('base64') };
}

/** Bundles the cluster path with the Lambda bundling, loads it in a fresh process and runs every call. */
async function runClusterPath(name: string, runId: string, patch = ''): Promise<Record<string, Outcome>> {
  const contents = `${patch}\nexport { exercise } from './test/cdk/fixtures/cluster-path';\n`;
  const outfile = join(dir, name, 'index.js');
  await build({
    ...lambdaBuildOptions(),
    stdin: { contents, resolveDir: REPO_ROOT, sourcefile: `${name}-entry.ts`, loader: 'ts' },
    outfile,
    logLevel: 'silent',
  });
  const script = `require(${JSON.stringify(outfile)}).exercise(...process.argv.slice(1)).then((r) => process.stdout.write(JSON.stringify(r)))`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script, endpoint, caData, 'default', runId], { cwd: dir, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${name} failed (${error.message}): ${stderr}`));
      resolve(JSON.parse(stdout) as Record<string, Outcome>);
    });
  });
}

beforeAll(async () => {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  sim = await startKubeSim();
  ({ server: front, endpoint, caData } = await startTlsFront(sim.url));
  const result = await build({
    ...lambdaBuildOptions(),
    entryPoints: Object.fromEntries(KINDS.map((kind) => [`${kind}/index`, join(REPO_ROOT, HANDLER_ENTRIES[kind])])),
    outdir: join(dir, 'handlers'),
    metafile: true,
    logLevel: 'silent',
  });
  metafile = result.metafile;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => front?.close(resolve));
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('packages left out of the Lambda bundles', () => {
  it('the bundling replaces each by the stub, which only client-node and node-fetch import; none of their files is bundled', () => {
    expect(lambdaBuildOptions().alias).toEqual(Object.fromEntries(Object.keys(UNREACHABLE_PACKAGES).map((name) => [name, UNREACHABLE_STUB])));
    const stub = Object.keys(metafile.inputs).find((input) => join(REPO_ROOT, input) === UNREACHABLE_STUB);
    expect(stub).toBeDefined();
    const importers = Object.entries(metafile.inputs)
      .filter(([, input]) => input.imports.some((i) => i.path === stub))
      .map(([path]) => path.replace(/^node_modules\/((@[^/]+\/)?[^/]+)\/.*/, '$1'));
    expect([...new Set(importers)].sort()).toEqual(['@kubernetes/client-node', 'node-fetch']);
    for (const kind of KINDS) {
      const output = metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith(`${kind}/index.js`))!]!;
      const left = Object.keys(output.inputs).filter((input) => Object.keys(UNREACHABLE_PACKAGES).some((name) => input.includes(`node_modules/${name}/`)));
      expect(left, kind).toEqual([]);
    }
  });

  it('the clusters’ path from the bundle (EKS kubeconfig over HTTPS, every ClusterClient call) never uses one', async () => {
    const out = await runClusterPath('cluster-path', 'bundlestub1');
    expect(JSON.stringify(out)).not.toContain(STUB_MARK);
    expect(out).toEqual({
      createConfigMap: { ok: 'created' },
      createConfigMapAgain: { ok: 'exists' },
      createJob: { ok: 'created' },
      listJobs: { ok: ['Job job-bundlestub1'] },
      listManagedConfigMaps: { ok: expect.arrayContaining(['ConfigMap cm-bundlestub1']) },
      addOwners: { ok: ['job-bundlestub1'] },
      podLogTail: { error: expect.objectContaining({ name: 'ClusterNotFound' }) },
      podProxy: { error: expect.objectContaining({ name: 'ClusterNotFound' }) },
      deleteObject: { ok: true },
      deleteRun: { ok: true },
      listAfterDelete: { ok: 0 },
    });
  }, 120_000);

  it('a path that does use one fails loudly, naming the stub (a cluster behind a SOCKS proxy)', async () => {
    // Same entry, with the kubeconfig's cluster given a proxyUrl: client-node then builds a SocksProxyAgent.
    const patch = `import { KubeConfig } from '@kubernetes/client-node';
const load = KubeConfig.prototype.loadFromClusterAndUser;
KubeConfig.prototype.loadFromClusterAndUser = function (cluster, user) { return load.call(this, { ...cluster, proxyUrl: 'socks5://127.0.0.1:9' }, user); };`;
    const out = await runClusterPath('via-proxy', 'bundlestub2', patch);
    expect(out.createConfigMap).toEqual({ error: expect.objectContaining({ message: expect.stringContaining(STUB_MARK) }) });
  }, 120_000);
});
