/** Small edits of a pod's status the kubelet makes: conditions and container states. */
import type { ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from './wire-types';

/** Sets a condition, keeping lastTransitionTime when its status does not change. */
export function setCondition(status: PodStatus, now: string, type: string, value: PodCondition['status'], reason?: string, message?: string): void {
  const conditions = (status.conditions ??= []);
  const existing = conditions.find((c) => c.type === type);
  const next: PodCondition = {
    type,
    status: value,
    lastTransitionTime: existing && existing.status === value ? existing.lastTransitionTime : now,
  };
  if (reason) next.reason = reason;
  if (message) next.message = message;
  if (existing) conditions[conditions.indexOf(existing)] = next;
  else conditions.push(next);
}

/** Sets every container's state (initial statuses are created as needed). */
export function setAllContainers(pod: Pod, state: ContainerState): void {
  const status = (pod.status ??= { phase: 'Pending' });
  status.containerStatuses = pod.spec.containers.map((c) => ({ ...initialStatus(pod, c.name), state }));
}

export function setContainer(pod: Pod, name: string, state: ContainerState, fields: Partial<ContainerStatus> = {}): void {
  const status = (pod.status ??= { phase: 'Pending' });
  const statuses = (status.containerStatuses ??= pod.spec.containers.map((c) => initialStatus(pod, c.name)));
  const index = statuses.findIndex((s) => s.name === name);
  const next = { ...(index >= 0 ? statuses[index]! : initialStatus(pod, name)), ...fields, state };
  if (index >= 0) statuses[index] = next;
  else statuses.push(next);
}

function initialStatus(pod: Pod, name: string): ContainerStatus {
  const existing = pod.status?.containerStatuses?.find((s) => s.name === name);
  if (existing) return existing;
  const image = pod.spec.containers.find((c) => c.name === name)?.image;
  return { name, image, imageID: '', ready: false, started: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } };
}

export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}
