/**
 * The sweeper's slot step (architecture §2 Entry points, §4): a concurrency group's slot, or place in its queue, held by a run
 * that can no longer free it. A run frees its slot in Cleanup, and the reaper runs Cleanup for an
 * execution that ended without it; this step covers what neither reaches. An entry is freed when:
 * - its run has ended, and it can generate no more load: no Prepare, Launch or Cleanup invocation
 *   holds a live lease (one may still be creating or deleting), no pod of the run is Pending or Running
 *   (listed on its cluster: a run kept by its cleanup policy, or one whose Cleanup never ran, may still
 *   have runners), and its Cleanup completed or `cleanupGraceMs` passed since the decision (its own
 *   Cleanup, or the reaper's, goes first);
 * - the ledger has no such run and the entry is older than `slotGraceMs`: the API took the slot for
 *   `whenBusy: reject` and failed before writing the run (or the run expired by TTL);
 * - its run is still in flight by the ledger but older than `staleRunMs`: no execution can still own
 *   it (the state machine's timeout and the reaper's retries have passed), so nothing will ever end it.
 * A live run keeps its slot, however long: its deadlines and the state machine's timeout end it, and
 * the reaper frees it then.
 */
import { Stage, StageState, isTerminal } from '../core/status';
import type { RunView } from '../ledger/ledger';
import type { StageDeps } from './deps';
import { livePods, loadRun } from './run-context';

export interface SlotSweepOptions {
  cleanupGraceMs: number;
  slotGraceMs: number;
  /** A run in flight by the ledger and older than this has no execution left (the longest execution and the reaper's retries). */
  staleRunMs: number;
}

export interface FreedSlot {
  group: string;
  runId: string;
  /** `holder`: it held a slot; `waiting`: it was in the queue. */
  as: 'holder' | 'waiting';
  why: string;
}

export async function freeAbandonedSlots(
  deps: StageDeps,
  opts: SlotSweepOptions,
  freed: FreedSlot[],
  fail: (where: { group: string; runId?: string }, err: unknown) => void,
): Promise<void> {
  let groups: string[];
  try {
    groups = await deps.ledger.listGroupNames();
  } catch (err) {
    fail({ group: '*' }, err);
    return;
  }
  for (const group of groups) {
    try {
      const item = await deps.ledger.getGroup(group);
      if (!item) continue;
      const entries = [
        ...Object.entries(item.holders).map(([runId, e]) => ({ runId, since: e.since, as: 'holder' as const })),
        ...Object.entries(item.waiting).map(([runId, e]) => ({ runId, since: e.since, as: 'waiting' as const })),
      ];
      for (const entry of entries) {
        try {
          const why = await abandoned(deps, opts, await deps.ledger.getRun(entry.runId), entry.since);
          if (!why) continue;
          const released = await deps.ledger.releaseSlot(group, entry.runId);
          if (released.kind === 'released') {
            freed.push({ group, runId: entry.runId, as: entry.as, why });
            deps.log({ runId: entry.runId, stage: 'Sweeper', message: `freed a ${entry.as === 'holder' ? 'slot' : 'queue place'} in group ${group}: ${why}` });
          }
        } catch (err) {
          fail({ group, runId: entry.runId }, err);
        }
      }
    } catch (err) {
      fail({ group }, err);
    }
  }
}

/** Why the entry's run can no longer free it (ledger clock), or undefined while it still may. */
async function abandoned(deps: StageDeps, opts: SlotSweepOptions, view: RunView | undefined, since: string): Promise<string | undefined> {
  const now = deps.ledger.now();
  if (!view) return now - Date.parse(since) >= opts.slotGraceMs ? 'the ledger has no such run' : undefined;
  const run = view.run;
  if (!isTerminal(run.status)) {
    return now - Date.parse(run.createdAt) >= opts.staleRunMs ? `the run is still ${run.status} past the longest execution: nothing will end it` : undefined;
  }
  const cleanedUp = view.stages[Stage.Cleanup]?.state === StageState.completed;
  if (!cleanedUp && now - Date.parse(run.decidedAt ?? run.updatedAt) < opts.cleanupGraceMs) return undefined;
  if (
    BUSY_STAGES.some((stage) => {
      const item = view.stages[stage];
      return item !== undefined && deps.ledger.isLeaseLive(item);
    })
  )
    return undefined;
  const running = await livePods(await loadRun(deps, run.runId));
  if (running.length > 0) return undefined;
  return cleanedUp ? `the run ended ${run.outcome} and was cleaned up` : `the run ended ${run.outcome} and its Cleanup did not free it`;
}

/** Stages whose live invocation may still create or delete the run's objects. */
const BUSY_STAGES = [Stage.Prepare, Stage.Launch, Stage.Cleanup] as const;
