/**
 * The real kubectl against kube-sim (skipped when kubectl is not on the PATH), on the virtual clock
 * like the other kube-sim tests: kubectl is a subprocess whose requests are real I/O, and simulated
 * time stands still while it runs (nobody waits on the clock then), so what it prints does not depend
 * on how fast it or the machine is. The streaming commands (`get -w`, `logs -f`) are driven step by
 * step: the test waits (in real time, for kubectl's output only) until kubectl has printed what the
 * present sim instant shows, then moves the clock itself; no step depends on machine speed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV_RESULT_FILE, K6_SUMMARY_EXPORT_PATH, Labels, REQUIREMENTS_MARKER, RESULT_LINE_PREFIX } from '../../lambdas/core/runner-contract';
import { RUNNER_SCRIPT_NAME } from '../../lambdas/engines/pod-scripts';
import { k6SummaryFlags, parseK6ResultLine } from '../../lambdas/engines/k6/summary-export';
import type { KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  createConfigMap,
  createJob,
  isDone,
  isRunning,
  K6_INITIALIZER_ARGS,
  k6RunArgv,
  newRunId,
  NS,
  http,
  jobWhen,
  condition,
  K6_START,
  k6Status,
  podsOf,
  podWhen,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
  runnerJob,
  type Json,
} from './helpers';
import { kubectlMissing, optionalTool } from '../support/optional-tools';

const run = promisify(execFile);
const kubectlTool = optionalTool('kubectl', 'kubectl against kube-sim', kubectlMissing(), 'LOADPLANE_REQUIRE_KUBECTL');

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

/** A long-running kubectl (`-w`, `-f`) whose output the test reads as it arrives. */
interface Streaming {
  child: ChildProcess;
  out: () => string;
  exited: () => number | null | undefined;
}

function kubectlStream(...args: string[]): Streaming {
  const child = spawn('kubectl', ['--kubeconfig', '/dev/null', '--cache-dir', cacheDir, '--server', sim.url, ...args]);
  let out = '';
  let exit: number | null | undefined;
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.on('exit', (code) => (exit = code));
  return { child, out: () => out, exited: () => exit };
}

/**
 * Waits in real time, with the simulated clock standing still, for kubectl to show something: only
 * kubectl's own I/O is waited for here, never a simulated delay. The bound is generous and is not a
 * claim about speed.
 */
async function untilReal(check: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${limitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function storeVersion(): Promise<string> {
  return (await http(sim, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion;
}

describe.skipIf(kubectlTool.skip)(kubectlTool.title('kubectl --server <kube-sim>'), () => {
  beforeAll(() => kubectlTool.assertPresent());
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'kube-sim-kubectl-'));
    sim = await startVirtualKubeSim();
    await createConfigMap(sim, scriptConfigMap(runId, 'export const options = { vus: 2 };\nexport default function () {}'));
    await createJob(sim, runnerJob({ runId, name: jobNames[0]!, engine: 'k6', role: 'initializer', engineArgv: K6_INITIALIZER_ARGS }));
    for (const i of [0, 1]) {
      // As loadplane's builder makes them: the summary export flags last, the script told to print that file.
      const engineArgv = [...k6RunArgv(i, 2), ...k6SummaryFlags(K6_SUMMARY_EXPORT_PATH)];
      const env = { [ENV_RESULT_FILE]: K6_SUMMARY_EXPORT_PATH };
      await createJob(sim, runnerJob({ runId, name: jobNames[i + 1]!, engine: 'k6', role: 'runner', index: i, engineArgv, env }));
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

  it('describe job / pod shows the object and its events (field selector on involvedObject)', async () => {
    const out = await kubectl('describe', 'job', jobNames[1]!, '-n', NS);
    expect(out).toMatch(new RegExp(`^Name:\\s+${jobNames[1]}$`, 'm'));
    expect(out).toMatch(/Pods Statuses:\s+1 Active \(1 Ready\) \/ 0 Succeeded \/ 0 Failed/);
    // The pod template: the runner script as the command (sh -c <script> <name>), the k6 argv as args.
    expect(out).toMatch(new RegExp(`Command:\\n\\s+sh\\n\\s+-c\\n[\\s\\S]*\\n\\s+${RUNNER_SCRIPT_NAME}\\n\\s+Args:\\n\\s+k6\\n\\s+run\\n`));
    expect(out).toMatch(/^\s+--execution-segment=0\/2:1\/2$/m);
    expect(out).toMatch(new RegExp(`^\\s+${ENV_RESULT_FILE}:\\s+${K6_SUMMARY_EXPORT_PATH}$`, 'm'));
    expect(out).toMatch(/Normal\s+SuccessfulCreate\s+\S+\s+job-controller\s+Created pod: /);
    const pod = podsOf(sim, jobNames[1]!)[0];
    const described = await kubectl('describe', 'pod', pod.metadata.name, '-n', NS);
    for (const reason of ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started']) expect(described).toMatch(new RegExp(`Normal\\s+${reason}\\s`));
    expect(described).not.toContain('SuccessfulCreate'); // the Job's event, not the pod's
  });

  it('get events shows the run’s events from the Job controller, the scheduler and the kubelet', async () => {
    await jobWhen(sim, jobNames[0]!, (j) => condition(j, 'Complete'), 'initializer Complete');
    const out = await kubectl('get', 'events', '-n', NS);
    expect(out.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(out).toMatch(new RegExp(`Normal\\s+SuccessfulCreate\\s+job/${jobNames[1]}\\s+Created pod: ${jobNames[1]}-`));
    expect(out).toMatch(/Normal\s+Scheduled\s+pod\/\S+\s+Successfully assigned loadplane\//);
    expect(out).toMatch(new RegExp(`Normal\\s+Completed\\s+job/${jobNames[0]}\\s+Job completed`));
    const selected = JSON.parse(
      await kubectl('get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${jobNames[1]},reason=SuccessfulCreate`, '-o', 'json'),
    );
    expect(selected.items).toHaveLength(1);
    expect(selected.items[0]).toMatchObject({
      type: 'Normal',
      count: 1,
      source: { component: 'job-controller' },
      involvedObject: { kind: 'Job', name: jobNames[1] },
    });
  });

  it('--dry-run=server create and delete answer as the real ones would and change nothing', async () => {
    const before = await storeVersion();
    const manifest = join(cacheDir, 'dry-run-job.yaml');
    const job = runnerJob({ runId, name: `lp-${runId}-dry`, engine: 'k6', role: 'runner', index: 5, engineArgv: k6RunArgv(0, 1) });
    await writeFile(manifest, JSON.stringify({ ...job, metadata: { ...job.metadata, namespace: NS } }));
    const created = JSON.parse(await kubectl('create', '-f', manifest, '--dry-run=server', '-o', 'json'));
    expect(created).toMatchObject({ kind: 'Job', metadata: { name: `lp-${runId}-dry`, namespace: NS }, spec: { parallelism: 1, completions: 1 } });
    expect(created.metadata.uid).toEqual(expect.any(String));
    expect(created.metadata.resourceVersion).toBeUndefined();
    expect(created.spec.template.metadata.labels['batch.kubernetes.io/job-name']).toBe(`lp-${runId}-dry`);

    const pods = podsOf(sim, jobNames[1]!).map((p) => p.metadata.uid);
    expect(await kubectl('delete', 'job', jobNames[1]!, '-n', NS, '--dry-run=server')).toContain(`job.batch "${jobNames[1]}" deleted (server dry run)`);
    expect(await kubectl('delete', 'pods', '-n', NS, '-l', `job-name=${jobNames[1]}`, '--dry-run=server')).toContain('deleted (server dry run)');

    expect(await storeVersion()).toBe(before);
    expect(sim.list('Job', NS).map((j) => j.metadata.name)).not.toContain(`lp-${runId}-dry`);
    expect(sim.list('Job', NS).map((j) => j.metadata.name)).toContain(jobNames[1]);
    expect(podsOf(sim, jobNames[1]!).map((p) => p.metadata.uid)).toEqual(pods);
  });

  it('apply works with client-side validation on (server-side field validation) and refuses an unknown field', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `applied-${runId}`, namespace: NS }, data: { a: '1' } };
    const manifest = join(cacheDir, 'applied.json');
    await writeFile(manifest, JSON.stringify(cm));
    expect(await kubectl('apply', '-f', manifest)).toContain(`configmap/applied-${runId} created`);
    await writeFile(manifest, JSON.stringify({ ...cm, data: { a: '2', b: '3' } }));
    expect(await kubectl('apply', '-f', manifest)).toContain(`configmap/applied-${runId} configured`);
    expect(await kubectl('apply', '-f', manifest)).toContain(`configmap/applied-${runId} unchanged`);
    expect(sim.list('ConfigMap', NS).find((c) => c.metadata.name === `applied-${runId}`).data).toEqual({ a: '2', b: '3' });

    const job = runnerJob({ runId, name: `lp-${runId}-applied`, engine: 'k6', role: 'initializer', engineArgv: K6_INITIALIZER_ARGS });
    await writeFile(manifest, JSON.stringify({ ...job, metadata: { ...job.metadata, namespace: NS }, spec: { ...job.spec, bogusField: 1 } }));
    const refused = await kubectl('apply', '-f', manifest).then(
      () => '',
      (err: { stderr: string }) => err.stderr,
    );
    expect(refused).toMatch(/strict decoding error: unknown field "spec\.bogusField"/);
    expect(sim.list('Job', NS).map((j) => j.metadata.name)).not.toContain(`lp-${runId}-applied`);
  });

  it('get -w streams a Job’s changes as they happen', async () => {
    const name = `lp-${runId}-watched`;
    await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'initializer', engineArgv: K6_INITIALIZER_ARGS }));
    const w = kubectlStream('get', 'job', name, '-n', NS, '-w');
    try {
      await untilReal(() => /Running\s+0\/1/.test(w.out()), 'the Job’s first row');
      expect(w.exited()).toBeUndefined();
      await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
      await untilReal(() => /Complete\s+1\/1/.test(w.out()), 'the Job’s completion, streamed');
      expect(w.exited()).toBeUndefined(); // still watching
    } finally {
      w.child.kill();
    }
    const json = kubectlStream('get', 'jobs', '-n', NS, '-l', `${Labels.runId}=${runId}`, '-w', '-o', 'json');
    try {
      await untilReal(() => json.out().includes(`"name": "${name}"`), 'the -o json watch');
    } finally {
      json.child.kill();
    }
  });

  it('logs -f follows a runner’s log until its container ends, then exits', async () => {
    const pod = podsOf(sim, jobNames[1]!)[0];
    const follow = kubectlStream('logs', '-f', pod.metadata.name, '-n', NS);
    try {
      await untilReal(() => follow.out().includes('REST API listening'), 'the log so far');
      await k6Status(sim, pod.metadata.name, 'PATCH', K6_START);
      await simSleep(sim, 10_000);
      await untilReal(() => /running \(00m\d\d\.\ds\), 1\/1 VUs/.test(follow.out()), 'progress lines while the test runs');
      expect(follow.out()).not.toContain(RESULT_LINE_PREFIX);
      expect(follow.exited()).toBeUndefined();
      await podWhen(sim, jobNames[1]!, isDone, 'runner 0 done');
      await untilReal(() => follow.exited() !== undefined, 'kubectl logs -f exits when the container ends');
      expect(follow.exited()).toBe(0);
      // The result line comes last, and is k6's summary export.
      expect(follow.out()).toMatch(new RegExp(`\\n${RESULT_LINE_PREFIX}\\{.*\\}\\n$`));
      expect(parseK6ResultLine(follow.out())).toMatchObject({ metrics: { vus_max: { value: 1 } } });
    } finally {
      follow.child.kill();
    }
  });

  it('logs shows a pod’s log; delete job removes its pods', async () => {
    const init = await podWhen(sim, jobNames[0]!, isDone, 'initializer done');
    const log = await kubectl('logs', init.metadata.name, '-n', NS);
    // `k6 inspect`'s JSON follows the initializer script's marker line.
    expect(log).toContain(`\n${REQUIREMENTS_MARKER}\n`);
    expect(JSON.parse(log.slice(log.indexOf(`${REQUIREMENTS_MARKER}\n`) + REQUIREMENTS_MARKER.length + 1))).toMatchObject({ maxVUs: 2 });
    expect(await kubectl('delete', 'job', jobNames[2]!, '-n', NS)).toContain(`job.batch "${jobNames[2]}" deleted`);
    expect(podsOf(sim, jobNames[2]!)).toEqual([]);
  });
});
