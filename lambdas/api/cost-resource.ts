/**
 * A run's cost for the API's answers (cost-schema.ts has its shape): the control plane's recorded
 * counts priced at AWS's list prices, and the runners' estimate at the deployment's prices. Read
 * beside the run (one GetItem of its cost item; a listing's page, a GetItem per run); a cost item that
 * cannot be read leaves the cost out rather than the run.
 */
import type { DeploymentConfig } from '../core/config';
import type { RunCost } from '../core/run-cost';
import type { RecordedCost, RunSummary, RunView } from '../ledger/ledger';
import { listedRunCost, runCostOf } from '../stages/run-cost-of';
import type { ApiDeps } from './api-deps';

/** The run's cost, or none when its cost item cannot be read (logged by the error's name). */
export async function readRunCost(deps: ApiDeps, view: RunView): Promise<RunCost | undefined> {
  let recorded: RecordedCost | undefined;
  try {
    recorded = await deps.ledger.getRunCost(view.run.runId);
  } catch (err) {
    deps.log({ message: "the run's cost could not be read; answered without `cost`", runId: view.run.runId, error: (err as Error)?.name ?? typeof err });
    return undefined;
  }
  return runCostOf(view, recorded, deps.config, deps.ledger.now());
}

/** A listing's runs' total cost by run id (a GetItem per run); empty when the cost items cannot be read. */
export async function readListedCosts(deps: Pick<ApiDeps, 'ledger' | 'config' | 'log'>, runs: RunSummary[]): Promise<Map<string, number>> {
  let recorded: Map<string, RecordedCost>;
  try {
    recorded = await deps.ledger.getRunCosts(runs.map((r) => r.runId));
  } catch (err) {
    deps.log({ message: "the runs' costs could not be read; listed without `costUsd`", error: (err as Error)?.name ?? typeof err });
    return new Map();
  }
  return new Map(runs.map((r) => [r.runId, listedRunCost(r, recorded.get(r.runId), deps.config as DeploymentConfig).usd]));
}
