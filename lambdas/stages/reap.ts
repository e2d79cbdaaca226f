/**
 * The reaper (architecture §3, §6): an execution that ended FAILED, TIMED_OUT or ABORTED without going
 * through its own fail path (StopExecution, the machine's TimeoutSeconds, a failure of the fail path
 * itself) is finished here: Decide, Notify, Cleanup — the same stages, so the same ledger keys. Where
 * the execution already did them, each returns its recorded output: a duplicate event is harmless.
 */
import { RunConflict, SpecInvalid, StageBusy } from '../core/errors';
import { executionInputSchema, runIdentity, type ExecutionInput } from '../core/execution-input';
import { admitGiveUpSeconds } from '../core/stage-timing';
import { endsRun, StepPhase } from '../core/step';
import { Outcome, Stage, type Outcome as OutcomeType } from '../core/status';
import { createRunFromInput } from './admit';
import { cleanup } from './cleanup';
import { decide } from './decide';
import type { StageDeps } from './deps';
import { notify } from './notify';

/** What EventBridge's "Step Functions Execution Status Change" event says (its `detail`). */
export interface ExecutionStatusChange {
  executionArn: string;
  name: string;
  status: string;
  /**
   * The execution's input, as the JSON string Step Functions reports. Left out of the event when the
   * input and output together are too large for it (`inputDetails.included: false`): then read back.
   */
  input?: string | null;
  error?: string | null;
  cause?: string | null;
}

/** Reads an execution's input back from Step Functions (DescribeExecution), for events that left it out. */
export type ExecutionInputReader = (executionArn: string) => Promise<string | undefined>;

export type ReapDeps = StageDeps & { executionInput?: ExecutionInputReader };

/** The event left the input out and it could not be read back: retried, then the dead-letter queue. */
export class ExecutionInputUnavailable extends Error {
  override readonly name = 'ExecutionInputUnavailable' as const;
}

export type ReapResult = { kind: 'ignored'; why: string } | { kind: 'reaped'; runId: string; outcome: OutcomeType; reason: string };

const ENDINGS: Record<string, { outcome: OutcomeType; phase: 'failed' | 'timed_out' | 'aborted'; describe: (c: ExecutionStatusChange) => string }> = {
  FAILED: {
    outcome: Outcome.FAILED,
    phase: StepPhase.failed,
    describe: (c) => `the execution failed (${c.error ?? 'no error'}${c.cause ? `: ${c.cause}` : ''})`,
  },
  TIMED_OUT: {
    outcome: Outcome.TIMED_OUT,
    phase: StepPhase.timed_out,
    describe: () => 'the execution reached the state machine timeout (the deployment maximum run duration)',
  },
  // StopExecution's cause says who stopped it and why (the sweeper's: an abort that outlived its grace).
  ABORTED: { outcome: Outcome.ABORTED, phase: StepPhase.aborted, describe: (c) => `the execution was stopped${c.cause ? `: ${c.cause.slice(0, 300)}` : ''}` },
};

export async function reap(deps: ReapDeps, change: ExecutionStatusChange): Promise<ReapResult> {
  const ending = ENDINGS[change.status];
  if (!ending) return { kind: 'ignored', why: `status ${change.status} needs no reaping` };
  // An input the event left out is not "not a run input": ignoring it would leave the run in flight.
  const text = change.input ?? (await deps.executionInput?.(change.executionArn));
  if (text == null) throw new ExecutionInputUnavailable(`the event for ${change.executionArn} has no input and it could not be read back`);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    return { kind: 'ignored', why: 'the execution input is not JSON' };
  }
  const parsed = executionInputSchema.safeParse(input);
  if (!parsed.success) return { kind: 'ignored', why: 'the execution input is not a run input' };
  const { runId } = runIdentity(parsed.data, { arn: change.executionArn, name: change.name });

  // The reaper finishes this execution's run: its leases and claims are the execution's, so a lease
  // the execution left behind reads as "an earlier attempt of this execution", not another caller.
  deps = { ...deps, caller: change.executionArn };
  const owner = await ownRun(deps, runId, parsed.data, { arn: change.executionArn, name: change.name });
  if (owner.kind === 'ignored') return owner;
  // Cleanup runs whatever Decide and Notify do: a stopped run must not keep generating load because
  // a webhook is down. The first error is rethrown afterwards, so the event is retried.
  let decision;
  try {
    decision = await decide(deps, runId, { verdict: endsRun(ending.phase, ending.outcome, ending.describe(change)) });
    await notify(deps, runId);
  } finally {
    await cleanup(deps, runId);
  }
  deps.log({ runId, stage: 'Reaper', message: `finished the run after its execution ended ${change.status}`, outcome: decision.outcome });
  return { kind: 'reaped', runId, ...decision };
}

/**
 * The run this execution must finish, taking it over if no execution ever did: Admit may have died
 * before creating the run (a hard stop right after the start) or before adopting it (the store failed
 * past Admit's retries). Either way the run would stay PENDING forever, and a late Admit could still
 * bring it to life with no execution to drive it. So the reaper creates it from the execution's input
 * (as Admit would) and adopts it for this execution; Admit, arriving late, then finds a finished run
 * and touches nothing. It takes over only a run of its own spec (an execution whose spec conflicts
 * with the run's never owned it), and only once no other execution can still be in Admit for it
 * (admitGiveUpSeconds after the run was created; until then StageBusy, and the reaper is retried for
 * longer than that). A run another execution adopted is that execution's to finish.
 */
async function ownRun(
  deps: StageDeps,
  runId: string,
  input: ExecutionInput,
  execution: { arn: string; name: string },
): Promise<{ kind: 'owned' } | { kind: 'ignored'; why: string }> {
  const executionArn = execution.arn;
  let view = await deps.ledger.getRun(runId);
  if (view?.run.executionArn === undefined) {
    try {
      // Creates the run, or finds it with this execution's spec; another spec is a RunConflict.
      const { created } = await createRunFromInput(deps, input, execution);
      if (!created && !view) return { kind: 'ignored', why: `run ${runId} was never created (the API creates it before starting an execution)` };
    } catch (err) {
      if (err instanceof SpecInvalid || err instanceof RunConflict) {
        const rejected = `Admit rejected its input: ${err.name}: ${err.message}`;
        return { kind: 'ignored', why: view ? `run ${runId} is not this execution's (${rejected})` : `run ${runId} was never created (${rejected})` };
      }
      throw err;
    }
    view = (await deps.ledger.getRun(runId))!;
  }
  if (view.run.executionArn === undefined) {
    const ageSeconds = (deps.ledger.now() - Date.parse(view.run.createdAt)) / 1000;
    if (ageSeconds < admitGiveUpSeconds()) throw new StageBusy(runId, Stage.Admit, view.run);
    const adopted = await deps.ledger.adoptRun(runId, executionArn);
    if (adopted.kind === 'duplicate') return { kind: 'ignored', why: `run ${runId} belongs to another execution` };
    deps.log({ runId, stage: 'Reaper', message: 'no execution ever adopted the run: finishing it for the execution that ended', execution: executionArn });
    return { kind: 'owned' };
  }
  if (view.run.executionArn !== executionArn) {
    return { kind: 'ignored', why: `run ${runId} belongs to another execution (this one was a duplicate or was rejected)` };
  }
  return { kind: 'owned' };
}
