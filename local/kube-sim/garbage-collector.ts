/**
 * What Kubernetes' garbage collector and namespace controller do when something is deleted: delete the
 * dependents of an owner (Background/Foreground propagation; both are immediate here), or strip their
 * ownerReferences (Orphan); and empty a deleted namespace.
 */
import { KIND_NAMES } from './kinds';
import type { ObjectStore, StoreEvent } from './object-store';

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
      if (store.get(kind, namespace, obj.metadata.name!)) store.delete(kind, namespace, obj.metadata.name!, 'Background');
    }
  }
}

function collectDependents(store: ObjectStore, event: Extract<StoreEvent, { type: 'DELETED' }>): void {
  const ownerUid = event.object.metadata.uid;
  const namespace = event.object.metadata.namespace;
  for (const kind of KIND_NAMES) {
    if (kind === 'Namespace') continue;
    for (const dependent of store.list(kind, namespace)) {
      const refs = dependent.metadata.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === ownerUid)) continue;
      const name = dependent.metadata.name!;
      if (event.propagation === 'Orphan') {
        store.update(kind, namespace, name, (obj) => {
          const remaining = refs.filter((r) => r.uid !== ownerUid);
          if (remaining.length > 0) obj.metadata.ownerReferences = remaining;
          else delete obj.metadata.ownerReferences;
        });
      } else if (store.get(kind, namespace, name)) {
        store.delete(kind, namespace, name, event.propagation);
      }
    }
  }
}
