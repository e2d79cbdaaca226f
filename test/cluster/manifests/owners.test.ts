/**
 * Ownership as the pure builders state it (architecture §7): every object of a run but the anchor is
 * owned by the run's anchor ConfigMap, the anchor by every Job of the run, by name; the uids are
 * filled in by createAll once the owners exist (the HTTP side is in cluster-client.test.ts).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isAnchor, runAnchor } from '../../../lambdas/cluster/manifests/anchor';
import { launchAdoptions, prepareObjects } from '../../../lambdas/cluster/manifests/index';
import type { RunnerPlan } from '../../../lambdas/cluster/plan';
import { anchorOwnerReference, jobOwnerReference, ownerNames, resolveOwners, UNRESOLVED_UID, withoutOwners } from '../../../lambdas/cluster/manifests/owners';
import { Engine } from '../../../lambdas/core/status';
import { engineAdapter } from '../../../lambdas/engines';
import { k6Plan } from '../fixtures/plan';

const plan = k6Plan({ runId: 'abc', parallelism: 2 });
const k6 = engineAdapter(Engine.k6);
const prepare = (p: RunnerPlan) => prepareObjects(p, engineAdapter(p.engine).prepareManifests(p));
const launch = (p: RunnerPlan) => engineAdapter(p.engine).launchManifests(p);
const names = (o: { metadata?: { ownerReferences?: { kind: string; name: string }[] } }) => ownerNames(o as V1ConfigMap).map((r) => `${r.kind} ${r.name}`);
const ANCHOR = 'ConfigMap lp-abc-anchor';

describe('who owns what', () => {
  it('a reference to a Job or to the anchor: not the controller, never blocking the owner’s deletion', () => {
    expect(jobOwnerReference('lp-abc-runner-0', 'u-1')).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'lp-abc-runner-0',
      uid: 'u-1',
      controller: false,
      blockOwnerDeletion: false,
    });
    expect(anchorOwnerReference('abc', 'u-2')).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'lp-abc-anchor',
      uid: 'u-2',
      controller: false,
      blockOwnerDeletion: false,
    });
  });

  it('the anchor: an empty ConfigMap labelled with the run, owned by the Jobs it is given', () => {
    const anchor = runAnchor(plan, ['lp-abc-initializer']);
    expect(anchor).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'lp-abc-anchor', namespace: plan.namespace, labels: { 'loadplane.io/run-id': 'abc', 'loadplane.io/role': 'anchor' } },
    });
    expect(anchor).not.toHaveProperty('data');
    expect(isAnchor(anchor)).toBe(true);
    expect(names(anchor)).toEqual(['Job lp-abc-initializer']);
    expect(runAnchor(plan, []).metadata).not.toHaveProperty('ownerReferences');
    expect(withoutOwners(anchor).metadata).not.toHaveProperty('ownerReferences');
  });

  it('k6 Prepare: the anchor first, owned by the initializer; the script ConfigMap and the initializer owned by the anchor', () => {
    const objects = prepare(plan);
    expect(objects.map((o) => [`${o.kind} ${o.metadata!.name}`, names(o)])).toEqual([
      [ANCHOR, ['Job lp-abc-initializer']],
      ['ConfigMap lp-abc-script', [ANCHOR]],
      ['Job lp-abc-initializer', [ANCHOR]],
    ]);
    expect(objects.flatMap((o) => o.metadata!.ownerReferences!).every((r) => r.uid === UNRESOLVED_UID)).toBe(true);
    expect(k6.prepareManifests(plan).some(isAnchor)).toBe(false); // the stage adds it, not the engine
  });

  it('Launch: runner Jobs and the coordinator owned by the anchor; the anchor adopted by every one of them', () => {
    const launched = launch(plan);
    expect(launched.map((o) => [o.metadata!.name, names(o)])).toEqual([
      ['lp-abc-runner-0', [ANCHOR]],
      ['lp-abc-runner-1', [ANCHOR]],
      ['lp-abc-coordinator', [ANCHOR]],
    ]);
    expect(launchAdoptions(plan, launched).map((cm) => [cm.metadata!.name, names(cm)])).toEqual([
      ['lp-abc-anchor', ['Job lp-abc-runner-0', 'Job lp-abc-runner-1', 'Job lp-abc-coordinator']],
      ['lp-abc-script', [ANCHOR]],
    ]);
    // setup() and teardown() in each runner: no coordinator.
    const perRunner = { ...plan, setupTeardown: 'perRunner' as const };
    expect(launch(perRunner).map((o) => o.metadata!.name)).toEqual(['lp-abc-runner-0', 'lp-abc-runner-1']);
    expect(names(launchAdoptions(perRunner, launch(perRunner))[0]!)).toEqual(['Job lp-abc-runner-0', 'Job lp-abc-runner-1']);
  });

  it('Gatling: the anchor has no owner at Prepare (no Job yet) and is adopted at Launch; its ConfigMap is the anchor’s from the start', () => {
    const gatling = { ...plan, engine: 'gatling' as const, setupTeardown: 'perRunner' as const, startAt: '2026-12-01T10:00:00.000Z' };
    expect(prepare(gatling).map((o) => [`${o.kind} ${o.metadata!.name}`, names(o)])).toEqual([
      [ANCHOR, []],
      ['ConfigMap lp-abc-script', [ANCHOR]],
    ]);
    expect(launch(gatling).map(names)).toEqual([[ANCHOR], [ANCHOR]]);
    expect(launchAdoptions(gatling, launch(gatling)).map(names)).toEqual([['Job lp-abc-runner-0', 'Job lp-abc-runner-1'], [ANCHOR]]);
  });

  it('a referenced ConfigMap is the user’s: never made, never owned; the anchor is made all the same', () => {
    const referenced = { ...plan, script: { kind: 'configMap' as const, name: 'team-scripts', file: 'a.js' } };
    expect(prepare(referenced).map((o) => `${o.kind} ${o.metadata!.name}`)).toEqual([ANCHOR, 'Job lp-abc-initializer']);
    expect(launchAdoptions(referenced, launch(referenced)).map((o) => o.metadata!.name)).toEqual(['lp-abc-anchor']);
  });
});

describe('resolveOwners', () => {
  const [, cm, job] = prepare(plan) as [V1ConfigMap, V1ConfigMap, V1ConfigMap];

  it('fills in the uid of each owner, by kind and name, leaving the input untouched', () => {
    const resolved = resolveOwners(cm, (kind, name) => (kind === 'ConfigMap' && name === 'lp-abc-anchor' ? 'u-anchor' : undefined));
    expect(resolved.metadata!.ownerReferences).toEqual([anchorOwnerReference('abc', 'u-anchor')]);
    expect(cm.metadata!.ownerReferences![0]!.uid).toBe(UNRESOLVED_UID);
  });

  it('an owner without a uid (not created first) is a bug: it throws instead of sending a broken reference', () => {
    expect(() => resolveOwners(job, () => undefined)).toThrow(/owner ConfigMap lp-abc-anchor has no uid/);
  });

  it('an object without owners comes back as it is', () => {
    const alone = runAnchor(plan, []);
    expect(resolveOwners(alone, () => undefined)).toBe(alone);
  });
});
