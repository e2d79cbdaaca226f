/**
 * `loadplane run --local --kubeconfig <file> [--context <name>]`: the runtime targets whatever
 * cluster the kubeconfig names instead of starting its own kube-sim. Here that cluster is a kube-sim
 * started separately at real time, reached only through the kubeconfig file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { startKubeSim, type KubeSim } from '../../local/kube-sim';
import { startLocalRuntime } from '../../local/runtime/local-runtime';
import { k6Spec } from '../support/local-runs';

let cluster: KubeSim;
const dir = mkdtempSync(join(tmpdir(), 'loadplane-kubeconfig-'));
const kubeconfig = join(dir, 'config');

beforeAll(async () => {
  cluster = await startKubeSim({ timeScale: 1 });
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: dev, cluster: { server: "${cluster.url}", insecure-skip-tls-verify: true } }]`,
      'users: [{ name: dev, user: { token: dev-token } }]',
      'contexts: [{ name: other, context: { cluster: dev, user: dev } }, { name: dev, context: { cluster: dev, user: dev } }]',
      'current-context: other',
    ].join('\n'),
  );
});
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a kubeconfig context as the cluster', () => {
  it('runs the whole lifecycle against the cluster the context names, and cleans up there', async () => {
    const runtime = await startLocalRuntime({ kubeconfig, context: 'dev' });
    try {
      expect(runtime.kubeSim).toBeUndefined();
      const runId = newRunId();
      const script = `export const options = { vus: 2, duration: '2s' };\nexport default function () {}\n`;
      const result = await runtime.startExecution({
        name: runId,
        input: { spec: k6Spec({ name: 'via-kubeconfig', parallelism: 2, script: { inline: script } }), source: 'local' },
      }).result;
      const view = (await runtime.ledger.getRun(runId))!;
      expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toMatch(/^SUCCEEDED/);
      expect(result.status).toBe('SUCCEEDED');
      expect(cluster.requestLog.some((r) => r.method === 'POST' && r.path.endsWith('/jobs'))).toBe(true);
      expect(cluster.list('Job', 'loadplane', `loadplane.io/run-id=${runId}`)).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it('names the contexts there are when the one asked for is missing', async () => {
    await expect(startLocalRuntime({ kubeconfig, context: 'prod' })).rejects.toThrow('has no context "prod"; contexts: other, dev');
  });
});
