/**
 * `--clusters N` (local/cli/commands/run.ts): the real CLI runs one run across N kube-sims, each a
 * process of its own, and stops them all when it ends; a spec that names a simulated cluster the
 * command does not run is refused with the option that runs it; `--clusters` with a real cluster or
 * out of range is a usage error naming the limit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_CLUSTERS } from '../../lambdas/core/placements';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/loadplane.mjs');
const REGIONS = join(REPO, 'examples/k6-regions.yaml');
const dir = mkdtempSync(join(tmpdir(), 'loadplane-clusters-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function loadplane(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, LOADPLANE_CONFIG: '', LOADPLANE_API: '' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

/** Whether anything still answers HTTP at `url` (a kube-sim process left running would). */
function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${url}/version`, { timeout: 2_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/** The URL of each simulated cluster, from the run's second line. */
function clusterUrls(stdout: string): Record<string, string> {
  const line = stdout.split('\n').find((l) => l.includes('clusters: kube-sim at')) ?? '';
  return Object.fromEntries([...line.matchAll(/(kube-sim(?:-\d+)?) at (http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => [m[1]!, m[2]!]));
}

describe('loadplane --clusters', () => {
  it.concurrent('run --local --clusters 3: one run across three kube-sim processes, each cluster its block, its own skew; all stopped after', async () => {
    const out = await loadplane('run', REGIONS, '--local', '--clusters', '3', '--time-scale', '100');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^loadplane: run [0-9a-z]{26}: k6-regions \(k6, 6 runners over kube-sim 2, kube-sim-2 2, kube-sim-3 2\)/m);
    const urls = clusterUrls(out.stdout);
    expect(Object.keys(urls)).toEqual(['kube-sim', 'kube-sim-2', 'kube-sim-3']);
    expect(new Set(Object.values(urls)).size).toBe(3);
    expect(out.stdout).toMatch(/^start skew \d+ ms across 6 runners \(.*\); within each cluster: kube-sim \d+ ms, kube-sim-2 \d+ ms, kube-sim-3 \d+ ms$/m);
    expect(out.stdout).toContain('total   6/6 reported');
    expect(out.stdout.trim().split('\n').at(-1)).toMatch(/^outcome: SUCCEEDED \(run [0-9a-z]{26}\)$/);
    // Every kube-sim process ended with the CLI.
    expect(await Promise.all(Object.values(urls).map(answers))).toEqual([false, false, false]);
  });

  it.concurrent('start --clusters 2: the example spread over both clusters (2 runners each)', async () => {
    const out = await loadplane('start', '--clusters', '2', '--time-scale', '100');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^loadplane: run [0-9a-z]{26}: k6-smoke \(k6, 4 runners over kube-sim 2, kube-sim-2 2\) from examples\/k6-smoke\.yaml$/m);
    expect(out.stdout).toMatch(/within each cluster: kube-sim \d+ ms, kube-sim-2 \d+ ms$/m);
    expect(out.stdout.trim().split('\n').at(-1)).toMatch(/^outcome: SUCCEEDED /);
  });

  it.concurrent('a spec naming kube-sim-3 without --clusters 3: refused, each cluster named, with the option that runs them (exit 2)', async () => {
    const out = await loadplane('run', REGIONS, '--local', '--clusters', '2');
    expect(out).toMatchObject({ code: 2, stdout: '' });
    expect(out.stderr.trim().split('\n')).toEqual([
      `${REGIONS} is invalid:`,
      'clusters.2.name: cluster "kube-sim-3" is not on the allow-list (allowed clusters: kube-sim, kube-sim-2)',
      `hint: kube-sim-2 … kube-sim-${MAX_CLUSTERS} are simulated clusters: add --clusters 3 to run kube-sim … kube-sim-3`,
    ]);
  });

  it.concurrent.each([
    [['run', REGIONS, '--local', '--clusters', '3', '--kubeconfig', 'kc.yaml'], "option '--clusters <n>' cannot be used with option '--kubeconfig'"],
    [['serve', '--clusters', '2', '--context', 'prod'], "option '--clusters <n>' cannot be used with option '--context'"],
    [['start', '--clusters', String(MAX_CLUSTERS + 1)], `must be a whole number from 1 to ${MAX_CLUSTERS} (the most clusters one run may span)`],
    [['start', '--clusters', '0'], `must be a whole number from 1 to ${MAX_CLUSTERS}`],
    [['run', REGIONS, '--clusters', '3', '--api', 'http://127.0.0.1:1'], '--clusters is an option of a local run: add --local'],
  ])('%j: a usage error (exit 2)', async (args, message) => {
    const out = await loadplane(...args);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain(message);
  });
});
