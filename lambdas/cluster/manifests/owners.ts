/**
 * ownerReferences of a run's objects (architecture §7). Kubernetes' garbage collector deletes a
 * dependent once ALL its owners are gone, and also one that is created, or updated, naming an owner
 * that is already gone. Two rules follow:
 *
 * - Every object of a run but the anchor (a ConfigMap, anchor.ts) is owned by the anchor, from its
 *   create on. Cleanup deletes the anchor last, so whatever the API server creates after it (a create
 *   whose answer the client gave up on, executed late) names an owner that is gone and is collected.
 * - The anchor is owned by every Job of the run, so it lives exactly as long as the last of them:
 *   their `ttlSecondsAfterFinished` still removes everything if the control plane never comes back.
 *
 * The references are not the controller (Jobs control their pods, nothing else) and do not block
 * their owner's deletion: deleting one never waits on the other, so the cycle (Jobs own the anchor,
 * the anchor owns them) never holds a foreground delete (garbagecollector.go unblocks such cycles).
 *
 * A reference needs the owner's uid, which only the API server knows once the owner exists. The pure
 * builders name the owner and leave the uid empty; createAll (stages/create-all.ts) creates the
 * anchor first (without owners: its Jobs come later), then the rest (what the pods mount), then the
 * Jobs, filling the uids in with resolveOwners, and last adds the stage's Jobs as owners of the anchor.
 */
import type { V1ConfigMap, V1Job, V1OwnerReference } from '@kubernetes/client-node';
import { objectName, Role } from '../../core/runner-contract';

/** The uid of an owner the builders name but the API server has not assigned yet. */
export const UNRESOLVED_UID = '';

/** The kinds that own objects of a run: its Jobs (own the anchor) and the anchor (owns the rest). */
export type OwnerKind = 'Job' | 'ConfigMap';

const API_VERSION: Readonly<Record<OwnerKind, string>> = { Job: 'batch/v1', ConfigMap: 'v1' };

function ownerReference(kind: OwnerKind, name: string, uid: string): V1OwnerReference {
  return { apiVersion: API_VERSION[kind], kind, name, uid, controller: false, blockOwnerDeletion: false };
}

/** A reference to a Job of the run (an owner of the anchor). */
export function jobOwnerReference(name: string, uid: string = UNRESOLVED_UID): V1OwnerReference {
  return ownerReference('Job', name, uid);
}

/** The name of the run's anchor ConfigMap, `lp-<runId>-anchor`. */
export function anchorName(runId: string): string {
  return objectName(runId, Role.anchor);
}

/** A reference to the run's anchor: every object of the run but the anchor carries it. */
export function anchorOwnerReference(runId: string, uid: string = UNRESOLVED_UID): V1OwnerReference {
  return ownerReference('ConfigMap', anchorName(runId), uid);
}

type Ownable = V1ConfigMap | V1Job;

/** The owners (kind and name) the builders set on the object. */
export function ownerNames(obj: Ownable): { kind: string; name: string }[] {
  return (obj.metadata?.ownerReferences ?? []).map((r) => ({ kind: r.kind, name: r.name }));
}

/**
 * A copy of the object whose unresolved owner references carry the uid `uidOf` gives. An owner it does
 * not know is a bug of the caller (the owner was not created first), so it throws.
 */
export function resolveOwners<T extends Ownable>(obj: T, uidOf: (kind: string, name: string) => string | undefined): T {
  const refs = obj.metadata?.ownerReferences;
  if (!refs || refs.every((r) => r.uid !== UNRESOLVED_UID)) return obj;
  const resolved = refs.map((r) => {
    if (r.uid !== UNRESOLVED_UID) return r;
    const uid = uidOf(r.kind, r.name);
    if (!uid) throw new Error(`${obj.kind} ${obj.metadata?.name}: owner ${r.kind} ${r.name} has no uid (it must be created first)`);
    return { ...r, uid };
  });
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: resolved } };
}

/** A copy of the object without ownerReferences: the anchor's create, before its Jobs exist. */
export function withoutOwners<T extends Ownable>(obj: T): T {
  const { ownerReferences: _dropped, ...metadata } = obj.metadata ?? {};
  return { ...obj, metadata };
}
