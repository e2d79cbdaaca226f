/**
 * What an invocation did in the ledger's stage records, seen by wrapping the ledger it is given:
 * each stage it began (and which attempt that was) and each stage it completed (with the output
 * recorded). The handlers derive the run metrics from it (run-metrics.ts) instead of every stage
 * reporting them: a completion is recorded once per run (runOnce, architecture §4), so a retried or
 * duplicated invocation that finds a stage already completed counts nothing twice, and the reaper's
 * and the sweeper's Decide and Notify count like the execution's.
 */
import type { Stage } from '../core/status';
import type { Ledger } from '../ledger/ledger';

export interface StageBegin {
  runId: string;
  stage: Stage;
  /** 1 for the stage's first attempt; a Task retry, a timed-out invocation's successor… is more. */
  attempt: number;
  /** The lease of an earlier attempt had expired and was taken over. */
  tookOver: boolean;
}

export interface StageCompletion {
  runId: string;
  stage: Stage;
  output: unknown;
}

export interface StageActivity {
  begun: StageBegin[];
  completed: StageCompletion[];
}

/**
 * The same ledger (same table, client and clock) with beginStage and completeStage reporting to
 * `activity`; everything else inherited. One per invocation.
 */
export function observeStages(ledger: Ledger): { ledger: Ledger; activity: StageActivity } {
  const activity: StageActivity = { begun: [], completed: [] };
  const observed = Object.create(ledger) as Ledger;
  observed.beginStage = async (runId, stage, owner, leaseMs) => {
    const begun = await ledger.beginStage(runId, stage, owner, leaseMs);
    if (begun.kind === 'begun') activity.begun.push({ runId, stage, attempt: begun.attempt, tookOver: begun.tookOver });
    return begun;
  };
  observed.completeStage = async (runId, stage, owner, output) => {
    const completed = await ledger.completeStage(runId, stage, owner, output);
    activity.completed.push({ runId, stage, output });
    return completed;
  };
  return { ledger: observed, activity };
}
