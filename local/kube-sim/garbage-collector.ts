/**
 * What Kubernetes' garbage collector and namespace controller do when something is deleted: delete the
 * dependents of an owner (Background/Foreground propagation; both are immediate here) once NONE of
 * their owners remains, or strip the deleted owner's reference (Orphan, or other owners still there);
 * and empty a deleted namespace.
 *
 * As in Kubernetes, an object with several owners (loadplane's script ConfigMap, owned by every runner
 * Job) lives until the last of them is gone: the collector checks each remaining owner by uid, deletes
 * the dependent when none exists, and otherwise drops the references to owners that are gone.
 */
import { KIND_NAMES, KINDS, type KindName } from './kinds';
import type { ObjectStore, StoreEvent } from './object-store';
import type { OwnerReference } from './wire-types';

export function startGarbageCollector(store: ObjectStore): void {
  store.onChange((event) => {
    if (event.type !== 'DELETED') return;
    if (event.kind === 'Namespace') emptyNamespace(store, event.object.metadata.name!);
    else collectDependents(store, event);
  });
}

function emptyNamespace(store: ObjectStore, namespace: string): void {
  for (const kind of KIND_NAMES) {
    if (kind === 'Namespace') continue;
    for (const obj of store.list(kind, namespace)) {
      if (store.has(kind, namespace, obj.metadata.name!)) store.delete(kind, namespace, obj.metadata.name!, 'Background');
    }
  }
}

function collectDependents(store: ObjectStore, event: Extract<StoreEvent, { type: 'DELETED' }>): void {
  const ownerUid = event.object.metadata.uid;
  const namespace = event.object.metadata.namespace;
  if (ownerUid === undefined) return;
  for (const kind of KIND_NAMES) {
    // Events name what they are about in involvedObject, not in ownerReferences: they expire instead.
    if (kind === 'Namespace' || kind === 'Event') continue;
    // The owner index: only the objects that name this owner, not every object of the namespace.
    for (const listed of store.listOwnedBy(kind, namespace, ownerUid)) {
      const name = listed.metadata.name!;
      // Store events are synchronous: an earlier deletion in this pass may have changed or taken it.
      const dependent = store.get(kind, namespace, name);
      const refs = dependent?.metadata.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === ownerUid)) continue;
      const remaining = refs.filter((r) => r.uid !== ownerUid && ownerExists(store, r, namespace));
      if (event.propagation === 'Orphan' || remaining.length > 0) {
        store.update(kind, namespace, name, (obj) => {
          const kept = event.propagation === 'Orphan' ? refs.filter((r) => r.uid !== ownerUid) : remaining;
          if (kept.length > 0) obj.metadata.ownerReferences = kept;
          else delete obj.metadata.ownerReferences;
        });
      } else {
        store.delete(kind, namespace, name, event.propagation);
      }
    }
  }
}

/** Whether the owner a reference names still exists (same uid). An owner of a kind kube-sim does not know is assumed to. */
function ownerExists(store: ObjectStore, ref: OwnerReference, namespace: string | undefined): boolean {
  if (!(ref.kind in KINDS)) return true;
  const kind = ref.kind as KindName;
  const owner = store.get(kind, KINDS[kind].namespaced ? namespace : undefined, ref.name);
  return owner?.metadata.uid === ref.uid;
}
