/**
 * A Gatling runner starts by itself at the common instant fixed at Launch (architecture §3.5). With a short
 * simulation, or an AwaitReady poll that comes late (a loaded machine; here: another runner that is
 * slow to be scheduled keeps AwaitReady polling), the runner has run and exited before AwaitReady sees
 * it ready. It is past ready, not broken: the run goes on, and Watch and Collect judge its exit code.
 * A k6 runner waits paused for Start, so one that exits before Start still fails the run, naming its
 * exit code. Whole runs on the real ASL, dynalite and kube-sim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { ReadyResult } from '../../lambdas/stages/await-ready';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { outputOf } from '../../lambdas/stages/run-context';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/**
 * Runners start 60 s after Launch and simulate 10 s; runner 2 is scheduled only 90 s after its pod is
 * created, so AwaitReady is still polling (its ready timeout is 2 min) when runners 0 and 1 have ended.
 */
function shortSimulation(runId: string, name: string) {
  h.kubeSim.faults.setScheduleDelay(90, { runId, runnerIndex: 2 });
  return gatlingSpec({ name, runner: { metadata: { annotations: { [SimAnnotations.duration]: '10s' } } } });
}

describe('AwaitReady: a Gatling runner that already finished is past ready, not broken', () => {
  it('runners that ran and exited 0 before AwaitReady saw them ready: the run SUCCEEDS with every result', async () => {
    const runId = newRunId();
    const { view } = await h.run(shortSimulation(runId, 'short-simulation'), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toBe('SUCCEEDED: all 3 runners exited 0 (no thresholds defined)');
    expect(Object.keys(outputOf<ReadyResult>(view, Stage.AwaitReady)!.pods!)).toEqual(['0', '1', '2']);
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.runners.map((r) => [r.runner, r.exitCode])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a runner that ran and exited 2 (assertions failed) first: the run reaches Collect instead of failing as "cannot start"', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(2, { runId, runnerIndex: 0 });
    const { view } = await h.run(shortSimulation(runId, 'short-assertions'), { name: runId });
    expect(view.run.outcomeReason).not.toMatch(/^(ready|run):/);
    expect(outputOf<ReadyResult>(view, Stage.AwaitReady)!.pods![0]).toBeDefined();
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.runners.map((r) => [r.runner, r.exitCode])).toEqual([
      [0, 2],
      [1, 0],
      [2, 0],
    ]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a runner that ran and exited 2 before AwaitReady saw it ready: THRESHOLDS_FAILED, not FAILED', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(2, { runId, runnerIndex: 0 });
    const { view, execution } = await h.run(shortSimulation(runId, 'short-failed-assertions'), { name: runId });
    expect(view.run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(view.run.outcomeReason).toMatch(/runner 0/);
    expect(execution.error).toBe(Outcome.THRESHOLDS_FAILED);
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('AwaitReady: a k6 runner that exits before Start still fails the run', () => {
  it('k6 runners wait paused for Start, so one that exited (107) is a failure, with its exit code in the reason', async () => {
    const { runId, view } = await h.run(
      k6Spec({ name: 'k6-exits-early', annotations: { [SimAnnotations.exitCode]: '107', [SimAnnotations.faultRunners]: '1' } }),
    );
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toBe('ready: runners cannot start: runner 1: Failed, exited 107 (script exception)');
    expect(view.stages.Start).toBeUndefined();
    expect(h.leftovers(runId)).toEqual({});
  });
});
