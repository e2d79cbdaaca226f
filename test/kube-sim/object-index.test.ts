/**
 * The object store's indexes (object-index.ts) must change nothing a caller can see: after any
 * sequence of creates, replaces, updates and deletes, a list by kind / namespace / label selector /
 * field selector, and a list of what an owner owns, give exactly what a full scan of every object
 * gives (same objects, same order), and what they return are copies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../../local/kube-sim/field-selector';
import { KINDS, type KindName } from '../../local/kube-sim/kinds';
import { parseLabelSelector } from '../../local/kube-sim/label-selector';
import { ObjectStore } from '../../local/kube-sim/object-store';
import type { KubeObject, OwnerReference } from '../../local/kube-sim/wire-types';

const NAMESPACES = ['ns-a', 'ns-b'];
const KIND_CHOICES: KindName[] = ['ConfigMap', 'Service', 'Namespace'];
const NAMES = ['a', 'b', 'c', 'd'];
const LABEL_VALUES = ['x', 'y', ''];
const SELECTORS = ['', 'app=x', 'app!=x', 'tier', '!tier', 'app in (x,y)', 'app notin (y)', 'app=x,tier=y', 'tier='];
const FIELD_SELECTORS = ['', 'metadata.name=a', 'metadata.name!=b', 'metadata.namespace=ns-b'];

type Op =
  | { op: 'create' | 'replace'; kind: KindName; ns: number; name: string; labels: Record<string, string>; owners: number[] }
  | { op: 'update'; kind: KindName; ns: number; name: string; owners: number[] }
  | { op: 'delete'; kind: KindName; ns: number; name: string };

const labelsArb = fc.record({ app: fc.constantFrom(...LABEL_VALUES), tier: fc.constantFrom(...LABEL_VALUES) }, { requiredKeys: [] });
const target = { kind: fc.constantFrom(...KIND_CHOICES), ns: fc.nat(NAMESPACES.length - 1), name: fc.constantFrom(...NAMES) };
/** Owners are picked among the objects that exist when the op runs (by index, modulo their count). */
const ownersArb = fc.array(fc.nat(50), { maxLength: 3 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom('create' as const, 'replace' as const), ...target, labels: labelsArb, owners: ownersArb }),
  fc.record({ op: fc.constant('update' as const), ...target, owners: ownersArb }),
  fc.record({ op: fc.constant('delete' as const), ...target }),
);

function keyOf(kind: KindName, namespace: string | undefined, name: string): string {
  return `${kind}/${KINDS[kind].namespaced ? (namespace ?? '') : ''}/${name}`;
}

/** The store, and a model of what it holds (its answers to writes), which the full scans read. */
function harness() {
  const store = new ObjectStore({ now: () => Date.UTC(2026, 0, 1) });
  const model = new Map<string, KubeObject>();
  for (const name of NAMESPACES) model.set(keyOf('Namespace', undefined, name), store.create('Namespace', undefined, { metadata: { name } }));
  const ownerRefs = (picks: number[]): OwnerReference[] => {
    const existing = [...model.values()];
    return picks.map((i) => {
      const owner = existing[i % existing.length]!;
      return { apiVersion: 'v1', kind: owner.kind as string, name: owner.metadata.name!, uid: owner.metadata.uid! };
    });
  };
  const apply = (op: Op) => {
    const namespace = KINDS[op.kind].namespaced ? NAMESPACES[op.ns] : undefined;
    const k = keyOf(op.kind, namespace, op.name);
    const exists = model.has(k);
    if (op.op === 'delete') {
      if (!exists || op.kind === 'Namespace') return;
      store.delete(op.kind, namespace, op.name, 'Background');
      model.delete(k);
      return;
    }
    if (op.op === 'update') {
      if (!exists) return;
      const refs = ownerRefs(op.owners);
      const updated = store.update(op.kind, namespace, op.name, (obj) => {
        if (refs.length > 0) obj.metadata.ownerReferences = refs;
        else delete obj.metadata.ownerReferences;
      });
      model.set(k, updated!);
      return;
    }
    const body: KubeObject = { metadata: { name: op.name, labels: op.labels } };
    const refs = ownerRefs(op.owners);
    if (refs.length > 0) body.metadata.ownerReferences = refs;
    if (op.op === 'replace' && exists) model.set(k, store.replace(op.kind, namespace, op.name, body));
    else if (!exists) model.set(k, store.create(op.kind, namespace, body));
  };
  /** The full scan: every object, filtered, ordered by namespace and name. */
  const scan = (kind: KindName, namespace: string | undefined, selector: string, fields: string) => {
    const labels = parseLabelSelector(selector);
    const where = parseFieldSelector(kind, fields);
    return [...model.values()]
      .filter((o) => o.kind === kind)
      .filter((o) => namespace === undefined || !KINDS[kind].namespaced || o.metadata.namespace === namespace)
      .filter((o) => labels(o.metadata.labels ?? {}) && where(o))
      .sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name!.localeCompare(b.metadata.name!));
  };
  return { store, model, apply, scan };
}

describe('ObjectStore indexes', () => {
  it('list and listOwnedBy give what a full scan gives, after any sequence of writes', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const { store, model, apply, scan } = harness();
        for (const op of ops) apply(op);
        const uids = [...model.values()].map((o) => o.metadata.uid!);
        for (const kind of KIND_CHOICES) {
          for (const namespace of [undefined, ...NAMESPACES]) {
            const pairs = [...SELECTORS.map((s) => [s, ''] as const), ...FIELD_SELECTORS.map((f) => ['app', f] as const)];
            for (const [selector, fields] of pairs) {
              expect(store.list(kind, namespace, parseLabelSelector(selector), parseFieldSelector(kind, fields))).toEqual(
                scan(kind, namespace, selector, fields),
              );
            }
            for (const uid of uids) {
              const owned = scan(kind, namespace, '', '').filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid));
              expect(store.listOwnedBy(kind, namespace, uid)).toEqual(owned);
            }
          }
        }
        for (const [k, obj] of model) {
          const [kind, namespace, name] = k.split('/') as [KindName, string, string];
          expect(store.has(kind, namespace || undefined, name)).toBe(true);
          expect(store.get(kind, namespace || undefined, name)).toEqual(obj);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('hands out copies: changing a listed object changes nothing stored', () => {
    const { store, apply } = harness();
    apply({ op: 'create', kind: 'ConfigMap', ns: 0, name: 'a', labels: { app: 'x' }, owners: [] });
    const [listed] = store.list('ConfigMap', 'ns-a');
    listed!.metadata.labels!.app = 'changed';
    const [owned] = store.listOwnedBy('Namespace', undefined, 'nobody');
    expect(owned).toBeUndefined();
    expect(store.list('ConfigMap', 'ns-a', parseLabelSelector('app=x'))).toHaveLength(1);
  });

  it('an owner that is deleted and recreated under the same name does not inherit the old dependents', () => {
    const { store } = harness();
    const first = store.create('ConfigMap', 'ns-a', { metadata: { name: 'owner' } });
    store.create('ConfigMap', 'ns-a', {
      metadata: { name: 'dep', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: first.metadata.uid! }] },
    });
    store.delete('ConfigMap', 'ns-a', 'owner', 'Orphan');
    const second = store.create('ConfigMap', 'ns-a', { metadata: { name: 'owner' } });
    expect(store.listOwnedBy('ConfigMap', 'ns-a', first.metadata.uid!).map((o) => o.metadata.name)).toEqual(['dep']);
    expect(store.listOwnedBy('ConfigMap', 'ns-a', second.metadata.uid!)).toEqual([]);
    store.delete('ConfigMap', 'ns-a', 'dep', 'Background');
    expect(store.listOwnedBy('ConfigMap', 'ns-a', first.metadata.uid!)).toEqual([]);
  });
});
