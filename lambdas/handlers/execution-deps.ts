/**
 * The run state machine's executions on Step Functions, for the handlers that start, stop or read
 * them; the stage Lambda never does. Two factories, each with its own client, so a bundle carries
 * only the commands its handler sends: the API and the sweeper start, stop and describe executions,
 * the sweeper also lists those that ended, the reaper reads an execution's input back. Built on the handler's first invocation.
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { describeExecutionInput, stepFunctionsEndedExecutions, stepFunctionsExecutions } from '../api/executions';
import { loadStepFunctionsSettings } from '../core/config';
import type { SweeperExecutions, Executions } from '../core/executions';
import type { ExecutionInputReader } from '../stages/reap';
import { traceClient } from '../telemetry/telemetry';

function sfnClient(tracer: Tracer, env: NodeJS.ProcessEnv) {
  const settings = loadStepFunctionsSettings(env);
  const client = traceClient(tracer, new SFNClient({ region: settings.region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) }));
  return { client, stateMachineArn: settings.stateMachineArn };
}

/** The run state machine's executions (the API and the sweeper start and stop them). */
export function createExecutions(tracer: Tracer, env: NodeJS.ProcessEnv = process.env): Executions {
  const { client, stateMachineArn } = sfnClient(tracer, env);
  return stepFunctionsExecutions(client, stateMachineArn);
}

/** The sweeper's: also the executions that ended without succeeding (ListExecutions). */
export function createSweeperExecutions(tracer: Tracer, env: NodeJS.ProcessEnv = process.env): SweeperExecutions {
  const { client, stateMachineArn } = sfnClient(tracer, env);
  return { ...stepFunctionsExecutions(client, stateMachineArn), ...stepFunctionsEndedExecutions(client, stateMachineArn) };
}

/** An execution's input read back (the reaper, for events that left it out). */
export function createExecutionInputReader(tracer: Tracer, env: NodeJS.ProcessEnv = process.env): ExecutionInputReader {
  const { client } = sfnClient(tracer, env);
  return (executionArn) => describeExecutionInput(client, executionArn);
}
