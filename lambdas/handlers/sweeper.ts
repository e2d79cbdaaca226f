/**
 * The sweeper Lambda, target of an EventBridge schedule (every few minutes): starts runs the API
 * recorded but never started, stops executions whose abort outlived its grace, resolves stale
 * notification claims and deletes what finished runs left on the clusters (lambdas/stages/sweep.ts).
 * A sweep with errors throws after doing everything else, so the invocation shows as failed. Its
 * lines carry stage `Sweeper` and the run each is about (NO_RUN for the sweep's own).
 */
import type { SweeperExecutions } from '../core/executions';
import { sweep, SweepIncomplete, type SweepOptions, type SweepResult } from '../stages/sweep';
import { invoke } from '../telemetry/invocation';
import { NO_RUN, stageLogOn } from '../telemetry/log-sinks';
import { activityMetrics } from '../telemetry/run-metrics';
import { observeStages } from '../telemetry/stage-activity';
import { createTelemetry, type Telemetry } from '../telemetry/telemetry';
import { createClusterFunctionDeps, type InvocationContext, type StageDepsWithoutLog } from './cluster-deps';
import { createSweeperExecutions } from './execution-deps';
import { lazyHandler } from './lazy-handler';
import { createLedgerDeps } from './ledger-deps';

export interface SweeperHandlerDeps {
  telemetry: Telemetry;
  stageDeps(context: InvocationContext): StageDepsWithoutLog;
  executions: SweeperExecutions;
  /** Default: sweep.ts's defaults (tests shorten the graces). */
  options?: Partial<SweepOptions>;
}

export const SWEEPER_STAGE = 'Sweeper';

export function makeHandler(deps: SweeperHandlerDeps): (event: unknown, context: InvocationContext) => Promise<SweepResult> {
  const log = stageLogOn(deps.telemetry.logger);
  return async (_event, context) => {
    const base = deps.stageDeps(context);
    const { ledger, activity } = observeStages(base.ledger);
    return invoke(deps.telemetry, context, {
      keys: { runId: NO_RUN, stage: SWEEPER_STAGE },
      measured: true,
      work: async () => {
        const result = await sweep({ ...base, ledger, log, executions: deps.executions }, deps.options);
        if (result.errors.length > 0) throw new SweepIncomplete(result.errors);
        return result;
      },
      metrics: () => activityMetrics(activity),
    });
  };
}

/** The deployed handler: production deps on the first invocation. */
export const handler = lazyHandler(() => {
  const telemetry = createTelemetry();
  const cluster = createClusterFunctionDeps(telemetry.tracer, createLedgerDeps(telemetry.tracer));
  const executions = createSweeperExecutions(telemetry.tracer);
  return makeHandler({ telemetry, stageDeps: (context) => cluster.stageDeps(context), executions });
});
