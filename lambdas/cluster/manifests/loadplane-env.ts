/** The LOADPLANE_* variables every pod gets, so scripts know where they run. */
import type { RunnerPlan } from '../plan';

export function loadplaneEnv(plan: RunnerPlan, index: number): Record<string, string> {
  return {
    LOADPLANE_RUN_ID: plan.runId,
    LOADPLANE_RUNNER_INDEX: String(index),
    LOADPLANE_RUNNER_COUNT: String(plan.parallelism),
  };
}
