/**
 * The real kubectl against kube-sim (skipped when kubectl is not on the PATH), on the virtual clock
 * like the other kube-sim tests: kubectl is a subprocess whose requests are real I/O, and simulated
 * time stands still while it runs (nobody waits on the clock then), so what it prints does not depend
 * on how fast it or the machine is. None of these commands watches or follows a log, so none needs
 * the clock to move in real time.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Labels } from '../../lambdas/core/runner-contract';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  isDone,
  isRunning,
  K6_INSPECT_ARGV,
  k6RunArgv,
  newRunId,
  NS,
  podsOf,
  podWhen,
  scriptConfigMap,
  startVirtualKubeSim,
  wrapperJob,
  type Json,
} from './helpers';

const run = promisify(execFile);
const hasKubectl = spawnSync('which', ['kubectl']).status === 0;

let sim: KubeSim;
let cacheDir: string;
const runId = newRunId();
const jobNames = [`lp-${runId}-initializer`, `lp-${runId}-runner-0`, `lp-${runId}-runner-1`];

/** kubectl with no kubeconfig of the user's, and a discovery cache of its own. */
async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', '/dev/null', '--cache-dir', cacheDir, '--server', sim.url, ...args], {
    encoding: 'utf8',
  });
  return stdout;
}

describe.skipIf(!hasKubectl)('kubectl --server <kube-sim>', () => {
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'kube-sim-kubectl-'));
    sim = await startVirtualKubeSim();
    await createConfigMap(sim, scriptConfigMap(runId, "export const options = { vus: 2 };\nexport default function () {}"));
    await createJob(sim, wrapperJob({ runId, name: jobNames[0]!, engine: 'k6', role: 'initializer', engineArgv: K6_INSPECT_ARGV }));
    for (const i of [0, 1]) {
      await createJob(sim, wrapperJob({ runId, name: jobNames[i + 1]!, engine: 'k6', role: 'runner', index: i, engineArgv: k6RunArgv(i, 2) }));
    }
    await podWhen(sim, jobNames[1]!, isRunning, 'runner 0 running');
  });
  afterAll(async () => {
    await closeKubeSim(sim);
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('get jobs -l <run> -o json lists the run’s Jobs', async () => {
    const list = JSON.parse(await kubectl('get', 'jobs', '-l', `${Labels.runId}=${runId}`, '-n', NS, '-o', 'json'));
    expect(list.items.map((j: Json) => j.metadata.name).sort()).toEqual(jobNames);
    expect(list.items.every((j: Json) => j.kind === 'Job' && j.metadata.labels[Labels.runId] === runId)).toBe(true);
  });

  it('get jobs -A prints the server-side table', async () => {
    const out = await kubectl('get', 'jobs', '-A');
    expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+COMPLETIONS\s+AGE/);
    for (const name of jobNames) expect(out).toContain(name);
  });

  it('describe job shows the Job, its pod statuses and (empty) events', async () => {
    const out = await kubectl('describe', 'job', jobNames[1]!, '-n', NS);
    expect(out).toMatch(new RegExp(`^Name:\\s+${jobNames[1]}$`, 'm'));
    expect(out).toMatch(/Pods Statuses:\s+1 Active \(1 Ready\) \/ 0 Succeeded \/ 0 Failed/);
    expect(out).toContain('/loadplane/runner');
    expect(out).toMatch(/Events:\s+<none>/);
  });

  it('logs shows a pod’s log; delete job removes its pods', async () => {
    const init = await podWhen(sim, jobNames[0]!, isDone, 'initializer done');
    expect(JSON.parse(await kubectl('logs', init.metadata.name, '-n', NS))).toMatchObject({ maxVUs: 2 });
    expect(await kubectl('delete', 'job', jobNames[2]!, '-n', NS)).toContain(`job.batch "${jobNames[2]}" deleted`);
    expect(podsOf(sim, jobNames[2]!)).toEqual([]);
  });
});
