/**
 * A run's cost from what the ledger holds of it: its cost item (ledger/run-cost.ts: the control
 * plane's counts, and the runners' usage once Cleanup recorded it) and, for a run whose runners are
 * still there, their usage so far read off its stages (Launch's start to now). API Gateway requests
 * are the run's own: the POST /runs that created it and an abort (POST /runs/{id}/abort); reads of
 * it (GET) are not counted, since anyone may read a run any number of times.
 */
import type { DeploymentConfig } from '../core/config';
import { NO_COUNTS } from '../core/control-plane-cost';
import { NO_RUNNERS, priceRun, type RunCost, type RunnerUsage } from '../core/run-cost';
import { runnerRequests, type RunnerShape } from '../core/runner-cost';
import { Stage, TriggerKind } from '../core/status';
import type { RecordedCost, RunItem, RunSummary, RunView } from '../ledger/ledger';

/** The runners' usage from Launch's start to `untilMs` (Cleanup's end, or now): none before Launch. */
export function runnerUsageOf(view: Pick<RunView, 'run' | 'stages'>, untilMs: number): RunnerUsage {
  const launched = view.stages[Stage.Launch]?.startedAt;
  if (launched === undefined) return NO_RUNNERS;
  const ended = view.stages[Stage.Cleanup]?.endedAt;
  const seconds = Math.max(0, ((ended === undefined ? untilMs : Date.parse(ended)) - Date.parse(launched)) / 1000);
  const shape = view.run.spec as unknown as RunnerShape;
  const { vcpu, gib } = runnerRequests(shape);
  return { runners: shape.parallelism, seconds, vcpuSeconds: shape.parallelism * vcpu * seconds, gibSeconds: shape.parallelism * gib * seconds };
}

/** API Gateway requests that acted on the run: its submit (a run the API created) and an abort. */
export function apiRequestsOf(run: Pick<RunItem | RunSummary, 'trigger' | 'abortRequestedAt'>): number {
  return (run.trigger.kind === TriggerKind.api ? 1 : 0) + (run.abortRequestedAt ? 1 : 0);
}

/** The run's cost: recorded counts, and the runners' recorded usage, or their usage until `nowMs` while Cleanup has not recorded it. */
export function runCostOf(
  view: Pick<RunView, 'run' | 'stages'>,
  recorded: RecordedCost | undefined,
  config: Pick<DeploymentConfig, 'runnerPrices'>,
  nowMs: number,
): RunCost {
  const counts = { ...(recorded?.counts ?? NO_COUNTS), apiRequests: apiRequestsOf(view.run) };
  return priceRun(counts, recorded?.runners ?? runnerUsageOf(view, nowMs), config.runnerPrices);
}

/** A listed run's cost from its summary and cost item alone (no spec: the runners count once Cleanup recorded them). */
export function listedRunCost(summary: RunSummary, recorded: RecordedCost | undefined, config: Pick<DeploymentConfig, 'runnerPrices'>): RunCost {
  const counts = { ...(recorded?.counts ?? NO_COUNTS), apiRequests: apiRequestsOf(summary) };
  return priceRun(counts, recorded?.runners ?? NO_RUNNERS, config.runnerPrices);
}
