/**
 * The objects of each side-effecting stage, in creation order. Pure: Prepare and Launch create them
 * with createIfAbsent, so a retried stage converges on the same set.
 */
import type { V1ConfigMap, V1Job, V1Service } from '@kubernetes/client-node';
import { Engine } from '../../core/status';
import type { RunnerPlan } from '../plan';
import { gatlingRunnerJob } from './gatling-runners';
import { k6InitializerJob } from './k6-initializer';
import { k6RunnerJob, k6RunnerService } from './k6-runners';
import { scriptConfigMap } from './script-configmap';

/** Prepare: the script ConfigMap (inline scripts only), then the k6 initializer. */
export function prepareManifests(plan: RunnerPlan): (V1ConfigMap | V1Job)[] {
  const configMap = scriptConfigMap(plan);
  return [...(configMap ? [configMap] : []), ...(plan.engine === Engine.k6 ? [k6InitializerJob(plan)] : [])];
}

/** Launch: per runner, its Service (k6) before its Job, so the Service exists when the pod is ready. */
export function launchManifests(plan: RunnerPlan): (V1Job | V1Service)[] {
  const indexes = Array.from({ length: plan.parallelism }, (_, i) => i);
  if (plan.engine === Engine.gatling) return indexes.map((i) => gatlingRunnerJob(plan, i));
  return indexes.flatMap((i) => [k6RunnerService(plan, i), k6RunnerJob(plan, i)]);
}
