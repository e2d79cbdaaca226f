/**
 * A run the API recorded whose execution name (the run id) is taken by another execution (architecture §2 Entry points):
 * someone started one by hand under that name, with an input that is not the run's `{ runId }`.
 * StartExecution answers ExecutionAlreadyExists, which alone reads as "this run's execution exists",
 * yet that execution is not the run's: it never adopts it (its Admit finds a run of another spec, or
 * none of its own), so the run would stay PENDING for good and keep its concurrency slot.
 *
 * Called by the API (lambdas/api/submit-run.ts: answers 409 naming the execution) and the sweeper
 * (sweep.ts, step 1) when a start answers `exists` for a run no execution adopted: DescribeExecution
 * tells the run's own execution (input `{ runId }`: it adopts the run, or the reaper finishes it)
 * from a foreign one. A foreign one ends the run FAILED in one conditional write that loses to an
 * adoption, and frees its slot; nothing was made on a cluster, so nothing is notified or cleaned up
 * (the caller is told at once, as for a refused spec).
 */
import { runIdInput, type Executions } from '../core/executions';
import { Outcome } from '../core/status';
import type { Ledger, RunItem } from '../ledger/ledger';

export type NameTaken = { kind: 'ours' } | { kind: 'taken'; executionArn: string; reason: string; run: RunItem };

export async function endIfNameTaken(
  deps: { ledger: Ledger; executions: Pick<Executions, 'describe'> },
  runId: string,
  executionArn: string,
): Promise<NameTaken> {
  const execution = await deps.executions.describe(executionArn);
  // Not visible (yet), or started with the run's own input: the run's execution.
  if (!execution || execution.input === undefined || sameInput(execution.input, runIdInput(runId))) return { kind: 'ours' };
  const reason =
    `execution name ${runId} is taken by another execution (${executionArn}, ${execution.status}) started with another input, ` +
    'so this run can never start: submit it again with another Idempotency-Key, or without one';
  const ended = await deps.ledger.endUnstartedRun(runId, Outcome.FAILED, reason);
  if (ended.kind === 'adopted') return { kind: 'ours' };
  if (ended.kind === 'ended') {
    const group = ended.run.spec.concurrency?.group;
    if (group !== undefined) await deps.ledger.releaseSlot(group, runId);
  }
  return { kind: 'taken', executionArn, reason: ended.run.outcomeReason ?? reason, run: ended.run };
}

/** Step Functions returns the input as given: compare as JSON, so spacing does not matter. */
function sameInput(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}
