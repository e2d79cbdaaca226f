/**
 * Ownership of a run's objects (owners.ts, architecture §7). Each engine's adapter builds the objects of
 * Prepare and Launch (lambdas/engines); the stage adds the run's anchor, which owns all of them and
 * is owned by every Job of the run. createAll creates only what is missing, so a retried stage
 * converges on the same set: the anchor first (the others need its uid), then the rest (what the
 * pods mount), then the Jobs, and last the stage's Jobs as owners of the anchor.
 *
 * - Prepare makes the anchor, owned by the initializer Job (k6) or, for Gatling, by nothing until
 *   Launch: the one moment the run has an object without an owner. It carries the run's labels, so
 *   Cleanup, the reaper and the sweeper still find it.
 * - Launch adopts it: every runner Job and k6's coordinator become its owners, so it (and the script
 *   ConfigMap it owns) lives until the last of them is gone, not just the initializer.
 */
import type { V1ConfigMap, V1Job } from '@kubernetes/client-node';
import type { RunnerPlan } from '../plan';
import type { CreatableObject } from '../cluster-client';
import { runAnchor } from './anchor';
import { scriptConfigMap } from './script-configmap';

/** The names of the Jobs among a stage's objects. */
function jobNames(objects: readonly CreatableObject[]): string[] {
  return objects.filter((o) => o.kind === 'Job').map((o) => o.metadata!.name!);
}

/** Prepare: the run's anchor (with the engine's `anchorData`), owned by the stage's Jobs, then the engine's objects. */
export function prepareObjects(plan: RunnerPlan, engineObjects: readonly CreatableObject[], anchorData?: Record<string, string>): CreatableObject[] {
  return [runAnchor(plan, jobNames(engineObjects), anchorData), ...engineObjects];
}

/**
 * Launch: what Prepare made that must be there, owned as it should be — the anchor, which the stage's
 * Jobs (every runner and k6's coordinator, which outlives the runners for teardown()) must own as
 * well, and the script ConfigMap (inline scripts only). createAll adds the owners the anchor lacks, or
 * makes either again if it is gone (its initializer was deleted, and the anchor with it).
 */
export function launchAdoptions(plan: RunnerPlan, launchJobs: readonly V1Job[], anchorData?: Record<string, string>): V1ConfigMap[] {
  const configMap = scriptConfigMap(plan);
  return [runAnchor(plan, jobNames(launchJobs), anchorData), ...(configMap ? [configMap] : [])];
}
