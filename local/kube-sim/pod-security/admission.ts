/**
 * PodSecurity admission (admission/admission.go): the 403 for a pod create that violates the enforced
 * level, and the `would violate PodSecurity` warnings for pods and pod controllers (Jobs).
 */
import { ApiStatusError, failureStatus } from '../api-status';
import type { ObjectStore } from '../object-store';
import type { KubeObject, ObjectMeta, PodSpec } from '../wire-types';
import { forbiddenDetail, type Violation } from './checks';
import { namespacePolicy, type LevelVersion } from './namespace-policy';
import { evaluatePod } from './registry';

function levelVersion(lv: LevelVersion): string {
  return `${lv.level}:${lv.version}`;
}

/** The 403 the API server answers for a pod that violates the enforced level (admission.forbiddenResponse). */
export function podSecurityForbidden(podName: string, enforce: LevelVersion, violations: readonly Violation[]): ApiStatusError {
  const message = `pods ${JSON.stringify(podName)} is forbidden: violates PodSecurity ${JSON.stringify(levelVersion(enforce))}: ${forbiddenDetail(violations)}`;
  return new ApiStatusError(failureStatus(403, 'Forbidden', message, { name: podName, kind: 'pods' }));
}

function warningsAt(warn: LevelVersion, metadata: ObjectMeta | undefined, spec: PodSpec): string[] {
  const violations = evaluatePod(warn.level, metadata, spec);
  if (violations.length === 0) return [];
  return [`would violate PodSecurity ${JSON.stringify(levelVersion(warn))}: ${forbiddenDetail(violations)}`];
}

/**
 * Admission of a pod named `podName` in a namespace with these labels: throws the 403 when it
 * violates the enforced level; otherwise returns the warnings of the warn level (none when enforce
 * already checked the same level).
 */
export function admitPod(
  namespaceLabels: Readonly<Record<string, string>> | undefined,
  podName: string,
  pod: { metadata?: ObjectMeta; spec: PodSpec },
): string[] {
  const policy = namespacePolicy(namespaceLabels);
  const violations = evaluatePod(policy.enforce.level, pod.metadata, pod.spec);
  if (violations.length > 0) throw podSecurityForbidden(podName, policy.enforce, violations);
  return warningsAt(policy.warn, pod.metadata, pod.spec);
}

function labelsOfNamespace(store: ObjectStore, namespace: string | undefined): Record<string, string> | undefined {
  return namespace === undefined ? undefined : store.get('Namespace', undefined, namespace)?.metadata.labels;
}

/**
 * Pod Security on a pod create, where the API server runs it: after validation (422) and name
 * generation — so a refused pod's message carries its generated name, as the Job controller's
 * FailedCreate events show — and before the AlreadyExists check (409). Returns the body to store (a
 * generated name fixed in it, so the pod gets the name that was checked) and the warnings; throws the
 * 403 (or the 404 / 422 that come first).
 */
export function admitPodCreate(store: ObjectStore, namespace: string | undefined, body: KubeObject): { body: KubeObject; warnings: string[] } {
  let name: string;
  try {
    name = store.create('Pod', namespace, body, { dryRun: true }).metadata.name!;
  } catch (err) {
    const exists = err instanceof ApiStatusError && err.status.reason === 'AlreadyExists' && body.metadata.name;
    if (!exists) throw err;
    name = body.metadata.name!;
  }
  const pod = body as KubeObject & { spec?: PodSpec };
  const warnings = admitPod(labelsOfNamespace(store, namespace), name, { metadata: pod.metadata, spec: pod.spec ?? { containers: [] } });
  return { body: { ...body, metadata: { ...body.metadata, name } }, warnings };
}

/**
 * The warnings for a pod controller's create or update (ValidatePodController: workloads are never
 * refused, only warned about, from the warn level, which follows enforce when unset).
 */
export function podControllerWarnings(
  store: ObjectStore,
  namespace: string | undefined,
  template: { metadata?: ObjectMeta; spec?: PodSpec } | undefined,
): string[] {
  if (!template?.spec) return [];
  const policy = namespacePolicy(labelsOfNamespace(store, namespace));
  return warningsAt(policy.warn, template.metadata, template.spec);
}

/** Adds warnings to a response's headers as the API server does: `Warning: 299 - "<text>"`, after any there already. */
export function withWarnings(headers: Record<string, string> | undefined, warnings: readonly string[]): Record<string, string> | undefined {
  if (warnings.length === 0) return headers;
  const values = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  const existing = headers?.Warning;
  return { ...headers, Warning: [...(existing ? [existing] : []), ...values].join(', ') };
}
