/**
 * Cleanup (architecture §3.10): deletes every object labelled with the run (background propagation; 404 is
 * success), as the spec's policy says: `always`, `onSuccess` (a failed run is kept for debugging), or
 * `never`. Kept objects still go: the Jobs' ttlSecondsAfterFinished and the sweeper remove them.
 */
import { StageBusy } from '../core/errors';
import { callerOf, holderFor } from '../ledger/stages';
import { CleanupPolicy, Outcome, Stage } from '../core/status';
import type { StageDeps } from './deps';
import { loadRun } from './run-context';
import { runOnce } from './run-once';

/** Stages that create objects in the cluster. */
const CREATING_STAGES = [Stage.Prepare, Stage.Launch] as const;

export interface CleanupRecord {
  policy: CleanupPolicy;
  deleted: number;
  kept: boolean;
}

export async function cleanup(deps: StageDeps, runId: string): Promise<CleanupRecord> {
  return runOnce(deps, runId, Stage.Cleanup, async () => {
    const run = await loadRun(deps, runId);
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
    const deleted = keep ? 0 : (await run.cluster.deleteRun(run.namespace, runId)).deleted;
    // The run's slot in its concurrency group (or its place in the queue) goes once its objects are
    // gone: the next run of the group starts on a cleared namespace. Kept objects have stopped (the run ended).
    const group = run.spec.concurrency?.group;
    if (group) await deps.ledger.releaseSlot(group, runId);
    return { policy, deleted, kept: keep };
  });
}
