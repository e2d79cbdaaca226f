/**
 * Starting and stopping a run's execution with the real SFNClient (architecture §2): the same name
 * and input while the execution is open is success, and ExecutionAlreadyExists (the name was used and
 * the execution has closed, or another input) is read as "this run's execution exists", not raised.
 * On AWS the client talks to Step Functions; locally to the local engine's Step Functions API
 * (local/engine/step-functions-api.ts).
 */
import { DescribeExecutionCommand, ExecutionAlreadyExists, ExecutionDoesNotExist, SFNClient, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { executionArnOf, runIdInput, type Executions } from '../core/executions';

export type { Executions, StartedExecution } from '../core/executions';

/** An execution's input (DescribeExecution), for the reaper when its event left the input out. */
export async function describeExecutionInput(client: SFNClient, executionArn: string): Promise<string | undefined> {
  const out = await client.send(new DescribeExecutionCommand({ executionArn }));
  return out.input ?? undefined;
}

export function stepFunctionsExecutions(client: SFNClient, stateMachineArn: string): Executions {
  return {
    async start(runId) {
      try {
        const out = await client.send(new StartExecutionCommand({ stateMachineArn, name: runId, input: runIdInput(runId) }));
        return { kind: 'started', executionArn: out.executionArn ?? executionArnOf(stateMachineArn, runId) };
      } catch (err) {
        if (err instanceof ExecutionAlreadyExists) return { kind: 'exists', executionArn: executionArnOf(stateMachineArn, runId) };
        throw err;
      }
    },
    async stop(executionArn, error, cause) {
      try {
        await client.send(new StopExecutionCommand({ executionArn, error, cause }));
      } catch (err) {
        if (err instanceof ExecutionDoesNotExist) return;
        throw err;
      }
    },
  };
}
