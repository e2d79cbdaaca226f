/**
 * The simulated etcd: every object kube-sim holds, keyed by kind/namespace/name, with uids, a global
 * resourceVersion bumped on every write, generateName, and change events for the controllers.
 * Objects are copied on the way in and out, so no caller can alter stored state by reference; a
 * stored object is never changed in place (every write stores a new one), so the indexes and the
 * watch history share it instead of copying it.
 */
import { randomUUID } from 'node:crypto';
import { alreadyExists, conflict, notFound } from './api-status';
import { applyDefaults } from './defaults';
import { decodeSecret } from './secrets';
import { k8sTime } from './k8s-time';
import { apiVersionOf, KINDS, type KindInfo, type KindName } from './kinds';
import type { LabelSet } from './label-selector';
import { ObjectIndex } from './object-index';
import type { SimClock } from './sim-clock';
import { missingName, validateObject } from './validation';
import type { KubeObject } from './wire-types';

export type Propagation = 'Orphan' | 'Background' | 'Foreground';

export type StoreEvent =
  { type: 'ADDED' | 'MODIFIED'; kind: KindName; object: KubeObject } | { type: 'DELETED'; kind: KindName; object: KubeObject; propagation: Propagation };

/** A committed write, in resourceVersion order: what watches replay and stream. */
export interface CommittedChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  kind: KindName;
  /** The object's resourceVersion after the write, as a number. */
  revision: number;
  /** The object as stored by the write (never mutated afterwards; readers must not change it). */
  object: KubeObject;
}

/** Options of a write: `dryRun` validates and answers what the write would give, changing nothing. */
export interface WriteOptions {
  dryRun?: boolean;
}

/** Changes kept for watches that resume from a resourceVersion; older ones answer 410 Gone. */
export const WATCH_HISTORY_LENGTH = 2000;

/** Characters Kubernetes uses for generated name suffixes (no vowels, no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += SUFFIX_ALPHABET[Math.floor(Math.random() * SUFFIX_ALPHABET.length)];
  return s;
}

/** The namespace part of an object's key: '' for cluster-scoped kinds. */
function scopeOf(kind: KindName, namespace: string | undefined): string {
  return KINDS[kind].namespaced ? (namespace ?? '') : '';
}

function key(kind: KindName, namespace: string | undefined, name: string): string {
  return `${kind}/${scopeOf(kind, namespace)}/${name}`;
}

/** The API server's list order: by namespace, then name. */
function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  return (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name!.localeCompare(b.metadata.name!);
}

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly index = new ObjectIndex();
  private revision = 0;
  private readonly listeners: ((event: StoreEvent) => void)[] = [];
  private readonly committers = new Set<(change: CommittedChange) => void>();
  private readonly history: CommittedChange[] = [];

  constructor(private readonly clock: SimClock) {}

  get resourceVersion(): string {
    return String(this.revision);
  }

  onChange(listener: (event: StoreEvent) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Called synchronously on every write, in resourceVersion order, before the controllers hear of it
   * (they may write again from their listeners): the feed of watches. Returns the unsubscribe.
   */
  onCommit(listener: (change: CommittedChange) => void): () => void {
    this.committers.add(listener);
    return () => this.committers.delete(listener);
  }

  /**
   * The changes after `revision` that are still kept, or undefined when some of them were dropped
   * (the caller answers 410 Gone / Expired).
   */
  changesSince(revision: number): CommittedChange[] | undefined {
    if (revision >= this.revision) return [];
    const oldest = this.history[0]?.revision;
    if (oldest === undefined || oldest > revision + 1) return undefined;
    return this.history.filter((c) => c.revision > revision);
  }

  /** The oldest resourceVersion a watch may still resume from. */
  get oldestResumable(): number {
    return (this.history[0]?.revision ?? this.revision + 1) - 1;
  }

  /** Validates, defaults and stores a new object; namespaced objects need an existing namespace. */
  create(kind: KindName, namespace: string | undefined, body: KubeObject, opts: WriteOptions = {}): KubeObject {
    const info = KINDS[kind];
    const obj = structuredClone(body);
    obj.metadata ??= {};
    if (info.namespaced) {
      if (!namespace || !this.objects.has(key('Namespace', undefined, namespace))) {
        throw notFound(KINDS.Namespace, namespace ?? '');
      }
      obj.metadata.namespace = namespace;
    } else {
      delete obj.metadata.namespace;
    }
    const name = this.chooseName(info, namespace, obj);
    if (kind === 'Secret') decodeSecret(obj);
    validateObject(info, obj, name);
    if (this.objects.has(key(kind, namespace, name))) throw alreadyExists(info, name);
    obj.metadata.name = name;
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = k8sTime(this.clock.now());
    if (opts.dryRun) delete obj.metadata.resourceVersion;
    else obj.metadata.resourceVersion = this.bump();
    delete obj.metadata.deletionTimestamp;
    applyDefaults(kind, obj);
    const stored: KubeObject = { apiVersion: apiVersionOf(info), kind, ...obj };
    stored.apiVersion = apiVersionOf(info);
    stored.kind = kind;
    if (opts.dryRun) return stored;
    this.put(kind, namespace, name, stored);
    this.commit('ADDED', kind, stored);
    this.emit({ type: 'ADDED', kind, object: stored });
    return structuredClone(stored);
  }

  private chooseName(info: KindInfo, namespace: string | undefined, obj: KubeObject): string {
    if (obj.metadata.name) return obj.metadata.name;
    const prefix = obj.metadata.generateName;
    if (!prefix) missingName(info);
    for (;;) {
      const candidate = prefix + randomSuffix();
      if (!this.objects.has(key(info.kind, namespace, candidate))) return candidate;
    }
  }

  get(kind: KindName, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.objects.get(key(kind, namespace, name));
    return obj && structuredClone(obj);
  }

  /** Throws a 404 Status when the object does not exist. */
  require(kind: KindName, namespace: string | undefined, name: string): KubeObject {
    const obj = this.get(kind, namespace, name);
    if (!obj) throw notFound(KINDS[kind], name);
    return obj;
  }

  /** The object's uid, when it exists (no copy made): what the garbage collector compares an owner reference's uid with. */
  uidOf(kind: KindName, namespace: string | undefined, name: string): string | undefined {
    return this.objects.get(key(kind, namespace, name))?.metadata.uid;
  }

  /** Whether the object exists (no copy made). */
  has(kind: KindName, namespace: string | undefined, name: string): boolean {
    return this.objects.has(key(kind, namespace, name));
  }

  /**
   * Objects of a kind, in one namespace or all, filtered by labels and by `where` (e.g. a field
   * selector; it reads the stored object and must not change it); ordered by namespace and name like
   * the API server. Only the objects returned are copied.
   */
  list(
    kind: KindName,
    namespace?: string,
    matches: (labels: LabelSet) => boolean = () => true,
    where: (obj: KubeObject) => boolean = () => true,
  ): KubeObject[] {
    const out: KubeObject[] = [];
    for (const obj of this.index.inScope(kind, this.listScope(kind, namespace))) {
      if (matches(obj.metadata.labels ?? {}) && where(obj)) out.push(obj);
    }
    return out.sort(byNamespaceAndName).map((obj) => structuredClone(obj));
  }

  /** How many objects of a kind are stored, all namespaces (no copy made). */
  count(kind: KindName): number {
    let n = 0;
    for (const _ of this.index.inScope(kind, undefined)) n++;
    return n;
  }

  /**
   * What `list(kind, namespace)` gives, kept to the objects whose ownerReferences name `ownerUid`
   * (controller or not): what the garbage collector and the Job controller look for.
   */
  listOwnedBy(kind: KindName, namespace: string | undefined, ownerUid: string): KubeObject[] {
    const scope = this.listScope(kind, namespace);
    const out: KubeObject[] = [];
    for (const k of this.index.ownedBy(ownerUid)) {
      const obj = this.objects.get(k)!;
      if (obj.kind === kind && (scope === undefined || scopeOf(kind, obj.metadata.namespace) === scope)) out.push(obj);
    }
    return out.sort(byNamespaceAndName).map((obj) => structuredClone(obj));
  }

  /** The namespace a list looks in: undefined (all) without one, or for a cluster-scoped kind. */
  private listScope(kind: KindName, namespace: string | undefined): string | undefined {
    return namespace !== undefined && KINDS[kind].namespaced ? namespace : undefined;
  }

  /** Stores `obj` under its key and in the indexes. */
  private put(kind: KindName, namespace: string | undefined, name: string, obj: KubeObject): void {
    const k = key(kind, namespace, name);
    this.index.put(k, kind, scopeOf(kind, namespace), obj, this.objects.get(k));
    this.objects.set(k, obj);
  }

  /**
   * Replaces an object's content, keeping its identity (uid, creation time). `expectedVersion`, when
   * given, must match the stored resourceVersion (409 Conflict otherwise).
   */
  replace(kind: KindName, namespace: string | undefined, name: string, next: KubeObject, expectedVersion?: string, opts: WriteOptions = {}): KubeObject {
    const info = KINDS[kind];
    const current = this.objects.get(key(kind, namespace, name));
    if (!current) throw notFound(info, name);
    if (expectedVersion !== undefined && expectedVersion !== current.metadata.resourceVersion) throw conflict(info, name);
    const obj = structuredClone(next);
    obj.metadata ??= {};
    if (kind === 'Secret') decodeSecret(obj);
    validateObject(info, obj, name);
    obj.apiVersion = current.apiVersion;
    obj.kind = current.kind;
    obj.metadata = {
      ...obj.metadata,
      name,
      namespace: current.metadata.namespace,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      resourceVersion: opts.dryRun ? current.metadata.resourceVersion : this.bump(),
    };
    if (current.metadata.deletionTimestamp) obj.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
    else delete obj.metadata.deletionTimestamp;
    if (!obj.metadata.namespace) delete obj.metadata.namespace;
    if (opts.dryRun) return obj;
    this.put(kind, namespace, name, obj);
    this.commit('MODIFIED', kind, obj);
    this.emit({ type: 'MODIFIED', kind, object: obj });
    return structuredClone(obj);
  }

  /**
   * Applies `mutate` to a copy and stores it when it changed (controllers' status writes).
   * Returns the stored object, or undefined when the object is gone.
   */
  update<T extends KubeObject>(kind: KindName, namespace: string | undefined, name: string, mutate: (obj: T) => void): T | undefined {
    const current = this.objects.get(key(kind, namespace, name));
    if (!current) return undefined;
    const next = structuredClone(current) as T;
    mutate(next);
    if (JSON.stringify(next) === JSON.stringify(current)) return structuredClone(next);
    next.metadata.resourceVersion = this.bump();
    this.put(kind, namespace, name, next);
    this.commit('MODIFIED', kind, next);
    this.emit({ type: 'MODIFIED', kind, object: next });
    return structuredClone(next);
  }

  delete(kind: KindName, namespace: string | undefined, name: string, propagation: Propagation, opts: WriteOptions = {}): KubeObject {
    const k = key(kind, namespace, name);
    const found = this.objects.get(k);
    if (!found) throw notFound(KINDS[kind], name);
    if (opts.dryRun) {
      const copy = structuredClone(found);
      copy.metadata.deletionTimestamp = k8sTime(this.clock.now());
      return copy;
    }
    this.objects.delete(k);
    this.index.remove(k, kind, scopeOf(kind, namespace), found);
    const obj = structuredClone(found);
    obj.metadata.deletionTimestamp = k8sTime(this.clock.now());
    obj.metadata.resourceVersion = this.bump();
    this.commit('DELETED', kind, obj);
    this.emit({ type: 'DELETED', kind, object: obj, propagation });
    return structuredClone(obj);
  }

  private bump(): string {
    this.revision += 1;
    return String(this.revision);
  }

  private commit(type: CommittedChange['type'], kind: KindName, stored: KubeObject): void {
    const change: CommittedChange = { type, kind, revision: Number(stored.metadata.resourceVersion), object: stored };
    this.history.push(change);
    if (this.history.length > WATCH_HISTORY_LENGTH) this.history.splice(0, this.history.length - WATCH_HISTORY_LENGTH);
    for (const listener of [...this.committers]) listener(change);
  }

  private emit(event: StoreEvent): void {
    for (const listener of this.listeners) listener({ ...event, object: structuredClone(event.object) });
  }
}
