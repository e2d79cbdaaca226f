/**
 * What k6 inspect says of the script's setup() and teardown() (its consolidated options: the script's
 * `options`, then the user's arguments): whether k6 would skip them (`noSetup`, `noTeardown`, e.g. from
 * `--no-setup`) and how long each may take (`setupTimeout`, `teardownTimeout`; k6's default 60 s,
 * internal/cmd/config.go applyDefault). Once per run (coordinator.ts), Start waits for setup() and
 * Cleanup for teardown() within their own timeouts, so a script that allows them longer is refused.
 */
import { parseK6Duration } from '../../core/deadlines';
import { formatDuration } from '../../core/duration';
import { SETUP_BUDGET_SECONDS, TEARDOWN_BUDGET_SECONDS } from '../../core/stage-timing';
import type { K6ExecutionRequirements } from './inspect-output';

/** k6's default setupTimeout and teardownTimeout. */
export const K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS = 60;

export interface K6LifecycleOptions {
  setupTimeoutSeconds: number;
  teardownTimeoutSeconds: number;
  noSetup: boolean;
  noTeardown: boolean;
}

export function k6LifecycleOptions(requirements: K6ExecutionRequirements): K6LifecycleOptions {
  return {
    setupTimeoutSeconds: timeoutOf(requirements.setupTimeout),
    teardownTimeoutSeconds: timeoutOf(requirements.teardownTimeout),
    noSetup: requirements.noSetup === true,
    noTeardown: requirements.noTeardown === true,
  };
}

/** Why setup() / teardown() cannot run once per run for this script, or undefined. */
export function k6LifecycleProblem(options: K6LifecycleOptions): string | undefined {
  const problems = [
    ...(!options.noSetup && options.setupTimeoutSeconds > SETUP_BUDGET_SECONDS
      ? [`setupTimeout ${formatDuration(options.setupTimeoutSeconds)} is longer than the ${formatDuration(SETUP_BUDGET_SECONDS)} Start can wait for setup()`]
      : []),
    ...(!options.noTeardown && options.teardownTimeoutSeconds > TEARDOWN_BUDGET_SECONDS
      ? [
          `teardownTimeout ${formatDuration(options.teardownTimeoutSeconds)} is longer than the ${formatDuration(TEARDOWN_BUDGET_SECONDS)} Cleanup can wait for teardown()`,
        ]
      : []),
  ];
  if (problems.length === 0) return undefined;
  return `prepare: setup() and teardown() run once per run (setupTeardown perRun): ${problems.join('; ')}; lower it in the script's options, or set setupTeardown: perRunner to run them in each runner`;
}

/** A Go duration as k6 prints it in inspect (`1m30s`), or a number of ms; absent or null: k6's default. */
function timeoutOf(value: unknown): number {
  if (typeof value === 'string') return parseK6Duration(value) ?? K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS;
  if (typeof value === 'number' && Number.isFinite(value)) return value / 1000;
  return K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS;
}
