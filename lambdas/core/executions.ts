/**
 * What the API and the sweeper need of Step Functions (architecture §2): the execution of a run is
 * named by its run id and its input is `{ "runId": … }`, so starting it is idempotent by Step Functions'
 * own name rules. The implementation over the real SFNClient is lambdas/api/executions.ts.
 */

export interface StartedExecution {
  /** `started`: this call started it, or it was already open with the same input; `exists`: it ran (or runs) already. */
  kind: 'started' | 'exists';
  executionArn: string;
}

export interface Executions {
  /** The execution of run `runId` (name = run id, input `{ runId }`), started if it never was. */
  start(runId: string): Promise<StartedExecution>;
  /** StopExecution: no Catch runs; the reaper finishes the run. A closed or unknown execution is not an error. */
  stop(executionArn: string, error: string, cause: string): Promise<void>;
}

/** The execution input the API's runs start with (execution-input.ts, `{ runId }`). */
export function runIdInput(runId: string): string {
  return JSON.stringify({ runId });
}

/** `arn:aws:states:r:a:stateMachine:n` + run id → `arn:aws:states:r:a:execution:n:<runId>`. */
export function executionArnOf(stateMachineArn: string, runId: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${runId}`;
}
