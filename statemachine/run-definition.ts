/**
 * The run state machine (run.asl.json) and its cruise window (cruise.asl.json, the child execution
 * that polls a long test far from its end: lambdas/core/polling.ts) are the definitions used on AWS
 * and locally. They stay plain, valid JSON; this module fills in what differs per deployment: the
 * run machine's TimeoutSeconds (the longest run the deployment allows plus its finish phases:
 * stateMachineTimeoutSeconds, architecture §6), the cruise window's (cruiseWindowTimeoutSeconds, and
 * its Task's in the run a minute more) and, locally, each Task's `Resource` and the window's ARN.
 * Every stage Task names its stage's own function (`${AdmitFunctionArn}`, …): each stage has a Lambda
 * whose timeout is that Task's TimeoutSeconds, so an invocation is dead before its lease lapses
 * (architecture §6). On AWS the CDK app binds the placeholders with `definitionSubstitutions`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stateMachineTimeoutSeconds, type MachineLimits } from '../lambdas/core/deadlines';
import { CRUISE_WINDOW_TASK_MARGIN_SECONDS, cruiseWindowTimeoutSeconds } from '../lambdas/core/polling';
import type { Stage } from '../lambdas/core/status';

export const RUN_DEFINITION_PATH = fileURLToPath(new URL('./run.asl.json', import.meta.url));
export const CRUISE_DEFINITION_PATH = fileURLToPath(new URL('./cruise.asl.json', import.meta.url));

/** The Resource of a Task that runs a child execution to its end (Step Functions' Run a Job pattern, JSON output). */
export const START_EXECUTION_SYNC = 'arn:aws:states:::states:startExecution.sync:2';
/** The run's Task that runs a cruise window. */
export const CRUISE_WINDOW_STATE = 'CruiseWindow';
/** The placeholder the CruiseWindow Task's StateMachineArn holds: `${CruiseStateMachineArn}`. */
export const CRUISE_STATE_MACHINE_SUBSTITUTION = 'CruiseStateMachineArn';

/**
 * Errors every Task retries besides our own retryable ones: Lambda service errors, a crashed or
 * timed-out invocation (`Lambda.Unknown`: out of memory, runtime exit, the function's own timeout) and
 * the Task's timeout. Every stage is idempotent (architecture §4), so running one again is always safe.
 */
export const PLATFORM_RETRYABLE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.Unknown',
  'States.Timeout',
] as const;

/** The name of the placeholder a stage's Task Resource holds: `AdmitFunctionArn` for `${AdmitFunctionArn}`. */
export function stageFunctionSubstitution(stage: Stage): string {
  return `${stage}FunctionArn`;
}

/** The Resource every Task of `stage` holds in run.asl.json. */
export function stageFunctionPlaceholder(stage: Stage): string {
  return `\${${stageFunctionSubstitution(stage)}}`;
}

export interface RunDefinitionParams {
  /** The function each stage's Tasks invoke; without it the placeholders stay (for definitionSubstitutions). */
  stageFunctionArn?: (stage: Stage) => string;
  /** The cruise window state machine's ARN; without it the placeholder stays. */
  cruiseStateMachineArn?: string;
  /** The deployment's phase limits: the machine's TimeoutSeconds is stateMachineTimeoutSeconds of them (architecture §6). */
  limits: MachineLimits;
}

/** One Retry entry of a Task. */
export interface AslRetrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  MaxAttempts?: number;
  BackoffRate?: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: 'FULL' | 'NONE';
}

/** A state of the definition, loosely typed: enough for rendering and for the structural tests. */
export interface AslState {
  Type: string;
  Next?: string;
  Default?: string;
  Resource?: string;
  Parameters?: Record<string, unknown>;
  InputPath?: string;
  OutputPath?: string;
  ResultSelector?: Record<string, unknown>;
  TimeoutSeconds?: number;
  /** null discards the Task's answer; absent means `$` (it replaces the state). */
  ResultPath?: string | null;
  SecondsPath?: string;
  Retry?: AslRetrier[];
  Catch?: Array<{ ErrorEquals: string[]; Next: string; ResultPath?: string }>;
  Choices?: Array<{ Next: string }>;
}
export interface AslDefinition {
  Comment?: string;
  StartAt: string;
  TimeoutSeconds: number;
  States: Record<string, AslState>;
}

export function readRunDefinition(): AslDefinition {
  return JSON.parse(readFileSync(RUN_DEFINITION_PATH, 'utf8')) as AslDefinition;
}

export function readCruiseDefinition(): AslDefinition {
  return JSON.parse(readFileSync(CRUISE_DEFINITION_PATH, 'utf8')) as AslDefinition;
}

/** The stage a Task invokes, or undefined for a Task that is no stage's (the CruiseWindow). */
export function taskStage(state: AslState): Stage | undefined {
  return state.Type === 'Task' ? (state.Parameters?.stage as Stage | undefined) : undefined;
}

/** The Task timeout of the run's CruiseWindow: the window's own TimeoutSeconds comes first. */
export function cruiseWindowTaskTimeoutSeconds(limits: MachineLimits): number {
  return cruiseWindowTimeoutSeconds(limits) + CRUISE_WINDOW_TASK_MARGIN_SECONDS;
}

function bindStageFunctions(definition: AslDefinition, arnOf: ((stage: Stage) => string) | undefined): AslDefinition {
  if (!arnOf) return definition;
  for (const state of Object.values(definition.States)) {
    const stage = taskStage(state);
    if (stage) state.Resource = arnOf(stage);
  }
  return definition;
}

export function renderRunDefinition(params: RunDefinitionParams): AslDefinition {
  const definition = readRunDefinition();
  definition.TimeoutSeconds = stateMachineTimeoutSeconds(params.limits);
  const window = definition.States[CRUISE_WINDOW_STATE]!;
  window.TimeoutSeconds = cruiseWindowTaskTimeoutSeconds(params.limits);
  if (params.cruiseStateMachineArn) window.Parameters = { ...window.Parameters, StateMachineArn: params.cruiseStateMachineArn };
  return bindStageFunctions(definition, params.stageFunctionArn);
}

/** The cruise window's definition: its TimeoutSeconds of these limits, its Watch Task bound like the run's. */
export function renderCruiseDefinition(params: Omit<RunDefinitionParams, 'cruiseStateMachineArn'>): AslDefinition {
  const definition = readCruiseDefinition();
  definition.TimeoutSeconds = cruiseWindowTimeoutSeconds(params.limits);
  return bindStageFunctions(definition, params.stageFunctionArn);
}
