/**
 * architecture §1, k6-operator #304 #898: a restarted runner comes back paused and is never started, or the
 * run completes short-handed. With `onRunnerRestart: restart` an evicted runner's Job replaces its pod;
 * the replacement re-runs the runner's whole share, so loadplane starts it at once and gives it the
 * time that share needs (lambdas/core/restart.ts), never past the run's total deadline. Whole runs on
 * the real ASL, dynalite and kube-sim; the eviction is kube-sim's `setEviction` fault, at a simulated
 * time after the runner's containers started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Labels, SimAnnotations } from '../../lambdas/core/runner-contract';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { ReadyResult } from '../../lambdas/stages/await-ready';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { outputOf } from '../../lambdas/stages/run-context';
import type { StartRecord } from '../../lambdas/stages/start';
import type { HistoryEvent } from '../../local/engine/local-execution';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** A 10-minute k6 test: its run deadline, without a `run` timeout, is 10 min + 1 min of grace after Start. */
const TEN_MINUTES = `export const options = { vus: 8, duration: '10m' };
export default function () {}
`;
const TEST_MS = 10 * 60_000;

interface PodSighting {
  name: string;
  uid: string;
  /** The runner container's start, sim epoch ms. */
  startedAt?: number;
}

/** Every pod of runner `index` seen at any step of the execution (they are gone after Cleanup). */
function watchPods(runId: string, index: number): { seen: Map<string, PodSighting>; onEvent: (e: HistoryEvent) => void } {
  const seen = new Map<string, PodSighting>();
  const onEvent = () => {
    for (const pod of h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId},${Labels.runnerIndex}=${index}`)) {
      const state = pod.status?.containerStatuses?.[0]?.state as { running?: { startedAt: string }; terminated?: { startedAt?: string } } | undefined;
      const started = state?.running?.startedAt ?? state?.terminated?.startedAt;
      seen.set(pod.metadata.uid!, { name: pod.metadata.name!, uid: pod.metadata.uid!, ...(started ? { startedAt: Date.parse(started) } : {}) });
    }
  };
  return { seen, onEvent };
}

describe('onRunnerRestart: restart — the replacement is started at once and given the time its share needs', () => {
  it('a runner evicted half-way re-runs its whole share; the run SUCCEEDS with the replacement’s result and leaves nothing', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setEviction(5 * 60, { runId, runnerIndex: 1 });
    const before = h.kubeSim.requestLog.length;
    const pods = watchPods(runId, 1);
    const { view, execution } = await h.run(
      k6Spec({ name: 'evicted-half-way', onRunnerRestart: 'restart', script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', total: '6h' } }),
      { name: runId, onEvent: pods.onEvent },
    );

    expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toBe(
      'SUCCEEDED: all 4 runners exited 0 (no thresholds defined); runner 1 was replaced once and completed',
    );
    expect(execution.error).toBeUndefined();

    // The replacement (a new UID) ran the whole share after the original was evicted: the test took
    // longer than Start's own run deadline, which the replacement's share extended.
    const started = outputOf<StartRecord>(view, Stage.Start)!;
    const original = outputOf<ReadyResult>(view, Stage.AwaitReady)!.pods![1]!;
    expect(started.startedPods[1]).toBe(original.uid);
    const replacement = [...pods.seen.values()].find((p) => p.uid !== original.uid)!;
    expect(replacement).toBeDefined();
    expect(replacement.startedAt! + TEST_MS).toBeGreaterThan(started.runBy);

    // Unpaused at once: the first successful start request reached it within seconds of its container's
    // start, not at the next sparse mid-test poll (a minute apart).
    const starts = h.kubeSim.requestLog.slice(before).filter((r) => r.method === 'PATCH' && r.path.includes(`/pods/${replacement.name}:`) && r.status < 400);
    expect(starts.length).toBeGreaterThan(0);
    expect(starts[0]!.simAt - replacement.startedAt!).toBeLessThanOrEqual(20_000);

    // Collect read the replacement's log: runner 1 reports its whole share, not the evicted pod's half.
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.missingRunners).toEqual([]);
    expect(result.runners.map((r) => [r.runner, r.exitCode, r.durationMs])).toEqual([0, 1, 2, 3].map((i) => [i, 0, TEST_MS]));
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a Gatling replacement starts by itself (its start instant is past) and gets the spec’s run timeout from its own start', async () => {
    const runId = newRunId();
    // Runners start 60 s after Launch and simulate 4 min; the run timeout is 5 min. Runner 1 is evicted
    // 2.5 min into the simulation, so its replacement needs until about 6.5 min after the start instant.
    h.kubeSim.faults.setEviction(210, { runId, runnerIndex: 1 });
    const pods = watchPods(runId, 1);
    const { view } = await h.run(
      gatlingSpec({ name: 'gatling-evicted', onRunnerRestart: 'restart', runner: { metadata: { annotations: { [SimAnnotations.duration]: '4m' } } } }),
      { name: runId, onEvent: pods.onEvent },
    );
    expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toBe(
      'SUCCEEDED: all 3 runners exited 0 (no thresholds defined); runner 1 was replaced once and completed',
    );
    const started = outputOf<StartRecord>(view, Stage.Start)!;
    const replacement = [...pods.seen.values()].find((p) => p.uid !== started.startedPods[1])!;
    expect(replacement.startedAt! + 4 * 60_000).toBeGreaterThan(started.runBy);
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.runners.map((r) => [r.runner, r.exitCode, r.durationMs])).toEqual([0, 1, 2].map((i) => [i, 0, 4 * 60_000]));
    expect(h.leftovers(runId)).toEqual({});
  });

  it('an eviction so late that the share cannot finish by the total deadline ends the run TIMED_OUT in the run phase', async () => {
    const runId = newRunId();
    // Start's run deadline is 11 min after Start, within the 16 min total; a share restarted 9 min in
    // would need until 20 min.
    h.kubeSim.faults.setEviction(9 * 60, { runId, runnerIndex: 1 });
    const { view, execution } = await h.run(
      k6Spec({ name: 'evicted-late', onRunnerRestart: 'restart', script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', total: '16m' } }),
      { name: runId },
    );
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(view.run.outcomeReason).toMatch(
      /^run: 1 of 4 runners still running at the run deadline \(.+ after start; extended for runner 1's replacement, up to the run's total deadline\)$/,
    );
    expect(execution.error).toBe(Outcome.TIMED_OUT);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a replacement that is never scheduled ends the run TIMED_OUT after the ready timeout, not at the total deadline', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setEviction(2 * 60, { runId, runnerIndex: 2 });
    const { view } = await h.run(
      k6Spec({ name: 'replacement-stuck', onRunnerRestart: 'restart', script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', total: '6h' } }),
      {
        name: runId,
        // From Start on, new pods of runner 2 (its replacement) find no node.
        onEvent: (e) => {
          if (e.type === 'StateExited' && e.state?.name === 'Start') h.kubeSim.faults.setScheduleDelay('never', { runId, runnerIndex: 2 });
        },
      },
    );
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(view.run.outcomeReason).toMatch(/^run: runner 2's replacement pod was not running within 2m of its creation \(runner 2: Pending \(Unschedulable/);
    expect(h.leftovers(runId)).toEqual({});
  });
});
