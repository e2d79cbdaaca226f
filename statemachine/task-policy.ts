/**
 * Every Task's TimeoutSeconds and Retry, from the one stage timing table (lambdas/core/stage-timing.ts,
 * architecture §6) and the exported error names: run.asl.json and cruise.asl.json are kept equal to
 * what this renders (a test checks it; `npm run asl:sync` rewrites them), so nobody copies timeouts or
 * error lists by hand.
 */
import { RETRYABLE_ERROR_NAMES } from '../lambdas/core/errors';
import { BUSY_ERROR_NAMES, STAGE_TIMEOUT_SECONDS, TRANSIENT_RETRY, busyRetry } from '../lambdas/core/stage-timing';
import { DEFAULT_CONFIG } from '../lambdas/core/config';
import { Stage } from '../lambdas/core/status';
import {
  cruiseWindowTaskTimeoutSeconds,
  PLATFORM_RETRYABLE_ERRORS,
  stageFunctionPlaceholder,
  START_EXECUTION_SYNC,
  taskStage,
  type AslDefinition,
  type AslRetrier,
} from './run-definition';

const busy: readonly string[] = BUSY_ERROR_NAMES;

/**
 * A stage Task's Retry: the busy entry first (Step Functions takes the first entry that matches), then
 * the transient one.
 */
export function taskRetry(stage: Stage): AslRetrier[] {
  return [
    { ErrorEquals: [...BUSY_ERROR_NAMES], ...busyRetry(stage) },
    { ErrorEquals: [...RETRYABLE_ERROR_NAMES.filter((n) => !busy.includes(n)), ...PLATFORM_RETRYABLE_ERRORS], ...TRANSIENT_RETRY },
  ];
}

/**
 * The CruiseWindow Task's Retry: any failure to start or finish a window (a throttled StartExecution, a
 * window whose poll failed for good or that timed out) is tried twice more with a fresh window, whose
 * polls again have their own Retry budgets; then the Catch takes it, as it takes Watch's failures.
 */
export const CRUISE_WINDOW_RETRY: AslRetrier = { ErrorEquals: ['States.ALL'], IntervalSeconds: 2, MaxAttempts: 2, BackoffRate: 2, JitterStrategy: 'FULL' };

/**
 * The definition with every stage Task's Resource (its stage's function), TimeoutSeconds and Retry set
 * from the table, and the CruiseWindow Task's timeout (of the default limits: renderRunDefinition sets
 * the deployment's) and Retry (a copy).
 */
export function withStageTiming(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  for (const state of Object.values(copy.States)) {
    if (state.Type !== 'Task') continue;
    const stage = taskStage(state);
    if (stage === undefined) {
      if (state.Resource !== START_EXECUTION_SYNC) throw new Error(`a Task that is no stage's must run a child execution (${START_EXECUTION_SYNC})`);
      state.TimeoutSeconds = cruiseWindowTaskTimeoutSeconds(DEFAULT_CONFIG);
      state.Retry = [CRUISE_WINDOW_RETRY];
      continue;
    }
    state.Resource = stageFunctionPlaceholder(stage);
    state.TimeoutSeconds = STAGE_TIMEOUT_SECONDS[stage];
    state.Retry = taskRetry(stage);
  }
  return copy;
}
