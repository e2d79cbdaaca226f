/**
 * The sweeper's slot step (issue 13): a concurrency group's slot, or place in its queue, held by a run
 * that can no longer free it. A run frees its slot in Cleanup, and the reaper runs Cleanup for an
 * execution that ended without it; this step covers what neither reaches:
 * - a run that has ended: freed once its Cleanup completed (a crash between Cleanup's delete and its
 *   release) or `cleanupGraceMs` after its decision (its own Cleanup, or the reaper's, goes first);
 * - a run the ledger does not know: the API took the slot for `whenBusy: reject` and failed before
 *   writing the run, or the run expired by TTL: freed once the entry is older than `slotGraceMs`
 *   (an API request in flight writes its run well within it).
 * A run still in flight keeps its slot, however long: its deadlines and the state machine's timeout
 * end it, and the reaper frees it then.
 */
import { Stage, StageState, isTerminal } from '../core/status';
import type { RunView } from '../ledger/ledger';
import type { StageDeps } from './deps';

export interface SlotSweepOptions {
  cleanupGraceMs: number;
  slotGraceMs: number;
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
          const why = abandoned(deps, opts, await deps.ledger.getRun(entry.runId), entry.since);
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
function abandoned(deps: StageDeps, opts: SlotSweepOptions, view: RunView | undefined, since: string): string | undefined {
  const now = deps.ledger.now();
  if (!view) return now - Date.parse(since) >= opts.slotGraceMs ? 'the ledger has no such run' : undefined;
  const run = view.run;
  if (!isTerminal(run.status)) return undefined;
  if (view.stages[Stage.Cleanup]?.state === StageState.completed) return `the run ended ${run.outcome} and was cleaned up`;
  const decidedAt = Date.parse(run.decidedAt ?? run.updatedAt);
  return now - decidedAt >= opts.cleanupGraceMs ? `the run ended ${run.outcome} and its Cleanup did not free it` : undefined;
}
