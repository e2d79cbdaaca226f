/**
 * The one mechanism that makes a stage idempotent (DESIGN §4): begin in the ledger (take the lease),
 * do the side effects, complete with fencing. A stage already completed returns its recorded output
 * without touching anything; a live lease held by another invocation is StageBusy (retryable).
 */
import { stageLeaseMs } from '../core/stage-timing';
import type { Stage } from '../core/status';
import type { StageDeps } from './deps';

export async function runOnce<T>(deps: StageDeps, runId: string, stage: Stage, work: () => Promise<T>): Promise<T> {
  const owner = deps.newOwner();
  // The stage's Task timeout plus a margin (core/stage-timing.ts): a live invocation never loses it.
  const begun = await deps.ledger.beginStage(runId, stage, owner, stageLeaseMs(stage));
  if (begun.kind === 'completed') return begun.output as T;
  let output: T;
  try {
    output = await work();
  } catch (err) {
    const error = err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
    await deps.ledger.failStage(runId, stage, owner, error).catch(() => undefined);
    throw err;
  }
  await deps.ledger.completeStage(runId, stage, owner, output);
  return output;
}
