/**
 * Ownership as the pure builders state it (architecture §7): who owns what, by Job name; the uids are filled
 * in by createAll once the Jobs exist (the HTTP side is in cluster-client.test.ts).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { launchAdoptions } from '../../../lambdas/cluster/manifests/index';
import type { RunnerPlan } from '../../../lambdas/cluster/plan';
import { jobOwnerReference, ownerJobNames, resolveOwners, UNRESOLVED_UID } from '../../../lambdas/cluster/manifests/owners';
import { Engine } from '../../../lambdas/core/status';
import { engineAdapter } from '../../../lambdas/engines';
import { k6Plan } from '../fixtures/plan';

const plan = k6Plan({ runId: 'abc', parallelism: 2 });
const k6 = engineAdapter(Engine.k6);
const prepareManifests = (p: RunnerPlan) => k6.prepareManifests(p);
const launchManifests = (p: RunnerPlan) => k6.launchManifests(p);

describe('who owns what', () => {
  it('a reference to a Job: not the controller, never blocking the Job’s deletion', () => {
    expect(jobOwnerReference('lp-abc-runner-0', 'u-1')).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'lp-abc-runner-0',
      uid: 'u-1',
      controller: false,
      blockOwnerDeletion: false,
    });
  });

  it('k6 Prepare: the script ConfigMap is owned by the initializer; the initializer by nobody', () => {
    const [cm, job] = prepareManifests(plan);
    expect(ownerJobNames(cm!)).toEqual(['lp-abc-initializer']);
    expect(cm!.metadata!.ownerReferences![0]!.uid).toBe(UNRESOLVED_UID);
    expect(job!.metadata!.ownerReferences).toBeUndefined();
  });

  it('Launch: runner Jobs and the coordinator, owned by nobody; the script ConfigMap is adopted by every one of them', () => {
    const launched = launchManifests(plan);
    expect(launched.map((o) => [o.kind, o.metadata!.name, o.metadata!.ownerReferences])).toEqual([
      ['Job', 'lp-abc-runner-0', undefined],
      ['Job', 'lp-abc-runner-1', undefined],
      ['Job', 'lp-abc-coordinator', undefined],
    ]);
    expect(launchAdoptions(plan).map((cm) => [cm.metadata!.name, ownerJobNames(cm)])).toEqual([
      ['lp-abc-script', ['lp-abc-runner-0', 'lp-abc-runner-1', 'lp-abc-coordinator']],
    ]);
    // setup() and teardown() in each runner: no coordinator.
    const perRunner = { ...plan, setupTeardown: 'perRunner' as const };
    expect(launchManifests(perRunner).map((o) => o.metadata!.name)).toEqual(['lp-abc-runner-0', 'lp-abc-runner-1']);
    expect(launchAdoptions(perRunner).map(ownerJobNames)).toEqual([['lp-abc-runner-0', 'lp-abc-runner-1']]);
    expect(launchAdoptions(plan)[0]!.metadata!.ownerReferences!.every((r) => r.uid === UNRESOLVED_UID)).toBe(true);
  });

  it('Gatling: the script ConfigMap has no owner at Prepare (no Job yet) and is adopted at Launch', () => {
    const gatling = { ...plan, engine: 'gatling' as const, setupTeardown: 'perRunner' as const, startAt: '2026-12-01T10:00:00.000Z' };
    const prepared = engineAdapter(Engine.gatling).prepareManifests(gatling);
    expect(prepared.map((o) => o.kind)).toEqual(['ConfigMap']);
    expect(prepared[0]!.metadata!.ownerReferences).toBeUndefined();
    expect(engineAdapter(Engine.gatling).launchManifests(gatling).map((o) => o.metadata!.ownerReferences)).toEqual([undefined, undefined]);
    expect(launchAdoptions(gatling).map(ownerJobNames)).toEqual([['lp-abc-runner-0', 'lp-abc-runner-1']]);
  });

  it('a referenced ConfigMap is the user’s: nothing to create, nothing to adopt', () => {
    const referenced = { ...plan, script: { kind: 'configMap' as const, name: 'team-scripts', file: 'a.js' } };
    expect(launchAdoptions(referenced)).toEqual([]);
  });
});

describe('resolveOwners', () => {
  const [cm] = prepareManifests(plan) as V1ConfigMap[];

  it('fills in the uid of each owner Job, leaving the input untouched', () => {
    const resolved = resolveOwners(cm!, (name) => (name === 'lp-abc-initializer' ? 'u-init' : undefined));
    expect(resolved.metadata!.ownerReferences).toEqual([jobOwnerReference('lp-abc-initializer', 'u-init')]);
    expect(cm!.metadata!.ownerReferences![0]!.uid).toBe(UNRESOLVED_UID);
  });

  it('an owner without a uid (not created first) is a bug: it throws instead of sending a broken reference', () => {
    expect(() => resolveOwners(cm!, () => undefined)).toThrow(/owner Job lp-abc-initializer has no uid/);
  });

  it('an object without owners comes back as it is', () => {
    const [job] = prepareManifests(plan).filter((o) => o.kind === 'Job');
    expect(resolveOwners(job!, () => undefined)).toBe(job);
  });
});
