/**
 * Labels and selectors of loadplane objects (runner-contract.ts names them). User labels come first so
 * that loadplane's own labels always win: a spec cannot detach an object from its run.
 */
import { Labels, MANAGED_BY, type Role } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';

/** The labels identifying a run's objects; the only selector Cleanup and Watch need. */
export function runSelector(runId: string): Record<string, string> {
  return { [Labels.managedBy]: MANAGED_BY, [Labels.runId]: runId };
}

/** `loadplane.io/run-id=<runId>`, the label selector of every list call. */
export function runLabelSelector(runId: string): string {
  return `${Labels.runId}=${runId}`;
}

/** Labels of one object of the run: user labels, then managed-by, run-id, role, engine and runner index. */
export function objectLabels(plan: RunnerPlan, role: Role, index?: number): Record<string, string> {
  return {
    ...plan.podLabels,
    ...runSelector(plan.runId),
    [Labels.role]: role,
    [Labels.engine]: plan.engine,
    ...(index === undefined ? {} : { [Labels.runnerIndex]: String(index) }),
  };
}
