/** The ConfigMap holding an inline script; a spec that references an existing ConfigMap gets none. */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { objectName, Role } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { objectLabels } from './labels';

export function scriptConfigMap(plan: RunnerPlan): V1ConfigMap | undefined {
  if (plan.script.kind !== 'inline') return undefined;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: objectName(plan.runId, Role.script),
      namespace: plan.namespace,
      labels: objectLabels(plan, Role.script),
    },
    data: { [plan.script.file]: plan.script.content },
  };
}

/** Name of the ConfigMap the pods mount: ours for an inline script, the user's otherwise. */
export function scriptConfigMapName(plan: RunnerPlan): string {
  return plan.script.kind === 'inline' ? objectName(plan.runId, Role.script) : plan.script.name;
}
