/**
 * The ConfigMap holding an inline script; a spec that references an existing ConfigMap gets none (it
 * is the user's: never owned, never deleted by loadplane). Ours is owned by the run's anchor
 * (owners.ts), which the run's Jobs own, so Kubernetes removes it with the last of them.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { objectName, Role } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { objectLabels } from './labels';
import { anchorOwnerReference } from './owners';

export function scriptConfigMap(plan: RunnerPlan): V1ConfigMap | undefined {
  if (plan.script.kind !== 'inline') return undefined;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: objectName(plan.runId, Role.script),
      namespace: plan.namespace,
      labels: objectLabels(plan, Role.script),
      ownerReferences: [anchorOwnerReference(plan.runId)],
    },
    data: { [plan.script.file]: plan.script.content },
  };
}

/** Name of the ConfigMap the pods mount: ours for an inline script, the user's otherwise. */
export function scriptConfigMapName(plan: RunnerPlan): string {
  return plan.script.kind === 'inline' ? objectName(plan.runId, Role.script) : plan.script.name;
}
