/**
 * Starting and stopping a run's execution with the real SFNClient (architecture §2): the same name
 * and input while the execution is open is success, and ExecutionAlreadyExists (the name was used and
 * the execution has closed, or another input) is read as "this run's execution exists", not raised.
 * On AWS the client talks to Step Functions; locally to the local engine's Step Functions API
 * (local/engine/step-functions-api.ts).
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { executionArnOf, runIdInput, UNSUCCESSFUL_ENDINGS, type EndedExecution, type EndedExecutions, type Executions } from '../core/executions';

export type { EndedExecutions, Executions, StartedExecution } from '../core/executions';

/** ListExecutions' largest page. */
const MAX_PAGE = 1000;

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
    async describe(executionArn) {
      try {
        const out = await client.send(new DescribeExecutionCommand({ executionArn }));
        return {
          executionArn,
          name: out.name ?? executionArn.slice(executionArn.lastIndexOf(':') + 1),
          status: out.status ?? 'RUNNING',
          ...(out.input != null ? { input: out.input } : {}),
          ...(out.error != null ? { error: out.error } : {}),
          ...(out.cause != null ? { cause: out.cause } : {}),
        };
      } catch (err) {
        if (err instanceof ExecutionDoesNotExist) return undefined;
        throw err;
      }
    },
  };
}

/** The sweeper's ListExecutions (sweep-ended.ts): the executions that ended without succeeding. */
export function stepFunctionsEndedExecutions(client: SFNClient, stateMachineArn: string): EndedExecutions {
  return {
    async listEnded(startedSince, max) {
      const ended: EndedExecution[] = [];
      for (const status of UNSUCCESSFUL_ENDINGS) {
        let nextToken: string | undefined;
        let listed = 0;
        // Newest first by start (ListExecutions' order): past `startedSince`, the status is done.
        listing: do {
          const page = await client.send(
            new ListExecutionsCommand({ stateMachineArn, statusFilter: status, maxResults: Math.min(MAX_PAGE, max), ...(nextToken ? { nextToken } : {}) }),
          );
          for (const e of page.executions ?? []) {
            const startedAt = e.startDate?.getTime() ?? 0;
            if (startedAt < startedSince || listed++ >= max) break listing;
            if (!e.executionArn || !e.name) continue;
            ended.push({ executionArn: e.executionArn, name: e.name, status, startedAt, stoppedAt: e.stopDate?.getTime() ?? startedAt });
          }
          nextToken = page.nextToken ?? undefined;
        } while (nextToken !== undefined);
      }
      return ended;
    },
  };
}
