/**
 * The run state machine (run.asl.json) is the one definition used on AWS and locally. It stays
 * plain, valid JSON; this module fills in what differs per deployment: the machine's TimeoutSeconds
 * (the longest run the deployment allows plus its finish phases: stateMachineTimeoutSeconds,
 * architecture §6) and, locally, each Task's `Resource`. Every Task names its stage's own function
 * (`${AdmitFunctionArn}`, …): each stage has a Lambda whose timeout is that Task's TimeoutSeconds, so
 * an invocation is dead before its lease lapses (architecture §6). On AWS the CDK app binds the
 * placeholders with `definitionSubstitutions`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stateMachineTimeoutSeconds, type MachineLimits, type PhaseLimits } from '../lambdas/core/deadlines';
import { cruiseMaxAttempts, cruisePollSeconds } from '../lambdas/core/polling';
import type { Stage } from '../lambdas/core/status';

export const RUN_DEFINITION_PATH = fileURLToPath(new URL('./run.asl.json', import.meta.url));

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

/** The error Watch answers while a test runs on far from its end (lambdas/core/errors.ts, PollLater). */
export const POLL_LATER_ERROR = 'PollLater';

/**
 * The Watch Task's first Retry entry: PollLater is polled again after the deployment's cruise interval,
 * exactly (no backoff, no jitter), as often as the longest run needs. Its interval depends on the
 * deployment's limits, so renderRunDefinition sets it; run.asl.json holds the default limits' values.
 */
export function pollLaterRetrier(limits: PhaseLimits): AslRetrier {
  return { ErrorEquals: [POLL_LATER_ERROR], IntervalSeconds: cruisePollSeconds(limits), MaxAttempts: cruiseMaxAttempts(limits), BackoffRate: 1, JitterStrategy: 'NONE' };
}

export function readRunDefinition(): AslDefinition {
  return JSON.parse(readFileSync(RUN_DEFINITION_PATH, 'utf8')) as AslDefinition;
}

export function renderRunDefinition(params: RunDefinitionParams): AslDefinition {
  const definition = readRunDefinition();
  definition.TimeoutSeconds = stateMachineTimeoutSeconds(params.limits);
  for (const state of Object.values(definition.States)) {
    state.Retry = state.Retry?.map((r) => (r.ErrorEquals.includes(POLL_LATER_ERROR) ? pollLaterRetrier(params.limits) : r));
    if (state.Retry === undefined) delete state.Retry;
  }
  const arnOf = params.stageFunctionArn;
  if (arnOf) {
    for (const state of Object.values(definition.States)) {
      if (state.Type === 'Task') state.Resource = arnOf(state.Parameters?.stage as Stage);
    }
  }
  return definition;
}
