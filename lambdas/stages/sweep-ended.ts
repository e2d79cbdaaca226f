/**
 * The sweeper's finishing step (architecture §6 Outages): runs whose execution ended while nothing could finish them.
 * An execution that ends FAILED, TIMED_OUT or ABORTED is finished by the reaper (reap.ts), retried for
 * about 15 minutes (reaperRetry); an outage of the ledger or the cluster's API longer than that, or
 * of Step Functions' own event delivery, leaves its run in flight, unnotified, its objects on the
 * cluster, and on AWS only the reaper's dead-letter queue and its alarm to say so. This step makes
 * that queue unnecessary: every sweep lists the executions that ended without succeeding within
 * `finishWindowMs` (ListExecutions, newest first by start), reads each one's input back
 * (DescribeExecution) and, for one whose run is not finished — no outcome, or Notify or Cleanup not
 * completed — or was never created (Admit could not write it), does exactly what the reaper does with
 * the event EventBridge would have sent: reap(), so the same stages, ledger keys, leases and claims,
 * and every run ends in one outcome and one notification whichever of the two gets there first, or
 * both. An execution stopped less than `reaperGraceMs` ago is left to the reaper, which is still
 * retrying it. One that is not a run's (an input Admit rejects, a duplicate of another execution's
 * run) is left alone, as the reaper leaves it.
 */
import { UNSUCCESSFUL_ENDINGS, type EndedExecution, type SweeperExecutions, type UnsuccessfulEnding } from '../core/executions';
import { executionInputSchema, runIdentity } from '../core/execution-input';
import { isValidRunId } from '../core/run-id';
import { NotificationInProgress, StageBusy } from '../core/errors';
import { Stage, StageState, type Outcome } from '../core/status';
import type { RunView } from '../ledger/ledger';
import type { StageDeps } from './deps';
import { reap } from './reap';

export interface FinishSweepOptions {
  /** Executions that stopped within this window (platform clock) are looked at: an outage up to about this long is healed. */
  finishWindowMs: number;
  /** An execution stopped less than this long ago is the reaper's (its retries outlast every lease it can meet). */
  reaperGraceMs: number;
  /** The longest an execution can run (the state machine's timeout): ListExecutions is ordered by start. */
  longestExecutionMs: number;
  /** Most executions looked at per ending status and sweep. */
  maxRuns: number;
}

export interface FinishedRun {
  runId: string;
  outcome: Outcome;
  execution: string;
  /** How the execution ended: FAILED, TIMED_OUT or ABORTED. */
  ended: UnsuccessfulEnding;
}

export async function finishEndedExecutions(
  deps: StageDeps & { executions: SweeperExecutions },
  opts: FinishSweepOptions,
  finished: FinishedRun[],
  fail: (where: { runId?: string; execution?: string }, err: unknown) => void,
): Promise<void> {
  const now = deps.ledger.now();
  let ended: EndedExecution[];
  try {
    ended = await deps.executions.listEnded(now - opts.finishWindowMs - opts.longestExecutionMs, opts.maxRuns);
  } catch (err) {
    fail({}, err);
    return;
  }
  for (const execution of ended) {
    if (execution.stoppedAt < now - opts.finishWindowMs || execution.stoppedAt > now - opts.reaperGraceMs) continue;
    try {
      const done = await finishOne(deps, execution);
      if (done) finished.push(done);
    } catch (err) {
      if (err instanceof StageBusy || err instanceof NotificationInProgress) {
        // The reaper (or another sweep) is at it: its holder finishes, or the next sweep does.
        deps.log({
          runId: '',
          stage: 'Sweeper',
          message: 'finish: a stage or claim is held by another caller: left to it',
          execution: execution.executionArn,
          error: `${err.name}: ${err.message}`,
        });
        continue;
      }
      fail({ execution: execution.executionArn }, err);
    }
  }
}

async function finishOne(deps: StageDeps & { executions: SweeperExecutions }, execution: EndedExecution): Promise<FinishedRun | undefined> {
  // Most executions are named after their run: one this execution adopted and finished needs no
  // DescribeExecution (every sweep looks at 48 hours of failed runs; the call is throttled per account).
  if (isValidRunId(execution.name)) {
    const named = await deps.ledger.getRun(execution.name);
    if (named?.run.executionArn === execution.executionArn && !unfinished(named, execution.executionArn)) return undefined;
  }
  const described = await deps.executions.describe(execution.executionArn);
  if (described?.input === undefined || !(UNSUCCESSFUL_ENDINGS as readonly string[]).includes(described.status)) return undefined;
  let input: unknown;
  try {
    input = JSON.parse(described.input);
  } catch {
    return undefined;
  }
  const parsed = executionInputSchema.safeParse(input);
  if (!parsed.success) return undefined;
  const { runId } = runIdentity(parsed.data, { arn: execution.executionArn, name: execution.name });
  const view = await deps.ledger.getRun(runId);
  if (view && !unfinished(view, execution.executionArn)) return undefined;
  const reaped = await reap(deps, {
    executionArn: execution.executionArn,
    name: execution.name,
    status: described.status,
    input: described.input,
    error: described.error ?? null,
    cause: described.cause ?? null,
  });
  if (reaped.kind !== 'reaped') return undefined;
  deps.log({
    runId,
    stage: 'Sweeper',
    message: `finished a run whose execution ended ${described.status} and that nothing had finished`,
    execution: execution.executionArn,
    outcome: reaped.outcome,
  });
  return { runId, outcome: reaped.outcome, execution: execution.executionArn, ended: described.status as UnsuccessfulEnding };
}

/**
 * Whether this execution's run still needs the reaper's work: it has no outcome, or its Notify or
 * Cleanup did not complete. A run another execution owns is that one's (reap.ts ignores it too); one
 * no execution adopted is this one's to take over.
 */
function unfinished(view: RunView, executionArn: string): boolean {
  const { run } = view;
  if (run.executionArn !== undefined && run.executionArn !== executionArn) return false;
  if (run.outcome === undefined) return true;
  return [Stage.Notify, Stage.Cleanup].some((stage) => view.stages[stage]?.state !== StageState.completed);
}
