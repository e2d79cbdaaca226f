/**
 * `loadplane rbac` (lambdas/cluster/rbac.ts): the control plane's Role and RoleBinding per namespace
 * as YAML on stdout, for `loadplane rbac --namespace <ns> | kubectl apply -f -`. Runs the real CLI
 * (bin/loadplane.mjs, its bundle) as a child process.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { rbacManifests } from '../../lambdas/cluster/rbac';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string[];
}

function loadplane(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: '' } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr: stderr.split('\n').filter((l) => l !== '') });
    });
  });
}

const objectsOf = (yaml: string) => {
  const docs = parseAllDocuments(yaml);
  expect(docs.flatMap((d) => d.errors)).toEqual([]);
  return docs.map((d) => d.toJS());
};

describe('loadplane rbac', () => {
  it.concurrent('prints the Role and RoleBinding of every namespace as multi-document YAML, after a comment', async () => {
    const { code, stdout, stderr } = await loadplane('rbac', '--namespace', 'loadtest', '--namespace', 'team-a');
    expect({ code, stderr }).toEqual({ code: 0, stderr: [] });
    expect(stdout).toMatch(/^# Kubernetes RBAC for the loadplane control plane/);
    expect(objectsOf(stdout)).toEqual(rbacManifests({ namespaces: ['loadtest', 'team-a'] }));
    expect(stdout).toContain('namespace: loadtest');
    expect(stdout).toContain('namespace: team-a');
  });

  it.concurrent('--group and --create-namespaces', async () => {
    const { code, stdout } = await loadplane('rbac', '--namespace', 'loadtest', '--group', 'eks-loadplane', '--create-namespaces');
    expect(code).toBe(0);
    const objects = objectsOf(stdout);
    expect(objects).toEqual(rbacManifests({ namespaces: ['loadtest'], group: 'eks-loadplane', createNamespaces: true }));
    expect(objects.map((o: { kind: string }) => o.kind)).toEqual(['Namespace', 'Role', 'RoleBinding']);
  });

  it.concurrent.each([
    [
      ['rbac', '--namespace', 'Bad_NS'],
      /^loadplane: option '--namespace <ns>' argument 'Bad_NS' is invalid\. expected a namespace name: .* \(see 'loadplane rbac --help'\)$/,
    ],
    [
      ['rbac', '--namespace', 'ok', '--namespace', 'x'.repeat(64)],
      /^loadplane: option '--namespace <ns>' argument 'x{64}' is invalid\. expected a namespace name: 64 characters; .*at most 63/,
    ],
    [
      ['rbac', '--namespace', 'ok', '--group', ''],
      /^loadplane: option '--group <name>' argument '' is invalid\. expected .*not empty \(see 'loadplane rbac --help'\)$/,
    ],
    [['rbac'], /^loadplane: required option '--namespace <ns>' not specified \(see 'loadplane rbac --help'\)$/],
  ])('%j is a usage error: exit 2, nothing on stdout, one line naming the value', async (args, message) => {
    const outcome = await loadplane(...args);
    expect(outcome).toEqual({ code: 2, stdout: '', stderr: [expect.stringMatching(message)] });
  });

  it.concurrent('--help says what it prints and how to apply it', async () => {
    const { code, stdout } = await loadplane('rbac', '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('--namespace <ns>');
    expect(stdout).toContain('loadplane rbac --namespace loadtest | kubectl apply -f -');
  });
});
