/**
 * Reading a loadplane runner container the way the wrapper does (runner-contract.ts):
 * command ['/loadplane/runner'], args ['--engine', e, '--role', r, '--index', i, '--', ...engineArgv].
 */
import { Labels, RUNNER_CONTAINER, WRAPPER_ARGV_SEPARATOR, WRAPPER_COMMAND } from '../../../lambdas/core/runner-contract';
import type { Container, Pod } from '../wire-types';

export interface WrapperInvocation {
  engine?: string;
  role?: string;
  index?: number;
  engineArgv: string[];
}

/** Undefined when the container does not run the loadplane wrapper. */
export function parseWrapperInvocation(container: Container): WrapperInvocation | undefined {
  if (container.command?.[0] !== WRAPPER_COMMAND) return undefined;
  const args = container.args ?? [];
  const separator = args.indexOf(WRAPPER_ARGV_SEPARATOR);
  const own = separator >= 0 ? args.slice(0, separator) : args;
  const invocation: WrapperInvocation = { engineArgv: separator >= 0 ? args.slice(separator + 1) : [] };
  for (let i = 0; i < own.length; i += 2) {
    const value = own[i + 1];
    if (own[i] === '--engine') invocation.engine = value;
    if (own[i] === '--role') invocation.role = value;
    if (own[i] === '--index' && value !== undefined && /^\d+$/.test(value)) invocation.index = Number(value);
  }
  return invocation;
}

export interface PodIdentity {
  runId?: string;
  role?: string;
  runnerIndex?: number;
}

/** Which run, role and runner a pod belongs to, from its labels and its wrapper argv. */
export function podIdentity(pod: Pod): PodIdentity {
  const labels = pod.metadata.labels ?? {};
  const container = pod.spec.containers.find((c) => c.name === RUNNER_CONTAINER) ?? pod.spec.containers[0];
  const invocation = container && parseWrapperInvocation(container);
  const labelIndex = labels[Labels.runnerIndex];
  return {
    runId: labels[Labels.runId],
    role: invocation?.role ?? labels[Labels.role],
    runnerIndex: invocation?.index ?? (labelIndex !== undefined && /^\d+$/.test(labelIndex) ? Number(labelIndex) : undefined),
  };
}
