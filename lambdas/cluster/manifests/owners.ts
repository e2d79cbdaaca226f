/**
 * ownerReferences of the objects a stage makes (architecture §7: "ConfigMaps are owned by a
 * Job of the run, so everything stops and disappears even if the control plane never comes back").
 * Kubernetes' garbage collector deletes a dependent once ALL its owners are gone, so an object several
 * Jobs use (the script ConfigMap) names every one of them and lives as long as the last.
 *
 * A reference needs the owner's uid, which only the API server knows once the Job exists. The pure
 * builders name the owner Job and leave the uid empty; createAll (stages/create-all.ts) creates the
 * Jobs first and fills the uids in with resolveOwners before it sends the dependents.
 */
import type { V1ConfigMap, V1Job, V1OwnerReference } from '@kubernetes/client-node';

/** The uid of an owner Job the builders name but the API server has not assigned yet. */
export const UNRESOLVED_UID = '';

/**
 * A reference to a Job of the run. Not the controller (Jobs control their pods, nothing else), and
 * blockOwnerDeletion false: deleting a Job must never wait on what it owns.
 */
export function jobOwnerReference(name: string, uid: string = UNRESOLVED_UID): V1OwnerReference {
  return { apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: false, blockOwnerDeletion: false };
}

type Ownable = V1ConfigMap | V1Job;

/** The Jobs (by name) that must own the object: the Job owner references the builders set. */
export function ownerJobNames(obj: Ownable): string[] {
  return (obj.metadata?.ownerReferences ?? []).filter((r) => r.kind === 'Job').map((r) => r.name);
}

/**
 * A copy of the object whose unresolved Job owner references carry the uid `uidOf` gives. An owner
 * it does not know is a bug of the caller (the Job was not created first), so it throws.
 */
export function resolveOwners<T extends Ownable>(obj: T, uidOf: (jobName: string) => string | undefined): T {
  const refs = obj.metadata?.ownerReferences;
  if (!refs || refs.every((r) => r.uid !== UNRESOLVED_UID)) return obj;
  const resolved = refs.map((r) => {
    if (r.uid !== UNRESOLVED_UID) return r;
    const uid = r.kind === 'Job' ? uidOf(r.name) : undefined;
    if (!uid) throw new Error(`${obj.kind} ${obj.metadata?.name}: owner ${r.kind} ${r.name} has no uid (it must be created first)`);
    return { ...r, uid };
  });
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: resolved } };
}
