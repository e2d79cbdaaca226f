/**
 * What the API and the sweeper need of Step Functions (architecture §2): the execution of a run is
 * named by its run id and its input is `{ "runId": … }`, so starting it is idempotent by Step Functions'
 * own name rules. The sweeper also finishes runs whose execution ended while the reaper could not
 * (an outage of the ledger or the cluster longer than the reaper's retries, architecture §6): it
 * lists the executions that ended without succeeding and reads each one's input. The implementation
 * over the real SFNClient is lambdas/api/executions.ts.
 */

export interface StartedExecution {
  /** `started`: this call started it, or it was already open with the same input; `exists`: it ran (or runs) already. */
  kind: 'started' | 'exists';
  executionArn: string;
}

/** The statuses of an execution that ended without succeeding: the reaper's (lambdas/stages/reap.ts). */
export const UNSUCCESSFUL_ENDINGS = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;
export type UnsuccessfulEnding = (typeof UNSUCCESSFUL_ENDINGS)[number];

/** One execution from ListExecutions. Times in epoch ms. */
export interface EndedExecution {
  executionArn: string;
  name: string;
  status: UnsuccessfulEnding;
  startedAt: number;
  stoppedAt: number;
}

/** DescribeExecution: what the reaper's event carries, read back. */
export interface ExecutionDescription {
  executionArn: string;
  name: string;
  /** RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE. */
  status: string;
  input?: string;
  error?: string;
  cause?: string;
}

export interface Executions {
  /** The execution of run `runId` (name = run id, input `{ runId }`), started if it never was. */
  start(runId: string): Promise<StartedExecution>;
  /** StopExecution: no Catch runs; the reaper finishes the run. A closed or unknown execution is not an error. */
  stop(executionArn: string, error: string, cause: string): Promise<void>;
  /** DescribeExecution; undefined for an execution that does not exist. */
  describe(executionArn: string): Promise<ExecutionDescription | undefined>;
}

/** What only the sweeper needs besides (a port of its own, so the API's bundle carries no ListExecutions). */
export interface EndedExecutions {
  /**
   * The run state machine's executions that ended FAILED, TIMED_OUT or ABORTED and started at or after
   * `startedSince` (epoch ms), newest first, at most `max` per status.
   */
  listEnded(startedSince: number, max: number): Promise<EndedExecution[]>;
}

/** The sweeper's Step Functions: the API's, and the executions that ended. */
export type SweeperExecutions = Executions & EndedExecutions;

/** The execution input the API's runs start with (execution-input.ts, `{ runId }`). */
export function runIdInput(runId: string): string {
  return JSON.stringify({ runId });
}

/** `arn:aws:states:r:a:stateMachine:n` + run id → `arn:aws:states:r:a:execution:n:<runId>`. */
export function executionArnOf(stateMachineArn: string, runId: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${runId}`;
}
