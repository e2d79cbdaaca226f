/**
 * Ownership of a run's objects (owners.ts, architecture §7). Each engine's adapter builds the objects of
 * Prepare and Launch (lambdas/engines); createAll creates only what is missing, so a retried stage
 * converges on the same set, and creates a stage's Jobs before the objects they own (an
 * ownerReference needs the Job's uid).
 *
 * - k6 Prepare: the script ConfigMap is owned by the initializer Job.
 * - Launch: the script ConfigMap is adopted by every runner Job (launchAdoptions), so it lives until the
 *   last of them is gone, not just the initializer.
 * - Gatling has no initializer: its script ConfigMap is made at Prepare, like k6's (architecture §3.2: a
 *   script the API server refuses fails the run before any runner exists, and both engines take the
 *   same Launch path), and is owned from Launch on. It is the one object without an owner between
 *   the two stages; it carries the run's labels, so Cleanup, the reaper and the sweeper still find it.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { objectName, Role } from '../../core/runner-contract';
import { SetupTeardown } from '../../core/status';
import type { RunnerPlan } from '../plan';
import { scriptConfigMap } from './script-configmap';

/**
 * Launch: objects Prepare made that the runner Jobs must own as well — the script ConfigMap (inline
 * scripts only), owned by every runner Job and by k6's coordinator (it outlives the runners, for
 * teardown()). createAll adds the owners it lacks, or creates it with
 * them if it is gone (k6: its initializer was deleted, and the ConfigMap with it).
 */
export function launchAdoptions(plan: RunnerPlan): V1ConfigMap[] {
  const configMap = scriptConfigMap(
    plan,
    [
      ...Array.from({ length: plan.parallelism }, (_, i) => objectName(plan.runId, Role.runner, i)),
      ...(plan.setupTeardown === SetupTeardown.perRun ? [objectName(plan.runId, Role.coordinator)] : []),
    ],
  );
  return configMap ? [configMap] : [];
}
