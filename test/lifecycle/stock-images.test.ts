/**
 * Whole runs on kube-sim with the stock engine images (grafana/k6, and
 * gatling-operator's Gatling image) in a namespace that enforces the "restricted" Pod Security
 * Standard, read back with the real kubectl: every pod was admitted, and `kubectl get pods -o yaml`
 * shows the security context, the fixed sh script as the command and the engine's argv as args.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { Labels, WORK_DIR } from '../../lambdas/core/runner-contract';
import { Outcome } from '../../lambdas/core/status';
import { K6_INITIALIZER_SCRIPT, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand, INITIALIZER_SCRIPT_NAME } from '../../lambdas/engines/pod-scripts';
import { expandVariables } from '../../local/kube-sim/env-expansion';
import { GATLING_IMAGE, gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { kubectlMissing, optionalTool } from '../support/optional-tools';

/** The command as the kubelet starts it (kube-sim's env-expansion.ts): the spec writes `$$` for a `$` before `$` or `(`. */
const asStarted = (command: string[]) => command.map((c) => expandVariables(c, () => undefined));

const run = promisify(execFile);
const kubectlTool = optionalTool('stock-images', 'stock-image runs (they need kubectl)', kubectlMissing(), 'LOADPLANE_REQUIRE_KUBECTL');

let h: Harness;
let cacheDir: string;
beforeAll(async () => {
  h = await startHarness();
  cacheDir = await mkdtemp(join(tmpdir(), 'lp-kubectl-'));
});
afterAll(async () => {
  await h.close();
  await rm(cacheDir, { recursive: true, force: true });
});

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', '/dev/null', '--cache-dir', cacheDir, '--server', h.kubeSim.url, ...args], { encoding: 'utf8' });
  return stdout;
}

/** What every container must show to pass "restricted", with the engine image's non-root uid. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- kubectl's YAML, read field by field
function expectRestricted(pod: { metadata: { name: string }; spec: Record<string, any> }, uid: number): void {
  const { spec } = pod;
  expect(spec.securityContext, pod.metadata.name).toMatchObject({ runAsNonRoot: true, runAsUser: uid, seccompProfile: { type: 'RuntimeDefault' } });
  expect(spec.automountServiceAccountToken).toBe(false);
  const [container] = spec.containers;
  expect(container.securityContext, pod.metadata.name).toEqual({
    runAsNonRoot: true,
    runAsUser: uid,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
  expect(container.volumeMounts).toContainEqual({ name: 'work', mountPath: WORK_DIR });
  expect(container.resources.requests).toBeDefined();
  expect(container.resources.limits.memory).toBeDefined();
}

describe.skipIf(kubectlTool.skip)(kubectlTool.title('stock images in a namespace enforcing "restricted"'), () => {
  beforeAll(() => kubectlTool.assertPresent());
  it('the test namespace enforces restricted (kubectl get namespace)', async () => {
    const ns = parse(await kubectl('get', 'namespace', 'loadplane', '-o', 'yaml'));
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('k6: grafana/k6 runs the initializer and every runner; kubectl shows the restricted security context, the sh script and the argv', async () => {
    const { runId, view } = await h.run(k6Spec({ name: 'stock-k6', parallelism: 2, cleanup: 'never', arguments: ['--env', 'GREETING=hello world'] }));
    expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toMatch(/^SUCCEEDED: /);

    // The coordinator is told to stop after teardown(); k6 exits a moment later.
    await h.clock.sleep(1_000);
    const pods = parse(await kubectl('get', 'pods', '-n', 'loadplane', '-l', `${Labels.runId}=${runId}`, '-o', 'yaml')).items;
    expect(pods).toHaveLength(4); // the initializer, 2 runners and the coordinator
    for (const pod of pods) {
      const [container] = pod.spec.containers;
      expect(container.image).toBe(DEFAULT_CONFIG.defaultImages.k6);
      expect(container.image).toMatch(/^grafana\/k6:\d+\.\d+\.\d+$/);
      expectRestricted(pod, 12345);
      const role = pod.metadata.labels[Labels.role];
      if (role === 'initializer') {
        expect(asStarted(container.command)).toEqual(shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME));
        // `k6 archive` gets the spec's env as -e (archive does not pass the pod's environment to the
        // script), the user's arguments, one entry each, then the script.
        expect(container.args).toEqual(['-e', 'TARGET_URL=http://target.invalid/', '--env', 'GREETING=hello world', '/loadplane/scripts/script.js']);
      } else {
        expect(asStarted(container.command)).toEqual(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME));
        expect(container.args.slice(0, 2)).toEqual(['k6', 'run']);
        expect(container.args).toContain('GREETING=hello world');
      }
      // The coordinator is never unpaused: stopped through its REST API after teardown() (k6 exits 103).
      expect(pod.status.containerStatuses[0].state.terminated.exitCode).toBe(role === 'coordinator' ? 103 : 0);
    }
  });

  it('Gatling: the Gatling image runs every runner under the same profile (its own uid 1000), and the run SUCCEEDS on Gatling’s console summary', async () => {
    const { runId, view } = await h.run(gatlingSpec({ name: 'stock-gatling', parallelism: 2, cleanup: 'never' }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);

    const pods = parse(await kubectl('get', 'pods', '-n', 'loadplane', '-l', `${Labels.runId}=${runId}`, '-o', 'yaml')).items;
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      const [container] = pod.spec.containers;
      expect(container.image).toBe(GATLING_IMAGE);
      expectRestricted(pod, 1000);
      expect(asStarted(container.command)).toEqual(shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME));
      expect(container.args.slice(0, 3)).toEqual(['gatling.sh', '-rm', 'local']);
      expect(container.args).not.toContain('-nr');
      const log = await kubectl('logs', '-n', 'loadplane', pod.metadata.name);
      expect(log).toContain('---- Global Information --------------------------------------------------------');
    }
  });
});
