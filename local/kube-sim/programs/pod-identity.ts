/**
 * Which run, role, engine and runner a pod belongs to, from its labels alone (runner-contract.ts): the
 * pod's command is the engine's sh script, which kube-sim never interprets; the engine's argv is the
 * container's args (the script's positional parameters).
 */
import { Labels, RUNNER_CONTAINER } from '../../../lambdas/core/runner-contract';
import type { Container, Pod } from '../wire-types';

export interface PodIdentity {
  runId?: string;
  role?: string;
  engine?: string;
  runnerIndex?: number;
}

export function podIdentity(pod: Pod): PodIdentity {
  const labels = pod.metadata.labels ?? {};
  const index = labels[Labels.runnerIndex];
  return {
    runId: labels[Labels.runId],
    role: labels[Labels.role],
    engine: labels[Labels.engine],
    runnerIndex: index !== undefined && /^\d+$/.test(index) ? Number(index) : undefined,
  };
}

/** The container that runs the engine: the one named RUNNER_CONTAINER, else the first. */
export function engineContainer(pod: Pod): Container | undefined {
  return pod.spec.containers.find((c) => c.name === RUNNER_CONTAINER) ?? pod.spec.containers[0];
}

/** The engine's argv: the container's args (after the sh script in its command). */
export function engineArgv(container: Container): string[] {
  return container.args ?? [];
}
