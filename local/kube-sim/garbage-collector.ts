/**
 * What Kubernetes' garbage collector and namespace controller do: delete a dependent once NONE of its
 * owners exists, strip the references to owners that are gone while another remains, orphan on an
 * Orphan delete, and empty a deleted namespace.
 *
 * As in Kubernetes (pkg/controller/garbagecollector, read for this; the README says what is verified),
 * the collector looks at a dependent both when an owner is deleted and when the dependent itself is
 * created or updated with a reference to an owner it has not seen: graph_builder.go's
 * addDependentToOwners makes a "virtual" node for an owner uid it does not know and queues it;
 * attemptToDeleteItem finds it absent (404, or another object under that name: another uid), and
 * the dependent is then classified like any other (classifyReferences): an object created with an
 * owner that is already gone is deleted, which is what makes a create the API server executed after
 * the run's Cleanup harmless (architecture §6).
 *
 * An owner is looked up by the reference's apiVersion, kind and name, in the dependent's namespace
 * (a cluster-scoped owner: cluster-wide), and exists only with the same uid (isDangling). A reference
 * that cannot be resolved (a kind or apiVersion kube-sim does not serve; a namespaced owner named by
 * a cluster-scoped dependent) leaves the dependent untouched, as the real collector, which retries
 * an unknown kind for ever and gives up on the other, never deletes it.
 */
import { apiVersionOf, KIND_NAMES, KINDS, type KindName } from './kinds';
import type { ObjectStore, Propagation, StoreEvent } from './object-store';
import type { Scheduler } from './sim-clock';
import type { KubeObject, OwnerReference } from './wire-types';

/**
 * Sim ms between a write that names an absent owner and the collector acting on it. The real one has
 * no fixed delay: an informer event, a GET of the owner, a virtual delete event, a GET and a DELETE of
 * the dependent, milliseconds on an idle cluster and longer under load (its queues back off per item
 * from 5 ms). Unverified, a guess: kube-sim's cascade on an owner's delete is immediate.
 */
export const ABSENT_OWNER_COLLECTION_MS = 100;

/** Whether the owner a reference names exists: the same uid under its name, none, or no way to tell. */
type OwnerState = 'present' | 'absent' | 'unresolvable';

export function startGarbageCollector(store: ObjectStore, scheduler: Pick<Scheduler, 'after'>): void {
  /** Dependents (by uid) already waiting for the collector. */
  const queued = new Set<string>();
  store.onChange((event) => {
    if (event.type === 'DELETED') {
      if (event.kind === 'Namespace') emptyNamespace(store, event.object.metadata.name!);
      else collectDependents(store, event);
      return;
    }
    // Events name what they are about in involvedObject, not in ownerReferences: they expire instead.
    if (event.kind === 'Event') return;
    const { metadata } = event.object;
    const refs = ownerReferencesOf(event.object);
    if (refs.length === 0 || metadata.uid === undefined || queued.has(metadata.uid)) return;
    if (!refs.some((r) => ownerState(store, r, event.kind, metadata.namespace) === 'absent')) return;
    const uid = metadata.uid;
    queued.add(uid);
    scheduler.after(ABSENT_OWNER_COLLECTION_MS, () => {
      queued.delete(uid);
      attemptToDelete(store, event.kind, metadata.namespace, metadata.name!, uid, 'Background');
    });
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
    if (kind === 'Namespace' || kind === 'Event') continue;
    // The owner index: only the objects that name this owner, not every object of the namespace.
    for (const listed of store.listOwnedBy(kind, namespace, ownerUid)) {
      const name = listed.metadata.name!;
      if (event.propagation === 'Orphan') {
        // attemptToOrphan: the deleted owner's reference is removed from each dependent, nothing else.
        store.update(kind, namespace, name, (obj) => {
          const kept = ownerReferencesOf(obj).filter((r) => r.uid !== ownerUid);
          if (kept.length > 0) obj.metadata.ownerReferences = kept;
          else delete obj.metadata.ownerReferences;
        });
      } else {
        // Store events are synchronous: an earlier deletion in this pass may have changed or taken it.
        attemptToDelete(store, kind, namespace, name, listed.metadata.uid!, event.propagation);
      }
    }
  }
}

/**
 * attemptToDeleteItem for one dependent, as it is now: nothing when it is gone (or another object
 * took its name), has no owner, or names one that cannot be resolved; otherwise every reference is
 * classified, and with an owner still there the references to absent ones are removed, with none the
 * dependent is deleted (Background: kube-sim has no finalizers; a Job's pods go with it).
 */
function attemptToDelete(
  store: ObjectStore,
  kind: KindName,
  namespace: string | undefined,
  name: string,
  uid: string,
  propagation: Exclude<Propagation, 'Orphan'>,
): void {
  const dependent = store.get(kind, namespace, name);
  if (dependent?.metadata.uid !== uid) return;
  const refs = ownerReferencesOf(dependent);
  if (refs.length === 0) return;
  const states = refs.map((r) => ownerState(store, r, kind, namespace));
  if (states.includes('unresolvable')) return;
  if (!states.includes('absent')) return;
  if (states.includes('present')) {
    store.update(kind, namespace, name, (obj) => {
      const all = obj.metadata.ownerReferences as unknown[];
      obj.metadata.ownerReferences = all.filter((r) => !(isOwnerReference(r) && ownerState(store, r, kind, namespace) === 'absent')) as OwnerReference[];
    });
    return;
  }
  store.delete(kind, namespace, name, propagation);
}

/**
 * isDangling: the owner is looked up by the reference's kind (and apiVersion) and name, in the
 * dependent's namespace unless its kind is cluster-scoped, and exists only with the reference's uid.
 */
function ownerState(store: ObjectStore, ref: OwnerReference, dependentKind: KindName, namespace: string | undefined): OwnerState {
  if (!(ref.kind in KINDS)) return 'unresolvable';
  const info = KINDS[ref.kind as KindName];
  if (ref.apiVersion !== apiVersionOf(info)) return 'unresolvable';
  if (info.namespaced && !KINDS[dependentKind].namespaced) return 'unresolvable';
  const uid = store.uidOf(info.kind, info.namespaced ? namespace : undefined, ref.name);
  return uid !== undefined && uid === ref.uid ? 'present' : 'absent';
}

/** The object's ownerReferences that have the reference's shape (field validation only warns: others are skipped). */
function ownerReferencesOf(obj: KubeObject): OwnerReference[] {
  const refs: unknown = obj.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return (refs as unknown[]).filter(isOwnerReference);
}

function isOwnerReference(r: unknown): r is OwnerReference {
  const ref = r as Partial<OwnerReference> | null;
  return typeof ref?.uid === 'string' && typeof ref.kind === 'string' && typeof ref.name === 'string' && typeof ref.apiVersion === 'string';
}
