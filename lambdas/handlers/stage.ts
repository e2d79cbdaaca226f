/**
 * The stage Lambda: every Task of run.asl.json invokes it with the Task's Parameters; it routes to
 * the stage the payload names (lambdas/stages/dispatch.ts). Around the stage: the invocation's
 * telemetry (lambdas/telemetry/invocation.ts), with the run id and stage read from the payload, and
 * the run metrics derived from what the stage recorded in the ledger (stage-activity.ts).
 */
import { Stage } from '../core/status';
import { dispatchStage } from '../stages/dispatch';
import { invoke, type InvocationKeys } from '../telemetry/invocation';
import { NO_RUN, stageLogOn } from '../telemetry/log-sinks';
import { activityMetrics } from '../telemetry/run-metrics';
import { observeStages } from '../telemetry/stage-activity';
import { createTelemetry, type Telemetry } from '../telemetry/telemetry';
import { createClusterFunctionDeps, type InvocationContext, type StageDepsWithoutLog } from './cluster-deps';
import { lazyHandler } from './lazy-handler';
import { createLedgerDeps } from './ledger-deps';

export type { InvocationContext } from './cluster-deps';

export interface StageHandlerDeps {
  telemetry: Telemetry;
  /** The stages' deps for one invocation (its log is the telemetry's Logger). */
  stageDeps(context: InvocationContext): StageDepsWithoutLog;
}

const STAGES = new Set<string>(Object.values(Stage));

/** The run id and stage a payload names, as far as it names them (the stage checks the payload itself). */
export function payloadKeys(payload: unknown): InvocationKeys & { known: boolean } {
  const p = (payload ?? {}) as { stage?: unknown; runId?: unknown };
  const known = typeof p.stage === 'string' && STAGES.has(p.stage);
  return { runId: typeof p.runId === 'string' && p.runId !== '' ? p.runId : NO_RUN, stage: known ? (p.stage as string) : '(unknown)', known };
}

export function makeHandler(deps: StageHandlerDeps): (event: unknown, context: InvocationContext) => Promise<unknown> {
  const log = stageLogOn(deps.telemetry.logger);
  return async (event, context) => {
    const { known, ...keys } = payloadKeys(event);
    const base = deps.stageDeps(context);
    const { ledger, activity } = observeStages(base.ledger);
    return invoke(deps.telemetry, context, {
      keys,
      measured: known,
      work: async () => {
        const result = await dispatchStage({ ...base, ledger, log }, event);
        // Admit's payload names no run: its answer does (the metrics' metadata and later lines carry it).
        const runId = (result as { runId?: unknown } | undefined)?.runId;
        if (keys.runId === NO_RUN && typeof runId === 'string') {
          keys.runId = runId;
          deps.telemetry.logger.appendKeys({ runId });
        }
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
  return makeHandler({ telemetry, stageDeps: (context) => cluster.stageDeps(context) });
});
