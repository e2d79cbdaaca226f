/**
 * Launch's contract (architecture §3.3, §7): N runner Jobs (backoffLimit 0, restartPolicy Never, a dead-man
 * deadline), k6 runners paused with their execution segments and a Service each, the script ConfigMap
 * owned by every runner Job; Gatling runners carry one common start instant. Records launchedAt and
 * the ready deadline, moves the run to LAUNCHING. A retry creates only what is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { JOB_DEADLINE_GRACE_SECONDS } from '../../lambdas/cluster/manifests/job';
import { ENV_START_AT, Labels, MANAGED_BY, Role } from '../../lambdas/core/runner-contract';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import { GATLING_START_LEAD_SECONDS, launch, type LaunchRecord } from '../../lambdas/stages/launch';
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
  it('k6: creates N paused runner Jobs with their execution segments and Services, records the ready deadline, moves to LAUNCHING', async () => {
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
      const args: string[] = job.spec.template.spec.containers[0].args;
      expect(args).toContain('--paused');
      expect(args).toContain(`--execution-segment=${segment(i, 3)}`);
    });
    const services = byIndex(objectsOf(h, 'Service', runId));
    expect(services.map((s) => s.metadata.ownerReferences.map((o: { uid: string }) => o.uid))).toEqual(jobs.map((j) => [j.metadata.uid]));
    // The script ConfigMap now lives until the last runner Job is gone, not just the initializer.
    const [configMap] = objectsOf(h, 'ConfigMap', runId);
    const owners = configMap.metadata.ownerReferences.map((o: { name: string }) => o.name);
    expect(owners).toEqual(expect.arrayContaining(jobs.map((j) => j.metadata.name)));

    const creates = requests.since().filter((r) => r.method === 'POST');
    expect(creates.filter((r) => r.path.endsWith('/jobs'))).toHaveLength(3);
    expect(creates.filter((r) => r.path.endsWith('/services'))).toHaveLength(3);
    expect(creates).toHaveLength(6);

    const view = await viewOf(h, runId);
    expect(view.stages.Launch).toMatchObject({ state: StageState.completed, attempts: 1, output: record });
    expect(view.run.status).toBe(RunStatus.LAUNCHING);
  });

  it('Gatling: every runner Job carries the one start instant the record holds', async () => {
    const { runId } = await driveTo(h, gatlingSpec({ name: 'launch-gatling', parallelism: 3 }), Stage.Prepare);
    const launchedAt = h.clock.now();

    const record = await launch(h.runtime.deps, runId);

    expect(record.startAt).toBe(new Date(launchedAt + GATLING_START_LEAD_SECONDS * 1000).toISOString());
    const instants = objectsOf(h, 'Job', runId, Role.runner).map(
      (job) => (job.spec.template.spec.containers[0].env as Array<{ name: string; value: string }>).find((e) => e.name === ENV_START_AT)?.value,
    );
    expect(instants).toEqual([record.startAt, record.startAt, record.startAt]);
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

  it('fails after creating the Jobs (every Service refused); the retry creates only the Services', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'launch-retry', parallelism: 3 }), Stage.AwaitPrepared);
    h.kubeSim.faults.failNextRequests(3 * 5, 500, { method: 'POST', pathIncludes: '/services' }); // every attempt of the 3 calls
    await expect(launch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'ClusterUnavailable' });
    await h.clock.sleep(60_000); // the other Service calls in flight use up their attempts too
    expect(objectsOf(h, 'Job', runId, Role.runner)).toHaveLength(3);
    expect(objectsOf(h, 'Service', runId)).toEqual([]);
    expect((await viewOf(h, runId)).stages.Launch).toMatchObject({ state: StageState.failed, error: { name: 'ClusterUnavailable' } });

    const requests = markRequests(h);
    await launch(h.runtime.deps, runId);

    const creates = requests.since().filter((r) => r.method === 'POST');
    expect(creates.filter((r) => r.path.endsWith('/jobs'))).toEqual([]);
    expect(creates.filter((r) => r.path.endsWith('/services')).map((r) => r.status)).toEqual([201, 201, 201]);
    expect(requests.since().filter((r) => r.status === 409)).toEqual([]);
    expect(objectsOf(h, 'Service', runId)).toHaveLength(3);
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
