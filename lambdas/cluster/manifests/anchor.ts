/**
 * The run's anchor (architecture §7): an empty ConfigMap, `lp-<runId>-anchor`, that every other object
 * of the run names as its owner and that every Job of the run owns (owners.ts). It exists so that
 * deleting one object removes the run from the cluster, including anything the API server creates
 * after Cleanup: Cleanup deletes it last, and Kubernetes' garbage collector deletes every object that
 * names it, also one created after it was gone. It carries the run's labels, so Cleanup, the reaper
 * and the sweeper find it like the run's other objects. Its data is what every pod of the run reads
 * and no pod spec should repeat (the engine's: k6's execution-segment sequence, which grows with N and
 * would make every list of the run's pods grow with N²); it is the same whichever stage makes it.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Labels, Role } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { objectLabels } from './labels';
import { anchorName, jobOwnerReference } from './owners';

/**
 * `ownerJobs`: the names of the Jobs of the stage that makes or adopts it (their uids are filled in
 * once they exist); `data`: the engine's (EngineAdapter.anchorData).
 */
export function runAnchor(plan: RunnerPlan, ownerJobs: readonly string[], data?: Record<string, string>): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: anchorName(plan.runId),
      namespace: plan.namespace,
      labels: objectLabels(plan, Role.anchor),
      ...(ownerJobs.length > 0 ? { ownerReferences: ownerJobs.map((name) => jobOwnerReference(name)) } : {}),
    },
    ...(data && Object.keys(data).length > 0 ? { data: { ...data } } : {}),
  };
}

/** Whether the object is a run's anchor (by its role label). */
export function isAnchor(obj: { kind?: string; metadata?: { labels?: Record<string, string> } }): boolean {
  return obj.kind === 'ConfigMap' && obj.metadata?.labels?.[Labels.role] === Role.anchor;
}
