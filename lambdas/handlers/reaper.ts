/**
 * The reaper Lambda, target of the EventBridge rule on "Step Functions Execution Status Change"
 * (FAILED, TIMED_OUT, ABORTED) for the run state machine: finishes runs whose execution ended
 * without its own fail path (lambdas/stages/reap.ts). Its lines carry stage `Reaper` and the run id
 * the execution's input names (NO_RUN when it names none); the Decide and Notify it runs count in
 * the run metrics like the execution's own.
 */
import { executionInputSchema, runIdentity } from '../core/execution-input';
import { reap, type ExecutionInputReader, type ExecutionStatusChange, type ReapResult } from '../stages/reap';
import { invoke } from '../telemetry/invocation';
import { NO_RUN, stageLogOn } from '../telemetry/log-sinks';
import { activityMetrics } from '../telemetry/run-metrics';
import { observeStages } from '../telemetry/stage-activity';
import { createTelemetry, type Telemetry } from '../telemetry/telemetry';
import { createClusterFunctionDeps, type InvocationContext, type StageDepsWithoutLog } from './cluster-deps';
import { createExecutionInputReader } from './execution-deps';
import { lazyHandler } from './lazy-handler';
import { createLedgerDeps } from './ledger-deps';

export interface ExecutionStatusChangeEvent {
  'detail-type': string;
  detail: ExecutionStatusChange;
}

export interface ReaperHandlerDeps {
  telemetry: Telemetry;
  stageDeps(context: InvocationContext): StageDepsWithoutLog;
  /** Reads an execution's input back, for events that left it out. */
  executionInput?: ExecutionInputReader;
}

export const REAPER_STAGE = 'Reaper';

/** The run the event's execution input names, if it names one (reap.ts decides what to do with it). */
function runIdOf(change: ExecutionStatusChange | undefined): string {
  try {
    const parsed = executionInputSchema.safeParse(JSON.parse(change?.input ?? 'null'));
    return parsed.success ? runIdentity(parsed.data, { arn: change!.executionArn, name: change!.name }).runId : NO_RUN;
  } catch {
    return NO_RUN;
  }
}

export function makeHandler(deps: ReaperHandlerDeps): (event: ExecutionStatusChangeEvent, context: InvocationContext) => Promise<ReapResult> {
  const log = stageLogOn(deps.telemetry.logger);
  return async (event, context) => {
    const base = deps.stageDeps(context);
    const { ledger, activity } = observeStages(base.ledger);
    const keys = { runId: runIdOf(event?.detail), stage: REAPER_STAGE };
    return invoke(deps.telemetry, context, {
      keys,
      measured: true,
      work: () => reap({ ...base, ledger, log, ...(deps.executionInput ? { executionInput: deps.executionInput } : {}) }, event.detail),
      metrics: () => activityMetrics(activity),
    });
  };
}

/** The deployed handler: production deps on the first invocation. */
export const handler = lazyHandler(() => {
  const telemetry = createTelemetry();
  const ledgerDeps = createLedgerDeps(telemetry.tracer);
  const cluster = createClusterFunctionDeps(telemetry.tracer, ledgerDeps);
  const executionInput = createExecutionInputReader(telemetry.tracer);
  return makeHandler({ telemetry, stageDeps: (context) => cluster.stageDeps(context), executionInput });
});
