/**
 * Prepare's contract (architecture §3.2): k6 gets the script ConfigMap and the initializer Job (answer:
 * waiting, so AwaitPrepared polls); Gatling gets its ConfigMap and goes straight on (answer: done).
 * Both get the run's anchor first (architecture §7): it owns the others, the initializer owns it.
 * Created once; a retry creates only what is missing; never for a run that ended or was not admitted.
 */
import { INITIALIZER_SCRIPT_NAME, K6_INITIALIZER_SCRIPT, shellCommand } from '../../lambdas/engines/pod-scripts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels, MANAGED_BY, Role } from '../../lambdas/core/runner-contract';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import { prepare } from '../../lambdas/stages/prepare';
import { gatlingSpec, GATLING_SIMULATION, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { createdOnly, driveTo, endRun, markRequests, objectsOf, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SCRIPT = `export const options = { vus: 4, duration: '30s' };\nexport default function () {}\n`;
const posts = (requests: ReturnType<typeof markRequests>, kind: 'jobs' | 'configmaps' | 'services') =>
  requests.since().filter((r) => r.method === 'POST' && r.path.endsWith(`/${kind}`));

describe('Prepare', () => {
  it('k6: creates the anchor, the script ConfigMap and the initializer Job once, labelled with the run, and answers waiting', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'prepare', script: { inline: SCRIPT } }), Stage.Admit);
    const requests = markRequests(h);

    const step = await prepare(h.runtime.deps, runId);

    expect(step).toEqual({ phase: StepPhase.waiting, nextPollSeconds: 2 });
    // The anchor first (the others name it as their owner), then the script ConfigMap the Job's pod mounts, the Job, and the Job made owner of the anchor.
    expect(requests.writes().map((r) => `${r.method} ${r.path.split('/').pop()}`)).toEqual([
      'POST configmaps',
      'POST configmaps',
      'POST jobs',
      `PATCH lp-${runId}-anchor`,
    ]);

    const [job] = objectsOf(h, 'Job', runId);
    expect(objectsOf(h, 'Job', runId)).toHaveLength(1);
    expect(job.metadata.name).toBe(`lp-${runId}-initializer`);
    expect(job.metadata.labels).toMatchObject({ [Labels.managedBy]: MANAGED_BY, [Labels.runId]: runId, [Labels.role]: Role.initializer });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    // The initializer script (k6 archive with the user's arguments, then k6 inspect of the archive) gets the script path.
    expect(job.spec.template.spec.containers[0].command).toEqual(shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME));
    // The spec's env reaches the script as -e (k6 archive does not pass the pod's environment on).
    expect(job.spec.template.spec.containers[0].args).toEqual(['-e', 'TARGET_URL=http://target.invalid/', '/loadplane/scripts/script.js']);

    expect(objectsOf(h, 'ConfigMap', runId)).toHaveLength(2);
    const [configMap] = objectsOf(h, 'ConfigMap', runId, Role.script);
    const [anchor] = objectsOf(h, 'ConfigMap', runId, Role.anchor);
    expect(configMap.metadata.labels).toMatchObject({ [Labels.runId]: runId, [Labels.role]: Role.script });
    expect(Object.values(configMap.data)).toEqual([SCRIPT]);
    expect(anchor.metadata.name).toBe(`lp-${runId}-anchor`);
    // It holds what every runner pod reads and no pod spec repeats: k6's execution-segment sequence (parallelism 4 here: see the plan).
    expect(anchor.data).toEqual({ 'k6-execution-segment-sequence': '0,1/4,2/4,3/4,1' });
    // The Job and the ConfigMap are the anchor's: a late create of either, after Cleanup deleted it, is collected.
    expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: anchor.metadata.name, uid: anchor.metadata.uid })]);
    expect(configMap.metadata.ownerReferences).toEqual(job.metadata.ownerReferences);
    // The anchor is the initializer Job's, so Kubernetes removes it (and what it owns) with the Job even if loadplane never comes back.
    expect(anchor.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Job', uid: job.metadata.uid })]);

    const view = await viewOf(h, runId);
    expect(view.stages.Prepare).toMatchObject({ state: StageState.completed, attempts: 1, output: step });
    expect(view.run.status).toBe(RunStatus.PREPARING);
  });

  it('Gatling: creates only the anchor and the simulation ConfigMap and answers done (nothing to inspect)', async () => {
    const { runId } = await driveTo(h, gatlingSpec({ name: 'prepare-gatling' }), Stage.Admit);
    const requests = markRequests(h);

    const step = await prepare(h.runtime.deps, runId);

    expect(step).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    expect(objectsOf(h, 'Job', runId)).toEqual([]);
    expect(objectsOf(h, 'ConfigMap', runId, Role.script).map((c) => Object.values(c.data))).toEqual([[GATLING_SIMULATION]]);
    // No Job yet to own the anchor: Launch's runners adopt it.
    expect(objectsOf(h, 'ConfigMap', runId, Role.anchor).map((c) => c.metadata.ownerReferences)).toEqual([undefined]);
    expect(requests.writes().map((r) => `${r.method} ${r.path.split('/').pop()}`)).toEqual(['POST configmaps', 'POST configmaps']);
  });

  it('invoked again after it completed: the recorded answer, no Kubernetes request, no second attempt', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'prepare-again' }), Stage.Prepare);
    const recorded = (await viewOf(h, runId)).stages.Prepare;
    const requests = markRequests(h);

    const again = await prepare(h.runtime.deps, runId);

    expect(again).toEqual(recorded?.output);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Prepare).toEqual(recorded);
    expect(objectsOf(h, 'Job', runId)).toHaveLength(1);
  });

  it("fails after creating its objects (the anchor's adoption by the Job is refused); the retry creates nothing again, only adopts", async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'prepare-retry' }), Stage.Admit);
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'PATCH', pathIncludes: '/configmaps/' }); // every attempt of the one call
    await expect(prepare(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'ClusterUnavailable', retryable: true });
    expect((await viewOf(h, runId)).stages.Prepare).toMatchObject({ state: StageState.failed, error: { name: 'ClusterUnavailable' } });
    expect(objectsOf(h, 'Job', runId)).toHaveLength(1);
    expect(objectsOf(h, 'ConfigMap', runId)).toHaveLength(2);
    expect(objectsOf(h, 'ConfigMap', runId, Role.anchor)[0].metadata.ownerReferences).toBeUndefined();

    const requests = markRequests(h);
    const step = await prepare(h.runtime.deps, runId);

    expect(step.phase).toBe(StepPhase.waiting);
    expect(posts(requests, 'jobs')).toEqual([]);
    expect(posts(requests, 'configmaps')).toEqual([]);
    expect(requests.writes().map((r) => `${r.method} ${r.status}`)).toEqual(['PATCH 200']);
    expect(requests.since().filter((r) => r.status === 409)).toEqual([]);
    expect(objectsOf(h, 'ConfigMap', runId, Role.anchor)[0].metadata.ownerReferences).toEqual([expect.objectContaining({ name: `lp-${runId}-initializer` })]);
    expect((await viewOf(h, runId)).stages.Prepare).toMatchObject({ state: StageState.completed, attempts: 2 });
  });

  it('fails before creating anything (the anchor is refused); the retry creates everything once', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'prepare-retry-anchor' }), Stage.Admit);
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'POST', pathIncludes: '/configmaps' });
    await expect(prepare(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'ClusterUnavailable', retryable: true });
    expect(objectsOf(h, 'Job', runId)).toEqual([]);
    expect(objectsOf(h, 'ConfigMap', runId)).toEqual([]);

    const requests = markRequests(h);
    await prepare(h.runtime.deps, runId);
    expect(posts(requests, 'jobs').map((r) => r.status)).toEqual([201]);
    expect(posts(requests, 'configmaps').map((r) => r.status)).toEqual([201, 201]);
  });

  it('before Admit completed: InvalidTransition, and nothing is created', async () => {
    const runId = await createdOnly(h, k6Spec({ name: 'prepare-unadmitted' }));
    const requests = markRequests(h);
    await expect(prepare(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition', retryable: false });
    expect(requests.writes()).toEqual([]);
    expect(objectsOf(h, 'ConfigMap', runId)).toEqual([]);
    expect((await viewOf(h, runId)).stages.Prepare).toMatchObject({ state: StageState.failed, error: { name: 'InvalidTransition' } });
  });

  it('for a run that already has its outcome: RunEnded, and nothing is created', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'prepare-ended' }), Stage.Admit);
    await endRun(h, runId, Outcome.ABORTED);
    const requests = markRequests(h);
    await expect(prepare(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'RunEnded', stage: Stage.Prepare, outcome: Outcome.ABORTED });
    expect(requests.since()).toEqual([]);
    expect(objectsOf(h, 'Job', runId)).toEqual([]);
  });

  it('for a run that does not exist: RunNotFound', async () => {
    const requests = markRequests(h);
    const runId = newRunId();
    await expect(prepare(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'RunNotFound', runId });
    expect(requests.since()).toEqual([]);
  });
});
