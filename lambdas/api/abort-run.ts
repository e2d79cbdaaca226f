/**
 * `DELETE /runs/{id}` (architecture §2 Entry points): records an abort for the next Watch to act on (the runners are told
 * to stop, partial results are collected, the run ends ABORTED; before the runners start it ends at
 * once). Repeating it is harmless (the first request's time and caller stay); a finished run is a 409
 * with its state. If the run has not ended within the abort grace, the sweeper stops the execution
 * hard and the reaper finishes the run (lambdas/stages/sweep.ts).
 */
import { RunNotFound } from '../core/errors';
import type { ApiDeps } from './api-deps';
import { HttpProblem } from './http-problem';
import { checkRunId, runNotFound } from './read-runs';
import type { AbortResponse } from './resources';
import { runItemSummary } from './run-resource';

export async function abortRun(deps: ApiDeps, id: string, caller: string): Promise<AbortResponse> {
  let result;
  try {
    result = await deps.ledger.requestAbort(checkRunId(id), caller, deps.now());
  } catch (err) {
    if (err instanceof RunNotFound) throw runNotFound(id);
    throw err;
  }
  const run = result.run;
  if (result.kind === 'already-finished') {
    throw new HttpProblem(
      409,
      [{ path: 'id', message: `run ${id} already ended ${result.outcome}${run.outcomeReason ? `: ${run.outcomeReason}` : ''}` }],
      runItemSummary(run),
    );
  }
  return {
    runId: run.runId,
    status: run.status,
    abortRequestedAt: run.abortRequestedAt!,
    ...(run.abortRequestedBy !== undefined ? { abortRequestedBy: run.abortRequestedBy } : {}),
    message:
      result.kind === 'requested'
        ? 'abort recorded: the runners are stopped at the next poll and the run ends ABORTED with partial results'
        : 'abort was already recorded; nothing changed',
  };
}
