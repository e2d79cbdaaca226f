/**
 * The Job controller and pod lifecycle over HTTP, including the cluster-level faults: exit codes,
 * backoffLimit, podFailurePolicy with restartPod, TTL, active deadline, scheduling delays, image pull
 * failures, missing volumes and objects deleted behind loadplane's back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClusterNotFound } from '../../lambdas/core/errors';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { startKubeSim, type KubeSim } from '../../local/kube-sim/index';
import {
  closeKubeSim,
  condition,
  createConfigMap,
  createJob,
  eventually,
  exitCodeOf,
  http,
  isDone,
  isRunning,
  jobWhen,
  k6Status,
  newRunId,
  NS,
  podsOf,
  podWhen,
  scriptConfigMap,
  simSleep,
  startVirtualKubeSim,
  runnerJob,
  type Json,
  restrictedPodSpec,
} from './helpers';

const SCRIPT = `export const options = { vus: 2, duration: '30s' };\nexport default function () {}`;
/** An unpaused k6 runner: it runs its 30 s by itself. */
const RUN_ARGV = ['k6', 'run', '/loadplane/scripts/test.js', '--address=0.0.0.0:6565'];
const PAUSED_ARGV = [...RUN_ARGV, '--paused'];

let sim: KubeSim;

beforeAll(async () => {
  sim = await startVirtualKubeSim();
});
afterAll(async () => {
  await closeKubeSim(sim);
});
beforeEach(() => {
  sim.faults.clear();
});

interface Setup {
  runId: string;
  name: string;
}

async function startRunnerJob(
  opts: { argv?: string[]; annotations?: Record<string, string>; spec?: Record<string, unknown>; index?: number; script?: boolean } = {},
): Promise<Setup> {
  const runId = newRunId();
  const name = `lp-${runId}-runner-${opts.index ?? 0}`;
  if (opts.script !== false) await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
  await createJob(
    sim,
    runnerJob({
      runId,
      name,
      engine: 'k6',
      role: 'runner',
      index: opts.index ?? 0,
      engineArgv: opts.argv ?? RUN_ARGV,
      annotations: opts.annotations,
      spec: opts.spec,
    }),
  );
  return { runId, name };
}

describe('Job controller', () => {
  it('runs the template as a pod owned by the Job; success completes the Job', async () => {
    const { runId, name } = await startRunnerJob();
    const job = await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
    expect(job.status).toMatchObject({ succeeded: 1, ready: 0 });
    expect(job.status.failed).toBeUndefined();
    expect(job.status.active).toBeUndefined();
    expect(Date.parse(job.status.completionTime)).toBeGreaterThanOrEqual(Date.parse(job.status.startTime) + 30_000);

    const [pod] = podsOf(sim, name);
    expect(pod.metadata.name).toMatch(new RegExp(`^${name}-[a-z0-9]{5}$`));
    expect(pod.metadata.labels).toMatchObject({
      'loadplane.io/run-id': runId,
      'job-name': name,
      'batch.kubernetes.io/job-name': name,
      'controller-uid': job.metadata.uid,
      'batch.kubernetes.io/controller-uid': job.metadata.uid,
    });
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(pod.status.phase).toBe('Succeeded');
    expect(pod.status.podIP).toMatch(/^10\.244\./);
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('runs parallelism pods until completions succeed', async () => {
    const name = `par-${newRunId()}`;
    await createJob(sim, {
      metadata: { name },
      spec: {
        parallelism: 3,
        completions: 3,
        template: { spec: restrictedPodSpec({ name: 'c', image: 'busybox' }) },
      },
    });
    const job = await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
    expect(job.status.succeeded).toBe(3);
    expect(podsOf(sim, name)).toHaveLength(3);
  });

  it('reports active and ready pods while they run', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV });
    const job = await jobWhen(sim, name, (j) => j.status.active === 1 && j.status.ready === 1, 'one active, ready pod');
    expect(condition(job, 'Complete')).toBeUndefined();
  });

  it('backoffLimit 0: one failed pod fails the Job (exit-code fault 99 by annotation)', async () => {
    const { name } = await startRunnerJob({ annotations: { [SimAnnotations.exitCode]: '99' } });
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(condition(job, 'Failed')).toMatchObject({ reason: 'BackoffLimitExceeded' });
    expect(job.status.failed).toBe(1);
    expect(job.status.completionTime).toBeUndefined();
    const pods = podsOf(sim, name);
    expect(pods).toHaveLength(1);
    expect(pods[0].status.phase).toBe('Failed');
    expect(exitCodeOf(pods[0])).toBe(99);
  });

  it('backoffLimit 1: a failed pod is retried once (after a backoff), then the Job fails', async () => {
    const { name } = await startRunnerJob({ annotations: { [SimAnnotations.exitCode]: '1' }, spec: { backoffLimit: 1 } });
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(job.status.failed).toBe(2);
    const pods = podsOf(sim, name).sort((a, b) => Date.parse(a.status.startTime) - Date.parse(b.status.startTime));
    expect(pods).toHaveLength(2);
    const firstEnded = Date.parse(pods[0].status.containerStatuses[0].state.terminated.finishedAt);
    expect(Date.parse(pods[1].metadata.creationTimestamp)).toBeGreaterThanOrEqual(firstEnded + 10_000);
  });

  it('podFailurePolicy FailJob on an exit code fails the Job at once, whatever the backoffLimit', async () => {
    const { name } = await startRunnerJob({
      annotations: { [SimAnnotations.exitCode]: '99' },
      spec: { backoffLimit: 5, podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [99] } }] } },
    });
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(condition(job, 'Failed')).toMatchObject({ reason: 'PodFailurePolicy' });
    expect(condition(job, 'Failed').message).toContain('exit code 99');
    expect(podsOf(sim, name)).toHaveLength(1);
  });

  it('ttlSecondsAfterFinished deletes the Job and its pods that long after it finished', async () => {
    const { name } = await startRunnerJob({ spec: { ttlSecondsAfterFinished: 120 } });
    const done = await jobWhen(sim, name, (j) => condition(j, 'Complete'), 'Complete');
    expect(podsOf(sim, name)).toHaveLength(1);
    await eventually(sim, () => (sim.list('Job', NS).some((j) => j.metadata.name === name) ? undefined : true), 'the Job gone');
    expect(sim.now()).toBeGreaterThanOrEqual(Date.parse(condition(done, 'Complete').lastTransitionTime) + 120_000);
    expect(podsOf(sim, name)).toEqual([]);
  });

  it('activeDeadlineSeconds fails a Job that runs too long and removes its pods', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV, spec: { activeDeadlineSeconds: 60 } });
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(condition(job, 'Failed')).toMatchObject({ reason: 'DeadlineExceeded' });
    expect(job.status.failed).toBe(1);
    expect(Date.parse(condition(job, 'Failed').lastTransitionTime)).toBeGreaterThanOrEqual(Date.parse(job.status.startTime) + 60_000);
    expect(podsOf(sim, name)).toEqual([]);
  });
});

describe('restartPod (disruption)', () => {
  const ignoreDisruptions = { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] } };

  it('with podFailurePolicy Ignore on DisruptionTarget: a replacement pod with a new uid, paused again', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV, spec: ignoreDisruptions });
    const first = await podWhen(sim, name, isRunning, 'running');
    await eventually(sim, async () => ((await k6Status(sim, first.metadata.name)).status === 200 ? true : undefined), 'k6 API up');
    sim.faults.restartPod(NS, first.metadata.name);

    const replacement = await podWhen(sim, name, (p) => p.metadata.uid !== first.metadata.uid && isRunning(p), 'a replacement');
    expect(replacement.metadata.name).not.toBe(first.metadata.name);
    const old = podsOf(sim, name).find((p) => p.metadata.uid === first.metadata.uid);
    expect(old.status.phase).toBe('Failed');
    expect(old.status.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True' }));
    // A k6 runner gets SIGTERM (as the Eviction API's graceful deletion does) and exits 105 while paused.
    expect(exitCodeOf(old)).toBe(105);

    const status = await eventually(
      sim,
      async () => {
        const res = await k6Status(sim, replacement.metadata.name);
        return res.status === 200 ? res.body : undefined;
      },
      'the replacement k6 API',
    );
    expect(status.data.attributes).toMatchObject({ paused: true, running: false });
    const job = sim.list('Job', NS).find((j) => j.metadata.name === name);
    expect(condition(job, 'Failed')).toBeUndefined();
    expect(job.status.failed).toBeUndefined();
  });

  it('without a policy, backoffLimit 0: the disruption fails the Job', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV });
    const pod = await podWhen(sim, name, isRunning, 'running');
    sim.faults.restartPod(NS, pod.metadata.name);
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(condition(job, 'Failed')).toMatchObject({ reason: 'BackoffLimitExceeded' });
    expect(podsOf(sim, name)).toHaveLength(1);
  });

  it('of a pod that does not exist is ClusterNotFound', () => {
    expect(() => sim.faults.restartPod(NS, 'no-such-pod')).toThrow(ClusterNotFound);
  });
});

describe('pod lifecycle faults', () => {
  it('schedule delay "never" (annotation): the pod stays Pending, Unschedulable', async () => {
    const { name } = await startRunnerJob({ annotations: { [SimAnnotations.scheduleDelay]: 'never' } });
    const pod = await podWhen(sim, name, () => true, 'a pod');
    await simSleep(sim, 10 * 60_000);
    const [still] = podsOf(sim, name);
    expect(still.metadata.uid).toBe(pod.metadata.uid);
    expect(still.status.phase).toBe('Pending');
    expect(still.status.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }));
  });

  it('schedule delay through the API: Running only after that much sim time', async () => {
    const runId = newRunId();
    sim.faults.setScheduleDelay(300, { runId });
    const name = `lp-${runId}-runner-0`;
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: PAUSED_ARGV }));
    const pod = await podWhen(sim, name, isRunning, 'running');
    expect(Date.parse(pod.status.startTime) - Date.parse(pod.metadata.creationTimestamp)).toBeGreaterThanOrEqual(300_000 - 1000);
  });

  it.each([
    ['annotation', { [SimAnnotations.imagePullFailure]: 'true' }, false],
    ['API', {}, true],
  ])('image pull failure (%s): ErrImagePull, then ImagePullBackOff, never Running', async (_how, annotations, viaApi) => {
    // ErrImagePull lasts a few simulated seconds. This test used to run on a slower ScaledClock (20×)
    // so that real-time polling could catch it; on the virtual clock, checks every 100 simulated ms
    // (eventually's step) see it on every run, however loaded the machine.
    const runId = newRunId();
    if (viaApi) sim.faults.setImagePullFailure({ runId });
    const name = `lp-${runId}-runner-0`;
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    await createJob(sim, runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: RUN_ARGV, annotations }));
    const waitingReason = (p: Json) => p.status.containerStatuses?.[0]?.state?.waiting?.reason;
    await podWhen(sim, name, (p) => waitingReason(p) === 'ErrImagePull', 'ErrImagePull');
    const pod = await podWhen(sim, name, (p) => waitingReason(p) === 'ImagePullBackOff', 'ImagePullBackOff');
    expect(pod.status.phase).toBe('Pending');
    const log = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}/log`);
    expect(log.status).toBe(400);
    expect(log.body.message).toContain('waiting to start: ImagePullBackOff');
  });

  it('a missing script ConfigMap keeps the pod in ContainerCreating, saying so only in a FailedMount event, until it is created', async () => {
    const { runId, name } = await startRunnerJob({ script: false, argv: PAUSED_ARGV });
    const failedMount = () => sim.list('Event', NS).filter((e) => e.reason === 'FailedMount' && String(e.involvedObject.name).startsWith(name));
    await eventually(sim, () => (failedMount().length > 0 ? failedMount() : undefined), 'a FailedMount event');
    expect(failedMount()[0]).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'Pod' },
      message: `MountVolume.SetUp failed for volume "script" : configmap "lp-${runId}-script" not found`,
    });
    const [waiting] = podsOf(sim, name);
    expect(waiting.status.phase).toBe('Pending');
    // As the real kubelet: the container status says ContainerCreating and nothing more.
    expect(waiting.status.containerStatuses[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    await createConfigMap(sim, scriptConfigMap(runId, SCRIPT));
    await podWhen(sim, name, isRunning, 'running once the ConfigMap exists');
  });
});

describe('on a ScaledClock (`npm start`, `loadplane kube-sim --time-scale`)', () => {
  // The time scale is the point of this test, so it alone runs on kube-sim's own ScaledClock instead of
  // the virtual one. It holds however slow the machine is: a Job that only runs to completion has one
  // possible outcome, the wait is bounded in simulated time (here 600 × wall time: 4 simulated hours
  // are 24 real seconds, far more than the fifth of a real second the test needs), and the timing assertion
  // is a bound a slow machine cannot break (a ScaledClock never runs faster than its scale).
  it('runs timeScale times faster than the wall clock: a 2-minute k6 test takes a fifth of a real second', async () => {
    const scaled = await startKubeSim({ timeScale: 600 });
    try {
      expect(scaled.timeScale).toBe(600);
      const wallStart = Date.now();
      const runId = newRunId();
      const name = `lp-${runId}-runner-0`;
      await createConfigMap(scaled, scriptConfigMap(runId, SCRIPT));
      await createJob(scaled, runnerJob({ runId, name, engine: 'k6', role: 'runner', index: 0, engineArgv: [...RUN_ARGV, '--duration', '2m'] }));
      const job = await jobWhen(scaled, name, (j) => condition(j, 'Complete'), 'Complete', { stepMs: 10_000, limitMs: 4 * 3_600_000 });
      const simElapsed = Date.parse(job.status.completionTime) - Date.parse(job.metadata.creationTimestamp);
      expect(simElapsed).toBeGreaterThanOrEqual(2 * 60_000);
      // Timestamps have second precision: up to a simulated second more than the time that passed.
      expect(Date.now() - wallStart).toBeGreaterThanOrEqual((simElapsed - 1000) / 600);
    } finally {
      await scaled.close();
    }
  });
});

describe('objects deleted behind loadplane’s back', () => {
  it('a running pod deleted: backoffLimit 0 fails its Job', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV });
    const pod = await podWhen(sim, name, isRunning, 'running');
    sim.faults.deleteObject('Pod', NS, pod.metadata.name);
    const job = await jobWhen(sim, name, (j) => condition(j, 'Failed'), 'Failed');
    expect(job.status.failed).toBe(1);
    expect(podsOf(sim, name)).toEqual([]);
  });

  it('a Job deleted takes its pods with it', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV });
    await podWhen(sim, name, isRunning, 'running');
    sim.faults.deleteObject('Job', NS, name);
    expect(sim.list('Job', NS).some((j) => j.metadata.name === name)).toBe(false);
    expect(podsOf(sim, name)).toEqual([]);
  });

  it('deleting an object that does not exist is ClusterNotFound', () => {
    expect(() => sim.faults.deleteObject('ConfigMap', NS, 'no-such-cm')).toThrow(ClusterNotFound);
  });

  it('a pod deleted through the API stops its container', async () => {
    const { name } = await startRunnerJob({ argv: PAUSED_ARGV });
    const pod = await podWhen(sim, name, isRunning, 'running');
    const res = await http(sim, 'DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`);
    expect(res.status).toBe(200);
    expect(res.body.metadata.deletionTimestamp).toBeDefined();
    expect((await k6Status(sim, pod.metadata.name)).status).toBe(404);
    expect(podsOf(sim, name).every((p) => p.metadata.uid !== pod.metadata.uid || isDone(p))).toBe(true);
  });
});
