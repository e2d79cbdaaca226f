/**
 * The run state machine's executions on Step Functions, built once per container, for the handlers
 * that start, stop or read them (the API, the sweeper, the reaper); the stage Lambda never does.
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import { describeExecutionInput, stepFunctionsExecutions, type Executions } from '../api/executions';
import { loadStepFunctionsSettings } from '../core/config';

const stepFunctions = loadStepFunctionsSettings();
const sfn = new SFNClient({ region: stepFunctions.region, ...(stepFunctions.endpoint ? { endpoint: stepFunctions.endpoint } : {}) });
/** The run state machine's executions (the API and the sweeper start and stop them). */
export const executions: Executions = stepFunctionsExecutions(sfn, stepFunctions.stateMachineArn);
/** An execution's input read back (the reaper, for events that left it out). */
export const executionInput = (executionArn: string) => describeExecutionInput(sfn, executionArn);
