/**
 * The objects of each side-effecting stage, and who owns them (owners.ts, architecture §7). Pure: Prepare
 * and Launch hand them to createAll, which creates only what is missing, so a retried stage
 * converges on the same set. createAll creates a stage's Jobs before the objects they own, whatever
 * the order here: an ownerReference needs the Job's uid.
 *
 * Ownership:
 * - k6 Prepare: the script ConfigMap is owned by the initializer Job.
 * - Launch: each k6 runner Service by its runner Job; the script ConfigMap is adopted by every runner
 *   Job (launchAdoptions), so it lives until the last of them is gone, not just the initializer.
 * - Gatling has no initializer: its script ConfigMap is made at Prepare, like k6's (architecture §3.2: a
 *   script the API server refuses fails the run before any runner exists, and both engines take the
 *   same Launch path), and is owned from Launch on. It is the one object without an owner between
 *   the two stages; it carries the run's labels, so Cleanup, the reaper and the sweeper still find it.
 */
import type { V1ConfigMap, V1Job, V1Service } from '@kubernetes/client-node';
import { objectName, Role } from '../../core/runner-contract';
import { Engine } from '../../core/status';
import type { RunnerPlan } from '../plan';
import { gatlingRunnerJob } from './gatling-runners';
import { k6InitializerJob } from './k6-initializer';
import { k6RunnerJob, k6RunnerService } from './k6-runners';
import { scriptConfigMap } from './script-configmap';

/** Prepare: the script ConfigMap (inline scripts only; k6: owned by the initializer), and the k6 initializer. */
export function prepareManifests(plan: RunnerPlan): (V1ConfigMap | V1Job)[] {
  if (plan.engine !== Engine.k6) {
    const configMap = scriptConfigMap(plan);
    return configMap ? [configMap] : [];
  }
  const initializer = k6InitializerJob(plan);
  const configMap = scriptConfigMap(plan, [initializer.metadata!.name!]);
  return [...(configMap ? [configMap] : []), initializer];
}

/** Launch: per runner, (k6) its Service, owned by its Job, and its Job. */
export function launchManifests(plan: RunnerPlan): (V1Job | V1Service)[] {
  const indexes = runnerIndexes(plan);
  if (plan.engine === Engine.gatling) return indexes.map((i) => gatlingRunnerJob(plan, i));
  return indexes.flatMap((i) => [k6RunnerService(plan, i), k6RunnerJob(plan, i)]);
}

/**
 * Launch: objects Prepare made that the runner Jobs must own as well — the script ConfigMap (inline
 * scripts only), owned by every runner Job. createAll adds the owners it lacks, or creates it with
 * them if it is gone (k6: its initializer was deleted, and the ConfigMap with it).
 */
export function launchAdoptions(plan: RunnerPlan): V1ConfigMap[] {
  const configMap = scriptConfigMap(
    plan,
    runnerIndexes(plan).map((i) => objectName(plan.runId, Role.runner, i)),
  );
  return configMap ? [configMap] : [];
}

function runnerIndexes(plan: RunnerPlan): number[] {
  return Array.from({ length: plan.parallelism }, (_, i) => i);
}
