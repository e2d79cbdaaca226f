/**
 * Decide's contract (architecture §3.8): writes the run's one outcome — from the verdict of the step that
 * ended the run, or from the error a Catch caught — with the totals of Collect's result. The first
 * outcome wins: whoever comes later (a retry, the fail path, the reaper) gets the recorded one.
 * Decide never talks to the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { endsRun, StepPhase, type StepResult } from '../../lambdas/core/step';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { decide, type Decision } from '../../lambdas/stages/decide';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, markRequests, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const admitted = async (name: string) => (await driveTo(h, k6Spec({ name, parallelism: 2 }), Stage.Admit)).runId;

describe('Decide', () => {
  it('records the outcome of Collect’s verdict with the result totals, on the run and as its own record', async () => {
    const { runId, steps } = await driveTo(h, k6Spec({ name: 'decide', parallelism: 2 }), Stage.Collect);
    const verdict = steps.Collect as StepResult;
    const requests = markRequests(h);
    const decidedAt = h.clock.now();

    const decision = await decide(h.runtime.deps, runId, { verdict });

    expect(decision).toEqual({ outcome: Outcome.SUCCEEDED, reason: verdict.reason!, decidedAt } satisfies Decision);
    const view = await viewOf(h, runId);
    expect(view.run).toMatchObject({ outcome: Outcome.SUCCEEDED, status: Outcome.SUCCEEDED, outcomeReason: verdict.reason });
    expect(view.run.decidedAt).toBeDefined();
    // The run item keeps the totals; per-runner detail stays in Collect's record.
    const { result } = view.stages.Collect!.output as CollectRecord;
    const { runners: _runners, ...totals } = result;
    expect(view.run.summary).toEqual(totals);
    expect(view.stages.Decide).toMatchObject({ state: StageState.completed, attempts: 1, output: decision });
    expect(requests.since()).toEqual([]);
  });

  it('the first outcome wins: a later Decide (the fail path, the reaper) gets the recorded decision and changes nothing', async () => {
    const runId = await admitted('decide-first');
    const first = await decide(h.runtime.deps, runId, {
      verdict: endsRun(StepPhase.timed_out, Outcome.TIMED_OUT, 'run: 2 of 2 runners still running at the run deadline'),
    });
    const before = await viewOf(h, runId);
    h.clock.advance(60_000);

    const later = await decide(h.runtime.deps, runId, { error: { Error: 'States.Timeout', Cause: 'the Task timed out' } });
    const reaper = await decide(h.runtime.deps, runId, { verdict: endsRun(StepPhase.aborted, Outcome.ABORTED, 'the execution was stopped') });

    expect(later).toEqual(first);
    expect(reaper).toEqual(first);
    expect(await viewOf(h, runId)).toEqual(before);
  });

  it('an outcome already on the run (an earlier Decide that died before completing) is the one returned', async () => {
    const runId = await admitted('decide-recorded');
    await h.runtime.ledger.decideOutcome(runId, Outcome.ABORTED, 'aborted by hal');
    const decision = await decide(h.runtime.deps, runId, { verdict: endsRun(StepPhase.failed, Outcome.FAILED, 'run: runner 0 exited 137') });
    expect(decision).toMatchObject({ outcome: Outcome.ABORTED, reason: 'aborted by hal' });
    expect((await viewOf(h, runId)).run).toMatchObject({ outcome: Outcome.ABORTED, outcomeReason: 'aborted by hal' });
  });

  it('a poll’s verdict (TIMED_OUT naming the phase) becomes the outcome, without a summary when nothing was collected', async () => {
    const runId = await admitted('decide-timeout');
    const reason = 'ready: 2 of 2 runners not ready within 2m (runner 0: Pending)';
    expect(await decide(h.runtime.deps, runId, { verdict: endsRun(StepPhase.timed_out, Outcome.TIMED_OUT, reason) })).toMatchObject({
      outcome: Outcome.TIMED_OUT,
      reason,
    });
    const { run } = await viewOf(h, runId);
    expect(run).toMatchObject({ outcome: Outcome.TIMED_OUT, status: Outcome.TIMED_OUT, outcomeReason: reason });
    expect(run.summary).toBeUndefined();
  });

  it.each([
    [
      'a Lambda error on AWS (Cause is JSON)',
      { Error: 'ClusterUnavailable', Cause: JSON.stringify({ errorType: 'ClusterUnavailable', errorMessage: 'list Job: 503', trace: [] }) },
      'ClusterUnavailable: list Job: 503',
    ],
    [
      'an error locally (Cause is the message)',
      { Error: 'States.Timeout', Cause: 'Task timed out after 60 seconds' },
      'States.Timeout: Task timed out after 60 seconds',
    ],
  ])('the fail path: %s is FAILED, naming the error', async (_label, error, reason) => {
    const runId = await admitted('decide-error');
    expect(await decide(h.runtime.deps, runId, { error })).toMatchObject({ outcome: Outcome.FAILED, reason });
    expect((await viewOf(h, runId)).run).toMatchObject({ outcome: Outcome.FAILED, outcomeReason: reason });
  });

  it('a verdict without an outcome is FAILED, saying so (never SUCCEEDED by default)', async () => {
    const runId = await admitted('decide-no-verdict');
    const decision = await decide(h.runtime.deps, runId, { verdict: { phase: StepPhase.done, nextPollSeconds: 0 } });
    expect(decision).toMatchObject({ outcome: Outcome.FAILED, reason: expect.stringMatching(/without a verdict/) });
  });

  it('for a run that does not exist: RunNotFound', async () => {
    const runId = newRunId();
    await expect(decide(h.runtime.deps, runId, { verdict: endsRun(StepPhase.failed, Outcome.FAILED, 'x') })).rejects.toMatchObject({
      name: 'RunNotFound',
      runId,
    });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
  });
});
