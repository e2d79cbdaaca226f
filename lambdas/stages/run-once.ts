/**
 * The one mechanism that makes a stage idempotent (architecture §4): begin in the ledger (take the lease),
 * do the side effects, complete with fencing. A stage already completed returns its recorded output
 * without touching anything; a live lease held by another invocation is StageBusy (retryable), and
 * says whether that is an earlier attempt of the same caller (`deps.caller`, named in the owner) or
 * another caller.
 */
import { failureRecord, type FailureRecord } from '../core/errors';
import { stageLeaseMs } from '../core/stage-timing';
import type { Stage } from '../core/status';
import { leaseOwner } from '../ledger/stages';
import type { StageDeps } from './deps';
import type { StageMarks } from '../core/stage-marks';

/** What the work learns of the attempt. */
export interface Attempt {
  /**
   * The stage's first begin: no earlier invocation of it began (nor took over a lease), so nothing of
   * what it makes can exist yet (every side effect comes after begin). A creating stage skips looking
   * for an earlier attempt's objects then (create-all.ts).
   */
  first: boolean;
  /** What the previous attempt failed with, if it failed. */
  previousError?: FailureRecord;
  /** The steps earlier attempts recorded (and this one, through `mark`). */
  marks: StageMarks;
}

export async function runOnce<T>(deps: StageDeps, runId: string, stage: Stage, work: (attempt: Attempt) => Promise<T>): Promise<T> {
  return runOnceReading(
    deps,
    runId,
    stage,
    async () => undefined,
    (attempt) => work(attempt),
  );
}

/**
 * runOnce, with a read the work needs (the run) made while the lease is taken: one round trip to
 * the ledger fewer. The read may then precede the lease by that round trip, so only stages that
 * create nothing use it (Collect, Decide, Cleanup): a creating stage reads after its lease, as
 * architecture §7's ordering with Cleanup assumes. A read made for a stage already completed is dropped.
 */
export async function runOnceReading<T, R>(
  deps: StageDeps,
  runId: string,
  stage: Stage,
  read: () => Promise<R>,
  work: (attempt: Attempt, read: R) => Promise<T>,
): Promise<T> {
  const owner = leaseOwner(deps.caller, deps.newOwner());
  const reading = read();
  // Observed below, or dropped (the stage was completed, or begin failed): never an unhandled rejection.
  reading.catch(() => undefined);
  // The stage's Task timeout plus a margin (core/stage-timing.ts): a live invocation never loses it.
  const begun = await deps.ledger.beginStage(runId, stage, owner, stageLeaseMs(stage));
  if (begun.kind === 'completed') return begun.output as T;
  let output: T;
  try {
    const marks = new Set(begun.marks);
    const stageMarks: StageMarks = {
      has: (mark) => marks.has(mark),
      async mark(mark) {
        await deps.ledger.markStage(runId, stage, owner, mark, true);
        marks.add(mark);
      },
      async unmark(mark) {
        await deps.ledger.markStage(runId, stage, owner, mark, false);
        marks.delete(mark);
      },
    };
    const attempt = {
      first: begun.attempt === 1 && !begun.tookOver,
      marks: stageMarks,
      ...(begun.previousError ? { previousError: begun.previousError } : {}),
    };
    output = await work(attempt, await reading);
  } catch (err) {
    await deps.ledger.failStage(runId, stage, owner, failureRecord(err)).catch(() => undefined);
    throw err;
  }
  await deps.ledger.completeStage(runId, stage, owner, output);
  return output;
}
