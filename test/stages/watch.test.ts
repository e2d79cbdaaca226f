/**
 * Watch's contract (architecture §3.6): each poll lists the run's Jobs and Pods (one call each, whatever
 * N is) and answers `{ phase, nextPollSeconds }`. Done — recorded — when every runner exited 0, 99 or
 * 110; any other exit code ends the test early (the others are stopped gracefully, and Watch's record
 * says why for Collect); a runner Job deleted ends the run FAILED naming the runner; the run deadline
 * ends it TIMED_OUT naming run; an abort request stops the runners gracefully.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Role } from '../../lambdas/core/runner-contract';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import type { StartRecord } from '../../lambdas/stages/start';
import { watch } from '../../lambdas/stages/watch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, markRequests, objectsOf, pollUntilSettled, viewOf } from './stage-fixture';
import { TEARDOWN_DURATION_ANNOTATION } from '../../local/kube-sim/programs/k6-runner';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const poll = (runId: string) => pollUntilSettled(h, () => watch(h.runtime.deps, runId));
const TEN_MINUTES = `export const options = { vus: 8, duration: '10m' };\nexport default function () {}\n`;
const longSpec = (name: string, run = '30m') =>
  k6Spec({ name, parallelism: 2, script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run, total: '1h' } });
const exitCodes = (runId: string) => objectsOf(h, 'Pod', runId, Role.runner).map((p) => p.status.containerStatuses?.[0]?.state?.terminated?.exitCode);

describe('Watch', () => {
  it('polls with two list calls each, plus one live-metrics read per running runner (reads only), and records done once every runner exited 0', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'watch', parallelism: 4 }), Stage.Start);
    const requests = markRequests(h);

    const first = await watch(h.runtime.deps, runId);
    expect(first.phase).toBe(StepPhase.waiting);
    expect(first.nextPollSeconds).toBeGreaterThan(0);
    expect((await viewOf(h, runId)).stages.Watch).toBeUndefined();

    const { step, polls } = await poll(runId);

    expect(step).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    expect(h.clock.now()).toBeGreaterThanOrEqual((steps.Start as StartRecord).scheduledEndAt!);
    expect(exitCodes(runId)).toEqual([0, 0, 0, 0]);
    expect((await viewOf(h, runId)).stages.Watch).toMatchObject({ state: StageState.completed, attempts: 1, output: step });
    // 1 + polls calls, each one list of Jobs and one of Pods: never a list call per pod.
    const calls = requests.since();
    expect(calls.every((r) => r.method === 'GET')).toBe(true);
    const lists = calls.filter((r) => /\/namespaces\/loadplane\/(jobs|pods)$/.test(r.path));
    expect(lists).toHaveLength(2 * (1 + polls));
    // Every poll but the last (which found every runner exited) read each runner's metrics once (live-metrics.ts).
    const metrics = calls.filter((r) => /\/namespaces\/loadplane\/pods\/[^/]+:6565\/proxy\/v1\/metrics$/.test(r.path));
    expect(metrics).toHaveLength(4 * polls);
    expect(lists.length + metrics.length).toBe(calls.length);
  });

  it('invoked again after done: the recorded answer, without a single Kubernetes request', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'watch-again', parallelism: 2 }), Stage.Watch);
    expect(steps.Watch).toMatchObject({ phase: StepPhase.done });
    h.clock.advance(60 * 60_000); // far past the run deadline
    const requests = markRequests(h);
    expect(await watch(h.runtime.deps, runId)).toEqual(steps.Watch);
    expect(requests.since()).toEqual([]);
  });

  it('exit 99 (thresholds failed) is a test that ran to its end: done', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(99, { runId });
    await driveTo(h, k6Spec({ name: 'watch-99', parallelism: 2 }), Stage.Start, { runId });
    const { step } = await poll(runId);
    expect(step).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    expect(exitCodes(runId)).toEqual([99, 99]);
  });

  it('a runner OOM-killed (exit 137) ends the test early: the others are stopped gracefully, and Watch hands over to Collect with the cause', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(137, { runId, runnerIndex: 1 });
    const spec = k6Spec({
      name: 'watch-137',
      parallelism: 3,
      script: { inline: TEN_MINUTES },
      timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' },
    });
    const { steps } = await driveTo(h, spec, Stage.Start, { runId });
    const requests = markRequests(h);

    const { step } = await poll(runId);

    // The other two were told to stop (k6's REST stop: they print their partial results and exit 103).
    const stops = requests.since().filter((r) => r.method === 'PATCH' && r.path.endsWith(':6565/proxy/v1/status'));
    expect(new Set(stops.map((r) => r.path.match(/-runner-(\d+)-/)![1]))).toEqual(new Set(['0', '2']));
    expect(exitCodes(runId)).toEqual([103, 137, 103]);
    expect(h.clock.now()).toBeLessThan((steps.Start as StartRecord).expectedEndAt!); // half-way, not at the end
    expect(step).toEqual({
      phase: StepPhase.done,
      nextPollSeconds: 0,
      endedEarly: { outcome: Outcome.FAILED, reason: "runner 1 exited 137 (SIGKILL, usually OOM-killed) before the test's end", stopped: [0, 2], cutOff: [] },
    });
    expect((await viewOf(h, runId)).stages.Watch).toMatchObject({ state: StageState.completed, output: step });
  });

  it('far from the expected end it answers cruising with the cruise interval (no error), and polls with Waits near the end', async () => {
    const { runId, steps } = await driveTo(h, longSpec('watch-cruise'), Stage.Start);
    // The first poll of a cruise window is a Wait of the run's own; the next ones are the window's.
    expect(await watch(h.runtime.deps, runId)).toEqual({ phase: StepPhase.waiting, nextPollSeconds: 60 });
    await h.clock.sleep(60_000);
    expect(await watch(h.runtime.deps, runId)).toEqual({ phase: StepPhase.cruising, nextPollSeconds: 60 });
    expect((await viewOf(h, runId)).stages.Watch).toBeUndefined();
    // 40 s before the schedule's end (k6's totalDuration adds a 30 s gracefulStop): a short Wait, so the end is seen promptly.
    await h.clock.sleep((steps.Start as StartRecord).scheduledEndAt! - h.clock.now() - 40_000);
    const near = await watch(h.runtime.deps, runId);
    expect(near).toEqual({ phase: StepPhase.waiting, nextPollSeconds: 20 });
  });

  it('runners still running at the run deadline end the run TIMED_OUT, naming run', async () => {
    // 2m declared (AwaitPrepared lets it through), but teardown() takes 5m more, which k6 inspect does not count.
    const overrun = k6Spec({
      name: 'watch-overrun',
      parallelism: 2,
      script: { inline: `export const options = { vus: 8, duration: '2m' };\nexport default function () {}\n` },
      annotations: { [TEARDOWN_DURATION_ANNOTATION]: '5m' },
      timeouts: { prepare: '2m', ready: '2m', run: '3m', total: '1h' },
      // Each runner runs its own teardown() (k6's way), the one that overruns.
      setupTeardown: 'perRunner',
    });
    const { runId, steps } = await driveTo(h, overrun, Stage.Start);
    const { runBy } = steps.Start as StartRecord;

    const { step } = await poll(runId);

    expect(step).toEqual({
      phase: StepPhase.timed_out,
      nextPollSeconds: 0,
      outcome: Outcome.TIMED_OUT,
      reason: 'run: 2 of 2 runners still running at the run deadline (3m after start)',
    });
    expect(h.clock.now()).toBeGreaterThanOrEqual(runBy);
  });

  it('a runner Job deleted while the test runs ends the run FAILED, naming the runner', async () => {
    const { runId } = await driveTo(h, longSpec('watch-deleted'), Stage.Start);
    h.kubeSim.faults.deleteObject('Job', 'loadplane', `lp-${runId}-runner-1`);
    expect(await watch(h.runtime.deps, runId)).toEqual({
      phase: StepPhase.failed,
      nextPollSeconds: 0,
      outcome: Outcome.FAILED,
      reason: 'run: the Job of runner 1 was deleted while the test ran',
    });
  });

  it('an abort request: every running runner is told to stop, Watch polls densely until they exited, then records done', async () => {
    const { runId, steps } = await driveTo(h, longSpec('watch-abort'), Stage.Start);
    await h.clock.sleep(60_000); // a minute into the 10-minute test
    await h.runtime.abort(runId, 'frank');
    const requests = markRequests(h);

    const first = await watch(h.runtime.deps, runId);
    expect(first).toEqual({ phase: StepPhase.waiting, nextPollSeconds: 2 });
    const stops = requests.since().filter((r) => r.method === 'PATCH' && r.path.endsWith(':6565/proxy/v1/status'));
    expect(stops.map((r) => r.status)).toEqual([200, 200]);

    const { step } = await poll(runId);

    expect(step).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });
    expect(exitCodes(runId)).toEqual([103, 103]); // k6 stops gracefully (103: stopped through its REST API), with partial results
    expect(h.clock.now()).toBeLessThan((steps.Start as StartRecord).expectedEndAt!);
    expect((await viewOf(h, runId)).stages.Watch).toMatchObject({ state: StageState.completed, output: step });
  });

  it('before Start completed: InvalidTransition', async () => {
    const { runId } = await driveTo(h, k6Spec({ name: 'watch-unstarted', parallelism: 2 }), Stage.AwaitReady);
    const requests = markRequests(h);
    await expect(watch(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition', retryable: false });
    expect(requests.since()).toEqual([]);
  });

  it('for a run that does not exist: RunNotFound', async () => {
    await expect(watch(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
  });
});
