/**
 * Every Task's TimeoutSeconds and Retry, from the one stage timing table (lambdas/core/stage-timing.ts,
 * architecture §6) and the exported error names: run.asl.json is kept equal to what this renders (a test
 * checks it; `npm run asl:sync` rewrites it), so nobody copies timeouts or error lists by hand.
 */
import { RETRYABLE_ERROR_NAMES } from '../lambdas/core/errors';
import { BUSY_ERROR_NAMES, STAGE_TIMEOUT_SECONDS, TRANSIENT_RETRY, busyRetry } from '../lambdas/core/stage-timing';
import { DEFAULT_CONFIG } from '../lambdas/core/config';
import { Stage } from '../lambdas/core/status';
import { PLATFORM_RETRYABLE_ERRORS, pollLaterRetrier, stageFunctionPlaceholder, type AslDefinition, type AslRetrier } from './run-definition';

const busy: readonly string[] = BUSY_ERROR_NAMES;

/**
 * A Task's Retry: Watch's PollLater first (polling, not failing: lambdas/core/polling.ts), then the busy
 * entry (Step Functions takes the first entry that matches), then the transient one. run.asl.json holds
 * the default limits' PollLater entry; renderRunDefinition sets the deployment's.
 */
export function taskRetry(stage: Stage): AslRetrier[] {
  return [
    ...(stage === Stage.Watch ? [pollLaterRetrier(DEFAULT_CONFIG)] : []),
    { ErrorEquals: [...BUSY_ERROR_NAMES], ...busyRetry(stage) },
    { ErrorEquals: [...RETRYABLE_ERROR_NAMES.filter((n) => !busy.includes(n)), ...PLATFORM_RETRYABLE_ERRORS], ...TRANSIENT_RETRY },
  ];
}

/** The definition with every Task's Resource (its stage's function), TimeoutSeconds and Retry set from the table (a copy). */
export function withStageTiming(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  for (const state of Object.values(copy.States)) {
    if (state.Type !== 'Task') continue;
    const stage = state.Parameters?.stage as Stage;
    state.Resource = stageFunctionPlaceholder(stage);
    state.TimeoutSeconds = STAGE_TIMEOUT_SECONDS[stage];
    state.Retry = taskRetry(stage);
  }
  return copy;
}
