import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eksKubeConfig } from '../../lambdas/cluster/eks-kubeconfig';
import { kubeConfigFromFile } from '../../lambdas/cluster/kubeconfig-file';

const dir = mkdtempSync(join(tmpdir(), 'lp-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, 'config');
writeFileSync(
  file,
  `apiVersion: v1
kind: Config
current-context: kind-a
clusters:
- name: a
  cluster: { server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true }
- name: sim
  cluster: { server: "http://127.0.0.1:7000", insecure-skip-tls-verify: true }
users:
- name: a
  user: { token: token-a }
- name: sim
  user: { token: token-sim }
contexts:
- name: kind-a
  context: { cluster: a, user: a }
- name: kube-sim
  context: { cluster: sim, user: sim }
`,
);

describe('kubeConfigFromFile', () => {
  it('uses the file’s current context by default', () => {
    const kc = kubeConfigFromFile(file);
    expect(kc.getCurrentContext()).toBe('kind-a');
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('switches to a named context', () => {
    const kc = kubeConfigFromFile(file, 'kube-sim');
    expect(kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:7000');
    expect(kc.getCurrentUser()?.token).toBe('token-sim');
  });

  it('names the missing context and the ones that exist', () => {
    expect(() => kubeConfigFromFile(file, 'prod')).toThrow(/no context "prod"; contexts: kind-a, kube-sim/);
  });
});

describe('eksKubeConfig', () => {
  it('builds one cluster with the CA and one user with the bearer token', async () => {
    const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const kc = eksKubeConfig({
      endpoint: 'https://abc.gr7.us-east-1.eks.amazonaws.com',
      caData: Buffer.from(caPem).toString('base64'),
      token: 'k8s-aws-v1.abc',
    });
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://abc.gr7.us-east-1.eks.amazonaws.com', skipTLSVerify: false });
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    expect(opts.headers).toMatchObject({ Authorization: 'Bearer k8s-aws-v1.abc' });
    expect(Buffer.from(opts.ca as Buffer).toString()).toBe(caPem);
  });
});
