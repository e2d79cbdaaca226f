/**
 * Launch's contract (architecture §3.3, §7): N runner Jobs (backoffLimit 0, restartPolicy Never, a dead-man
 * deadline) and nothing else (no Service: Start reaches k6 runners through pods/proxy), k6 runners paused
 * with their execution segments, each owned by the run's anchor, which every runner Job owns in turn; Gatling runners carry
 * one common start instant, on a whole second. Records launchedAt and the ready deadline, moves the run
 * to LAUNCHING. A retry creates only what is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { JOB_DEADLINE_GRACE_SECONDS } from '../../lambdas/cluster/manifests/job';
import { ENV_START_AT, ENV_START_AT_EPOCH, Labels, MANAGED_BY, Role } from '../../lambdas/core/runner-contract';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import { GATLING_START_LEAD_SECONDS } from '../../lambdas/engines/gatling/adapter';
import { RUNNER_SCRIPT } from '../../lambdas/engines/pod-scripts';
import { expandVariables } from '../../local/kube-sim/env-expansion';

/** A command as the kubelet passes it to the container (its `$(VAR)` expansion; the script defines no variable of its own). */
const asStarted = (command: string[]) => command.map((c) => expandVariables(c, () => undefined));
import { launch, type LaunchRecord } from '../../lambdas/stages/launch';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { createdOnly, driveTo, endRun, markRequests, objectsOf, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const TIMEOUTS = { prepare: '2m', ready: '2m', run: '5m', total: '1h' };
const byIndex = <T extends { metadata: { labels: Record<string, string> } }>(objects: T[]) =>
  [...objects].sort((a, b) => Number(a.metadata.labels[Labels.runnerIndex]) - Number(b.metadata.labels[Labels.runnerIndex]));
const segment = (i: number, n: number) => `${i === 0 ? '0' : `${i}/${n}`}:${i === n - 1 ? '1' : `${i + 1}/${n}`}`;

describe('Launch', () => {
  it('k6: creates N paused runner Jobs with their execution segments and no Service, records the ready deadline, moves to LAUNCHING', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'launch', parallelism: 3, timeouts: TIMEOUTS }), Stage.AwaitPrepared);
    const requests = markRequests(h);
    const launchedAt = h.clock.now();

    const record = await launch(h.runtime.deps, runId);

    expect(record).toEqual({ launchedAt, readyBy: launchedAt + 2 * 60_000 } satisfies LaunchRecord);
    const jobs = byIndex(objectsOf(h, 'Job', runId, Role.runner));
    expect(jobs.map((j) => j.metadata.name)).toEqual([0, 1, 2].map((i) => `lp-${runId}-runner-${i}`));
    jobs.forEach((job, i) => {
      expect(job.metadata.labels).toMatchObject({ [Labels.managedBy]: MANAGED_BY, [Labels.runId]: runId, [Labels.runnerIndex]: String(i) });
      expect(job.spec).toMatchObject({ backoffLimit: 0, template: { spec: { restartPolicy: 'Never' } } });
      // The dead-man switch: what is known at Launch (ready deadline + run timeout) plus grace.
      expect(job.spec.activeDeadlineSeconds).toBe(2 * 60 + 5 * 60 + JOB_DEADLINE_GRACE_SECONDS);
      const { command, args } = job.spec.template.spec.containers[0] as { command: string[]; args: string[] };
      expect(asStarted(command)).toEqual(['sh', '-c', RUNNER_SCRIPT, 'loadplane-runner']);
      expect(args.slice(0, 2)).toEqual(['k6', 'run']);
      expect(args).toContain('--paused');
      expect(args).toContain(`--execution-segment=${segment(i, 3)}`);
    });
    expect(objectsOf(h, 'Service', runId)).toEqual([]);
    // The anchor (and the script ConfigMap it owns) now lives until the last runner Job is gone, not just the initializer.
    const [anchor] = objectsOf(h, 'ConfigMap', runId, Role.anchor);
    const owners = anchor.metadata.ownerReferences.map((o: { name: string }) => o.name);
    expect(owners).toEqual(expect.arrayContaining(jobs.map((j) => j.metadata.name)));
    // Every Job is the anchor's: one Launch creates after Cleanup deleted the anchor is collected.
    for (const job of objectsOf(h, 'Job', runId)) {
      expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: anchor.metadata.name, uid: anchor.metadata.uid })]);
    }

    const creates = requests.since().filter((r) => r.method === 'POST');
    // The runners' Jobs and the coordinator's (setup() and teardown() once per run).
    expect(creates.filter((r) => r.path.endsWith('/jobs'))).toHaveLength(4);
    expect(creates).toHaveLength(4);
    expect(objectsOf(h, 'Job', runId, Role.coordinator)).toHaveLength(1);
    // The one other write: the anchor adopted by the runner Jobs and the coordinator.
    expect(
      requests
        .writes()
        .filter((r) => r.method !== 'POST')
        .map((r) => `${r.method} ${r.path}`),
    ).toEqual([`PATCH /api/v1/namespaces/loadplane/configmaps/lp-${runId}-anchor`]);

    const view = await viewOf(h, runId);
    expect(view.stages.Launch).toMatchObject({ state: StageState.completed, attempts: 1, output: record });
    expect(view.run.status).toBe(RunStatus.LAUNCHING);
  });

  it('Gatling: every runner Job carries the one start instant the record holds, on the whole second after launchedAt + 60 s', async () => {
    const { runId } = await driveTo(h, gatlingSpec({ name: 'launch-gatling', parallelism: 3 }), Stage.Prepare);
    // Launch 250 ms past a whole second: the instant is rounded up, never early.
    h.clock.advance((1250 - (h.clock.now() % 1000)) % 1000 || 1000);
    const launchedAt = h.clock.now();
    expect(launchedAt % 1000).toBe(250);

    const record = await launch(h.runtime.deps, runId);

    expect(GATLING_START_LEAD_SECONDS).toBe(60);
    expect(record.startAt).toBe(new Date(launchedAt + 60_000 + 750).toISOString());
    const envOf = (job: { spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value: string }> }> } } } }, name: string) =>
      job.spec.template.spec.containers[0]!.env.find((e) => e.name === name)?.value;
    const jobs = objectsOf(h, 'Job', runId, Role.runner);
    expect(jobs.map((job) => envOf(job, ENV_START_AT))).toEqual([record.startAt, record.startAt, record.startAt]);
    const epoch = String(Date.parse(record.startAt!) / 1000);
    expect(jobs.map((job) => envOf(job, ENV_START_AT_EPOCH))).toEqual([epoch, epoch, epoch]);
    for (const job of jobs) expect(asStarted(job.spec.template.spec.containers[0].command)).toEqual(['sh', '-c', RUNNER_SCRIPT, 'loadplane-runner']);
    expect(objectsOf(h, 'Service', runId)).toEqual([]);
  });

  it('invoked again after it completed: the recorded answer, no Kubernetes request', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'launch-again', parallelism: 2 }), Stage.Launch);
    h.clock.advance(30_000);
    const requests = markRequests(h);
    expect(await launch(h.runtime.deps, runId)).toEqual(steps.Launch);
    expect(requests.since()).toEqual([]);
    expect((await viewOf(h, runId)).stages.Launch?.attempts).toBe(1);
    expect(objectsOf(h, 'Job', runId, Role.runner)).toHaveLength(2);
  });

  it("fails after creating the Jobs (the anchor's adoption refused); the retry creates no Job again, only adopts", async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'launch-retry', parallelism: 3 }), Stage.AwaitPrepared);
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'PATCH', pathIncludes: '/configmaps' }); // every attempt of the one call
    await expect(launch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'ClusterUnavailable' });
    const jobs = objectsOf(h, 'Job', runId, Role.runner);
    expect(jobs).toHaveLength(3);
    const ownersOf = () => objectsOf(h, 'ConfigMap', runId, Role.anchor)[0].metadata.ownerReferences.map((o: { name: string }) => o.name);
    expect(ownersOf()).toEqual([`lp-${runId}-initializer`]);
    expect((await viewOf(h, runId)).stages.Launch).toMatchObject({ state: StageState.failed, error: { name: 'ClusterUnavailable' } });

    const requests = markRequests(h);
    await launch(h.runtime.deps, runId);

    expect(requests.since().filter((r) => r.method === 'POST')).toEqual([]);
    expect(requests.writes().map((r) => [r.method, r.path, r.status])).toEqual([['PATCH', `/api/v1/namespaces/loadplane/configmaps/lp-${runId}-anchor`, 200]]);
    expect(requests.since().filter((r) => r.status === 409)).toEqual([]);
    expect(objectsOf(h, 'Job', runId, Role.runner).map((j) => j.metadata.uid)).toEqual(jobs.map((j) => j.metadata.uid));
    expect(ownersOf()).toEqual(expect.arrayContaining(jobs.map((j) => j.metadata.name)));
    expect((await viewOf(h, runId)).stages.Launch).toMatchObject({ state: StageState.completed, attempts: 2 });
  });

  it('before Admit completed: InvalidTransition, and nothing is created', async () => {
    const runId = await createdOnly(h, k6Spec({ name: 'launch-unadmitted' }));
    const requests = markRequests(h);
    await expect(launch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition' });
    expect(requests.since()).toEqual([]);
  });

  it('before the script was checked (k6: AwaitPrepared has not answered): InvalidTransition, and nothing is created', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'launch-unprepared' }), Stage.Admit);
    const requests = markRequests(h);
    await expect(launch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition' });
    expect(requests.since()).toEqual([]);
  });

  it('for a run that already has its outcome: RunEnded, and nothing is created', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'launch-ended' }), Stage.AwaitPrepared);
    await endRun(h, runId, Outcome.TIMED_OUT);
    const requests = markRequests(h);
    await expect(launch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'RunEnded', stage: Stage.Launch, outcome: Outcome.TIMED_OUT });
    expect(requests.since()).toEqual([]);
    expect(objectsOf(h, 'Job', runId, Role.runner)).toEqual([]);
    expect((await viewOf(h, runId)).run.status).toBe(Outcome.TIMED_OUT); // not moved back to LAUNCHING
  });

  it('for a run that does not exist: RunNotFound, and nothing is created', async () => {
    const requests = markRequests(h);
    await expect(launch(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
    expect(requests.since()).toEqual([]);
  });
});
