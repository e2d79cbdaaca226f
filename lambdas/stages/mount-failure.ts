/**
 * A pod that waits in ContainerCreating because a volume cannot be mounted: the kubelet's volume
 * manager says why only in Warning `FailedMount` events, never in the pod's status
 * (pkg/kubelet/volumemanager; messages from pkg/volume/configmap). loadplane creates what its pods
 * mount before their Jobs (create-all.ts), so a missing ConfigMap, Secret or key is the spec's or was
 * deleted, and never mounts by waiting longer: the poll stages end the run at once with the event's message
 * instead of at their deadline. Other FailedMount messages (`failed to sync configmap cache: timed
 * out…`, a slow CSI driver) can pass by themselves: they are left to the deadline.
 */
import type { PodFacts } from '../cluster/observe';
import { clusterOfPod, type RunContext } from './run-context';

/** FailedMount messages that say an object or key the pod names does not exist. */
const PERMANENT = [/: (configmap|secret) "[^"]*" not found$/, /: configmap references non-existent config key: /];

/**
 * The FailedMount message of the longest-waiting pod in ContainerCreating, when it is one of the
 * PERMANENT kinds; else undefined. At most one events list per call, none when no pod waits there:
 * every pod of a run mounts the same volumes.
 */
export async function permanentMountFailure(run: RunContext, pods: readonly PodFacts[]): Promise<{ pod: PodFacts; message: string } | undefined> {
  const creating = pods
    .filter((p) => p.phase === 'Pending' && p.reason === 'ContainerCreating' && !p.terminating)
    .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
  const pod = creating[0];
  if (!pod) return undefined;
  const at = clusterOfPod(run, pod);
  const warnings = await at.client.podWarnings(at.namespace, pod.name, 'FailedMount');
  const latest = warnings.filter((w) => w.uid === undefined || w.uid === pod.uid).at(-1);
  if (!latest || !PERMANENT.some((rule) => rule.test(latest.message))) return undefined;
  return { pod, message: latest.message };
}
