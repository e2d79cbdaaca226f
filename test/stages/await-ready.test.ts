/**
 * AwaitReady's contract (architecture §3.4): polls the runners (reads only) until every pod runs and its k6
 * REST API answers through pods/proxy, then records which pod is each runner's. A runner that can
 * never start (image pull failure, its Job deleted) ends the run FAILED at once; the ready deadline
 * ends it TIMED_OUT, naming ready. Waiting answers are not recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels, Role, SimAnnotations } from '../../lambdas/core/runner-contract';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import { awaitReady } from '../../lambdas/stages/await-ready';
import type { LaunchRecord } from '../../lambdas/stages/launch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, markRequests, objectsOf, pollUntilSettled, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const poll = (runId: string) => pollUntilSettled(h, () => awaitReady(h.runtime.deps, runId));
const TIMEOUTS = { prepare: '2m', ready: '2m', run: '5m', total: '1h' };

describe('AwaitReady', () => {
  it('waits (recording nothing, writing nothing) until every runner answers, then records each runner’s pod', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'ready', parallelism: 3 }), Stage.Launch);
    const requests = markRequests(h);

    const first = await awaitReady(h.runtime.deps, runId);
    expect(first.phase).toBe(StepPhase.waiting); // the pods were just created
    expect(first.nextPollSeconds).toBeGreaterThan(0);
    expect((await viewOf(h, runId)).stages.AwaitReady).toBeUndefined();

    const { step } = await poll(runId);

    const pods = objectsOf(h, 'Pod', runId, Role.runner);
    const expected = Object.fromEntries(pods.map((p) => [p.metadata.labels[Labels.runnerIndex], { name: p.metadata.name, uid: p.metadata.uid }]));
    const [coordinator] = objectsOf(h, 'Pod', runId, Role.coordinator);
    // The coordinator (setup() and teardown() once per run) waits paused like the runners.
    expect(step).toEqual({
      phase: StepPhase.done,
      nextPollSeconds: 0,
      pods: expected,
      coordinator: { name: coordinator.metadata.name, uid: coordinator.metadata.uid },
    });
    expect(Object.keys(expected)).toEqual(['0', '1', '2']);
    expect((await viewOf(h, runId)).stages.AwaitReady).toMatchObject({ state: StageState.completed, attempts: 1, output: step });
    // Reads only; the runners' APIs through the API server's pods/proxy, and none of them started.
    expect(requests.writes()).toEqual([]);
    expect(requests.since().filter((r) => r.path.includes(':6565/proxy/')).length).toBeGreaterThanOrEqual(3);
  });

  it('invoked again after done: the recorded answer, without a single Kubernetes request', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'ready-again', parallelism: 2 }), Stage.AwaitReady);
    h.clock.advance(60 * 60_000); // far past the ready deadline
    const requests = markRequests(h);
    expect(await awaitReady(h.runtime.deps, runId)).toEqual(steps.AwaitReady);
    expect(requests.since()).toEqual([]);
  });

  it('a runner image that cannot be pulled ends the run FAILED at once, not at the deadline', async () => {
    const spec = k6Spec({ name: 'bad-image', parallelism: 2, timeouts: TIMEOUTS, annotations: { [SimAnnotations.imagePullFailure]: 'true' } });
    const { runId, steps } = await driveTo(h, spec, Stage.Launch);

    const { step } = await poll(runId);

    expect(step).toMatchObject({ phase: StepPhase.failed, outcome: Outcome.FAILED });
    expect(step.reason).toMatch(/^ready: runners cannot start: runner 0: Pending \((ErrImagePull|ImagePullBackOff)/);
    expect(h.clock.now()).toBeLessThan((steps.Launch as LaunchRecord).readyBy);
    expect((await viewOf(h, runId)).stages.AwaitReady).toBeUndefined();
  });

  it('runners never scheduled end the run TIMED_OUT at the ready deadline, naming ready and the runners', async () => {
    const spec = k6Spec({ name: 'unschedulable', parallelism: 2, timeouts: TIMEOUTS, annotations: { [SimAnnotations.scheduleDelay]: 'never' } });
    const { runId, steps } = await driveTo(h, spec, Stage.Launch);

    const { step, polls } = await poll(runId);

    expect(polls).toBeGreaterThan(1);
    expect(step).toMatchObject({ phase: StepPhase.timed_out, outcome: Outcome.TIMED_OUT });
    expect(step.reason).toMatch(
      /^ready: 2 of 2 runners and the coordinator not ready within 2m \(runner 0: Pending.*; runner 1: Pending.*; coordinator: Pending/,
    );
    expect(h.clock.now()).toBeGreaterThanOrEqual((steps.Launch as LaunchRecord).readyBy);
  });

  it('a runner Job deleted behind loadplane’s back ends the run FAILED, naming the runner', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'ready-deleted', parallelism: 3 }), Stage.Launch);
    h.kubeSim.faults.deleteObject('Job', 'loadplane', `lp-${runId}-runner-1`);
    expect(await awaitReady(h.runtime.deps, runId)).toEqual({
      phase: StepPhase.failed,
      nextPollSeconds: 0,
      outcome: Outcome.FAILED,
      reason: 'ready: the Job of runner 1 was deleted',
    });
  });

  it('an abort requested before Start ends the run ABORTED, naming who', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'ready-abort', parallelism: 2 }), Stage.Launch);
    await h.runtime.abort(runId, 'erin');
    const step = await awaitReady(h.runtime.deps, runId);
    expect(step).toMatchObject({ phase: StepPhase.aborted, outcome: Outcome.ABORTED, reason: 'ready: aborted by erin before the test started' });
  });

  it('before Launch completed: InvalidTransition', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'ready-unlaunched' }), Stage.AwaitPrepared);
    const requests = markRequests(h);
    await expect(awaitReady(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition', retryable: false });
    expect(requests.since()).toEqual([]);
  });

  it('for a run that does not exist: RunNotFound', async () => {
    await expect(awaitReady(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
  });
});
