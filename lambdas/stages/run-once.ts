/**
 * The one mechanism that makes a stage idempotent (architecture §4): begin in the ledger (take the lease),
 * do the side effects, complete with fencing. A stage already completed returns its recorded output
 * without touching anything; a live lease held by another invocation is StageBusy (retryable), and
 * says whether that is an earlier attempt of the same caller (`deps.caller`, named in the owner) or
 * another caller.
 */
import { stageLeaseMs } from '../core/stage-timing';
import type { Stage } from '../core/status';
import { leaseOwner } from '../ledger/stages';
import type { StageDeps } from './deps';

/** What the work learns of the attempt: what the previous one failed with, if it failed. */
export interface Attempt {
  previousError?: { name: string; message: string };
}

export async function runOnce<T>(deps: StageDeps, runId: string, stage: Stage, work: (attempt: Attempt) => Promise<T>): Promise<T> {
  const owner = leaseOwner(deps.caller, deps.newOwner());
  // The stage's Task timeout plus a margin (core/stage-timing.ts): a live invocation never loses it.
  const begun = await deps.ledger.beginStage(runId, stage, owner, stageLeaseMs(stage));
  if (begun.kind === 'completed') return begun.output as T;
  let output: T;
  try {
    output = await work(begun.previousError ? { previousError: begun.previousError } : {});
  } catch (err) {
    const error = err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
    await deps.ledger.failStage(runId, stage, owner, error).catch(() => undefined);
    throw err;
  }
  await deps.ledger.completeStage(runId, stage, owner, output);
  return output;
}
