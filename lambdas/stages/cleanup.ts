/**
 * Cleanup (architecture §3.10): deletes every object labelled with the run (background propagation; 404 is
 * success), the run's anchor last, so whatever the API server still creates for the run afterwards
 * names an owner that is gone and Kubernetes collects it (architecture §6); as the spec's policy says:
 * `always`, `onSuccess` (a failed run is kept for debugging), or `never`. Kept objects still go: the
 * Jobs' ttlSecondsAfterFinished (the anchor and what it owns with the last of them) and the sweeper
 * remove them.
 */
import { StageBusy } from '../core/errors';
import { callerOf, holderFor } from '../ledger/stages';
import { CleanupPolicy, Outcome, Stage } from '../core/status';
import type { StageDeps } from './deps';
import { livePods, loadRun, type RunContext } from './run-context';
import { runOnceReading } from './run-once';
import { runnerUsageOf } from './run-cost-of';
import { recordRunnerUsage } from '../core/invocation-meter';
import { teardownOnRun } from './teardown';
import type { TeardownOutcome } from '../engines';

/** Stages that create objects in the cluster. */
const CREATING_STAGES = [Stage.Prepare, Stage.Launch] as const;

export interface CleanupRecord {
  policy: CleanupPolicy;
  deleted: number;
  kept: boolean;
  /** The run's concurrency slot was left for the sweeper: kept runner pods were still running. */
  slotKept?: boolean;
  /** teardown() once per run (k6's coordinator, teardown.ts), when it was due. */
  teardown?: TeardownOutcome;
}

export async function cleanup(deps: StageDeps, runId: string): Promise<CleanupRecord> {
  return runOnceReading(
    deps,
    runId,
    Stage.Cleanup,
    () => loadRun(deps, runId),
    async ({ marks }, run) => {
      // A stopped execution's Lambda may still be creating objects (StopExecution does not stop it):
      // deleting now would leave what it creates next. Wait for it (StageBusy is retried).
      for (const stage of CREATING_STAGES) {
        const item = run.view.stages[stage];
        if (item && deps.ledger.isLeaseLive(item)) {
          throw new StageBusy(runId, stage, item, { holder: holderFor(deps.caller, callerOf(item.owner)), leaseLeftMs: item.leaseUntil - deps.ledger.now() });
        }
      }
      const policy = run.spec.cleanup;
      const keep = policy === CleanupPolicy.never || (policy === CleanupPolicy.onSuccess && run.view.run.outcome !== Outcome.SUCCEEDED);
      const teardown = await teardownOnRun(deps, run, marks, !keep);
      const done = teardown ? { teardown } : {};
      const deleted = keep ? 0 : await deleteEverywhere(run);
      // The runners' usage for the run's cost, Launch to now: kept runners are not counted on past Cleanup.
      recordRunnerUsage(runnerUsageOf(run.view, deps.ledger.now()));
      // The run's slot in its concurrency group (or its place in the queue) goes once it can generate no
      // more load: its objects deleted, or, when they are kept, no pod of it still running (a run that
      // failed on one runner, or timed out, may have others running on until their Jobs' deadline). A slot
      // kept here is freed by the sweeper once they have ended (sweep-slots.ts).
      const group = run.spec.concurrency?.group;
      if (!group) return { policy, deleted, kept: keep, ...done };
      const running = keep ? await livePods(run) : [];
      if (running.length > 0) {
        deps.log({
          runId,
          stage: Stage.Cleanup,
          message: 'concurrency slot kept: kept pods still running; the sweeper frees it once they end',
          group,
          pods: running.slice(0, 5),
        });
        return { policy, deleted, kept: keep, slotKept: true, ...done };
      }
      await deps.ledger.releaseSlot(group, runId);
      return { policy, deleted, kept: keep, ...done };
    },
  );
}

/**
 * The run's objects deleted in every cluster of the run at once (each cluster's anchor last: the
 * client's deleteRun). A cluster that fails does not stop the others; its error goes up after them,
 * so the retry finds only what is left there.
 */
async function deleteEverywhere(run: RunContext): Promise<number> {
  const results = await Promise.allSettled(run.clusters.map((c) => c.client.deleteRun(c.namespace, run.runId)));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.reduce((sum, r) => sum + (r.status === 'fulfilled' ? r.value.deleted : 0), 0);
}
