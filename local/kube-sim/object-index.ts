/**
 * The object store's secondary indexes, so that a list, the garbage collector and the Job controller
 * touch the objects they are about instead of every object kube-sim holds (with hundreds of runs at
 * once a full scan per list made the cluster's work grow with the square of the run count):
 *
 * - by scope: kind → namespace ('' for cluster-scoped kinds) → name → stored object;
 * - by owner: owner uid → keys of the objects whose ownerReferences name it.
 *
 * It holds the stored objects themselves (never copies): callers read them and must not change them.
 */
import type { KindName } from './kinds';
import type { KubeObject } from './wire-types';

export class ObjectIndex {
  private readonly scopes = new Map<KindName, Map<string, Map<string, KubeObject>>>();
  private readonly owned = new Map<string, Set<string>>();

  /** Records `obj` (stored under `key`) in place of `previous`, if any. */
  put(key: string, kind: KindName, namespace: string, obj: KubeObject, previous: KubeObject | undefined): void {
    let byNamespace = this.scopes.get(kind);
    if (!byNamespace) this.scopes.set(kind, (byNamespace = new Map()));
    let byName = byNamespace.get(namespace);
    if (!byName) byNamespace.set(namespace, (byName = new Map()));
    byName.set(obj.metadata.name!, obj);
    const before = ownerUids(previous);
    const after = ownerUids(obj);
    for (const uid of before) if (!after.has(uid)) this.unown(uid, key);
    for (const uid of after) if (!before.has(uid)) this.own(uid, key);
  }

  remove(key: string, kind: KindName, namespace: string, obj: KubeObject): void {
    const byNamespace = this.scopes.get(kind);
    const byName = byNamespace?.get(namespace);
    byName?.delete(obj.metadata.name!);
    if (byName?.size === 0) byNamespace!.delete(namespace);
    for (const uid of ownerUids(obj)) this.unown(uid, key);
  }

  /** Stored objects of a kind in one namespace ('' for cluster-scoped kinds), or in all when undefined; unordered. */
  *inScope(kind: KindName, namespace: string | undefined): Iterable<KubeObject> {
    const byNamespace = this.scopes.get(kind);
    if (!byNamespace) return;
    if (namespace !== undefined) {
      yield* byNamespace.get(namespace)?.values() ?? [];
      return;
    }
    for (const byName of byNamespace.values()) yield* byName.values();
  }

  /** Store keys of the objects whose ownerReferences name `ownerUid`; unordered. */
  ownedBy(ownerUid: string): readonly string[] {
    return [...(this.owned.get(ownerUid) ?? [])];
  }

  private own(uid: string, key: string): void {
    let keys = this.owned.get(uid);
    if (!keys) this.owned.set(uid, (keys = new Set()));
    keys.add(key);
  }

  private unown(uid: string, key: string): void {
    const keys = this.owned.get(uid);
    keys?.delete(key);
    if (keys?.size === 0) this.owned.delete(uid);
  }
}

/** The uids an object's ownerReferences name (field validation only warns, so the shape is checked here). */
function ownerUids(obj: KubeObject | undefined): Set<string> {
  const uids = new Set<string>();
  const refs: unknown = obj?.metadata.ownerReferences;
  if (!Array.isArray(refs)) return uids;
  for (const ref of refs as unknown[]) {
    const uid = (ref as { uid?: unknown } | null)?.uid;
    if (typeof uid === 'string') uids.add(uid);
  }
  return uids;
}
