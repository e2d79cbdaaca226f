/**
 * Runs a previous `serve` left unfinished (architecture §9). serve's executions live in its process:
 * when it stops or dies with runs in flight, their executions end with it. With `--data-dir` the
 * ledger keeps those runs as they were — RUNNING, PENDING, … — and nothing else would ever finish
 * them: on AWS the reaper gets the stopped execution's event and the sweeper finds ended executions
 * (lambdas/stages/sweep-ended.ts), but a restarted serve has neither the events nor the executions.
 * So serve, starting on a kept ledger, does what they would have done:
 * - a run an execution had adopted (whatever its status), or one with its outcome whose Notify or
 *   Cleanup did not complete, is reaped as an execution stopped hard: ABORTED (an outcome it already
 *   had stays), one notification, its objects removed — the reaper's stages and ledger keys, under
 *   the old execution's ARN, so the leases it left read as an earlier attempt of the same caller;
 * - a run the API recorded but no execution adopted (PENDING) is started, as the sweeper starts one.
 */
import { executionArnOf, runIdInput, type Executions } from '../../lambdas/core/executions';
import { stateMachineTimeoutSeconds } from '../../lambdas/core/deadlines';
import { OUTCOMES, RunStatus, Stage, StageState, TriggerKind, isTerminal, type RunStatus as RunStatusType } from '../../lambdas/core/status';
import type { DeploymentConfig } from '../../lambdas/core/config';
import type { Ledger, RunView } from '../../lambdas/ledger/ledger';
import { MAX_LIST_LIMIT } from '../../lambdas/ledger/queries';
import type { LocalRuntime } from '../runtime/local-runtime';

/** What the reaper records as the stop's cause: the run's reason reads "the execution was stopped: <this>". */
export const SERVE_STOPPED_CAUSE = 'loadplane serve stopped while the run was in flight, and its execution with it; finished when serve started again';

export interface LeftRun {
  runId: string;
  status: RunStatusType;
  /** `finish`: reaped as a stopped execution; `start`: never started, started now. */
  action: 'finish' | 'start';
  /** The execution the run is finished for (its own, or the one named by its id). */
  executionArn: string;
}

export interface LeftRunEnd {
  runId: string;
  /** The run's outcome afterwards, or why it was not finished. */
  outcome?: string;
  started?: boolean;
  error?: string;
}

/** Ended runs this recent are looked at (as far back as the sweeper's finishing step looks, plus the longest run). */
const ENDED_WINDOW_MS = 48 * 60 * 60 * 1000;

const IN_FLIGHT: readonly RunStatusType[] = Object.values(RunStatus).filter((s) => !isTerminal(s));

/** Whether the run still needs work: no outcome, or its Notify or Cleanup not completed. */
function unfinished(view: RunView): boolean {
  if (view.run.outcome === undefined) return true;
  return [Stage.Notify, Stage.Cleanup].some((stage) => view.stages[stage]?.state !== StageState.completed);
}

/**
 * The runs a previous serve left: every run in flight, and runs that ended recently (within the
 * sweeper's finishing window and the longest run) without their Notify or Cleanup completing.
 */
export async function findLeftRuns(ledger: Ledger, config: DeploymentConfig, stateMachineArn: string): Promise<LeftRun[]> {
  const endedSince = ledger.now() - ENDED_WINDOW_MS - stateMachineTimeoutSeconds(config) * 1000;
  const left: LeftRun[] = [];
  for (const status of [...IN_FLIGHT, ...OUTCOMES]) {
    const recentOnly = isTerminal(status);
    let nextToken: string | undefined;
    listing: do {
      const page = await ledger.listRuns({ status, limit: MAX_LIST_LIMIT, ...(nextToken !== undefined ? { nextToken } : {}) });
      for (const summary of page.runs) {
        // Newest first: past the window, the rest of this status is older still.
        if (recentOnly && Date.parse(summary.createdAt) < endedSince) break listing;
        // The index may lag: the run as it is now decides.
        const view = await ledger.getRun(summary.runId);
        if (!view || !unfinished(view)) continue;
        const { run } = view;
        const start = run.executionArn === undefined && run.status === RunStatus.PENDING && run.trigger.kind === TriggerKind.api;
        left.push({
          runId: run.runId,
          status: run.status,
          action: start ? 'start' : 'finish',
          executionArn: run.executionArn ?? executionArnOf(stateMachineArn, run.runId),
        });
      }
      nextToken = page.nextToken;
    } while (nextToken !== undefined);
  }
  return left;
}

/** Finishes (or starts) one left run; never throws: what became of it is the answer. */
export async function settleLeftRun(runtime: Pick<LocalRuntime, 'reap' | 'ledger'>, executions: Pick<Executions, 'start'>, left: LeftRun): Promise<LeftRunEnd> {
  try {
    if (left.action === 'start') {
      await executions.start(left.runId);
      return { runId: left.runId, started: true };
    }
    const reaped = await runtime.reap({
      executionArn: left.executionArn,
      name: left.executionArn.slice(left.executionArn.lastIndexOf(':') + 1),
      status: 'ABORTED',
      input: runIdInput(left.runId),
      error: null,
      cause: SERVE_STOPPED_CAUSE,
    });
    if (reaped.kind === 'failed') return { runId: left.runId, error: reaped.error };
    if (reaped.kind === 'ignored') return { runId: left.runId, error: reaped.why };
    return { runId: left.runId, outcome: reaped.outcome };
  } catch (err) {
    return { runId: left.runId, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}
