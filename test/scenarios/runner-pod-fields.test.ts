/**
 * The spec's pod fields for a shared cluster (runner.volumes, volumeMounts, affinity,
 * topologySpreadConstraints, imagePullSecrets, priorityClassName) in whole runs on kube-sim, in a
 * namespace enforcing Pod Security "restricted": every pod of the run carries them and is admitted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Labels } from '../../lambdas/core/runner-contract';
import { Outcome } from '../../lambdas/core/status';
import { POD_SECURITY_LABELS } from '../../local/kube-sim/pod-security';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { ALL_POD_FIELDS } from '../support/pod-fields';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // The ConfigMap the spec's `users` volume mounts (not optional: without it the pods would not start).
  const res = await fetch(`${h.kubeSim.url}/api/v1/namespaces/loadplane/configmaps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'users' }, data: { 'users.csv': 'alice\nbob\n' } }),
  });
  expect(res.status).toBe(201);
  // The Secret the `creds` volume mounts (not optional either) and the projected one reads.
  const secret = await fetch(`${h.kubeSim.url}/api/v1/namespaces/loadplane/secrets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api-token' }, stringData: { token: 'not-a-real-token' } }),
  });
  expect(secret.status).toBe(201);
});
afterAll(() => h.close());

/** The pods of a run by role, as kube-sim holds them (cleanup: never keeps them). */
function podsByRole(
  runId: string,
): Record<string, { spec: Record<string, unknown> & { containers: { volumeMounts: unknown[] }[]; volumes: { name: string }[] } }[]> {
  const byRole: Record<string, never[]> = {};
  for (const pod of h.kubeSim.list('Pod', 'loadplane', `${Labels.runId}=${runId}`)) (byRole[pod.metadata.labels[Labels.role]] ??= []).push(pod as never);
  return byRole;
}

function expectPodFields(pod: ReturnType<typeof podsByRole>[string][number]): void {
  expect(pod.spec.volumes.slice(-ALL_POD_FIELDS.volumes.length)).toEqual(ALL_POD_FIELDS.volumes);
  expect(pod.spec.containers[0]!.volumeMounts.slice(-ALL_POD_FIELDS.volumeMounts.length)).toEqual(ALL_POD_FIELDS.volumeMounts);
  expect(pod.spec.topologySpreadConstraints).toEqual(ALL_POD_FIELDS.topologySpreadConstraints);
  expect(pod.spec.imagePullSecrets).toEqual(ALL_POD_FIELDS.imagePullSecrets);
  expect(pod.spec.priorityClassName).toBe(ALL_POD_FIELDS.priorityClassName);
  expect((pod.spec.affinity as { nodeAffinity: unknown }).nodeAffinity).toEqual(ALL_POD_FIELDS.affinity.nodeAffinity);
}

describe('runner pod fields in whole runs on kube-sim', () => {
  it('the namespace enforces restricted', () => {
    const [ns] = h.kubeSim.list('Namespace').filter((n: { metadata: { name: string } }) => n.metadata.name === 'loadplane');
    expect(ns.metadata.labels[POD_SECURITY_LABELS.enforce]).toBe('restricted');
  });

  it('k6: the initializer, every runner and the coordinator carry every field, pass admission, and the run SUCCEEDS', async () => {
    const { runId, view } = await h.run(k6Spec({ name: 'pod-fields', parallelism: 2, separate: true, cleanup: 'never', runner: ALL_POD_FIELDS }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const pods = podsByRole(runId);
    expect(Object.keys(pods).sort()).toEqual(['coordinator', 'initializer', 'runner']);
    expect(pods.runner).toHaveLength(2);
    for (const pod of Object.values(pods).flat()) expectPodFields(pod);
    // separate: the runners also repel each other.
    const anti = (pods.runner![0]!.spec.affinity as { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: unknown[] } }).podAntiAffinity;
    expect(anti.requiredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
  });

  it('Gatling: every runner carries every field and the run SUCCEEDS', async () => {
    const { runId, view } = await h.run(
      gatlingSpec({ name: 'pod-fields-gatling', parallelism: 2, cleanup: 'never', runner: { ...ALL_POD_FIELDS, image: 'ghcr.io/st-tech/gatling:latest' } }),
    );
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const pods = podsByRole(runId);
    expect(pods.runner).toHaveLength(2);
    for (const pod of pods.runner!) expectPodFields(pod);
  });
});
