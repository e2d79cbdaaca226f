/**
 * The pod template every loadplane Job runs: the wrapper in one container under the restricted Pod
 * Security Standard, the script mounted read-only, a writable /tmp (the root filesystem is read-only;
 * k6's summary export and Gatling's results go there), no Kubernetes API token.
 */
import type { V1Affinity, V1EnvVar, V1PodTemplateSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import {
  Labels,
  RUNNER_CONTAINER,
  Role,
  SCRIPT_MOUNT_PATH,
  WRAPPER_ARGV_SEPARATOR,
  WRAPPER_COMMAND,
} from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { objectLabels } from './labels';
import { scriptConfigMapName } from './script-configmap';

/** The non-root user the runner images are built for (runner/Dockerfile.k6). */
export const RUNNER_UID = 12345;

/** Requests when the plan names neither a request nor a limit. */
export const DEFAULT_REQUESTS = { cpu: '500m', memory: '1Gi' } as const;

export interface PodTemplateInput {
  role: Role;
  /** Runner index; the initializer runs as index 0 for the wrapper but carries no index label. */
  index?: number;
  engineArgv: string[];
  /** LOADPLANE_* variables for this pod; they override user env of the same name. */
  loadplaneEnv: Record<string, string>;
  ports?: { name: string; containerPort: number }[];
}

export function podTemplate(plan: RunnerPlan, input: PodTemplateInput): V1PodTemplateSpec {
  const isRunner = input.role === Role.runner;
  const wrapperArgs = ['--engine', plan.engine, '--role', input.role, '--index', String(input.index ?? 0)];
  return {
    metadata: {
      labels: objectLabels(plan, input.role, input.index),
      ...(isRunner && Object.keys(plan.podAnnotations).length > 0 ? { annotations: { ...plan.podAnnotations } } : {}),
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      ...(plan.serviceAccountName ? { serviceAccountName: plan.serviceAccountName } : {}),
      ...(plan.nodeSelector ? { nodeSelector: { ...plan.nodeSelector } } : {}),
      ...(plan.tolerations ? { tolerations: plan.tolerations.map((t) => ({ ...t })) } : {}),
      ...(isRunner && plan.separate ? { affinity: separateRunnersAffinity(plan.runId) } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: RUNNER_UID,
        runAsGroup: RUNNER_UID,
        fsGroup: RUNNER_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: RUNNER_CONTAINER,
          image: plan.image,
          command: [WRAPPER_COMMAND],
          args: [...wrapperArgs, WRAPPER_ARGV_SEPARATOR, ...input.engineArgv],
          env: podEnv(plan.env, input.loadplaneEnv),
          resources: resources(plan),
          ...(input.ports ? { ports: input.ports.map((p) => ({ ...p, protocol: 'TCP' })) } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumeMounts: [
            { name: 'script', mountPath: SCRIPT_MOUNT_PATH, readOnly: true },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        },
      ],
      volumes: [
        { name: 'script', configMap: { name: scriptConfigMapName(plan) } },
        { name: 'tmp', emptyDir: {} },
      ],
    },
  };
}

/**
 * One runner per node, repelling only this run's runners: k6-operator matched every run's runners,
 * so two simultaneous runs blocked each other (k6-operator #126).
 */
export function separateRunnersAffinity(runId: string): V1Affinity {
  return {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        {
          topologyKey: 'kubernetes.io/hostname',
          labelSelector: { matchLabels: { [Labels.runId]: runId, [Labels.role]: Role.runner } },
        },
      ],
    },
  };
}

function podEnv(user: Record<string, string>, loadplane: Record<string, string>): V1EnvVar[] {
  return Object.entries({ ...user, ...loadplane }).map(([name, value]) => ({ name, value }));
}

/**
 * A request defaults to the limit when only the limit is given (as Kubernetes does), so defaults never
 * exceed a user's limit. Memory is always capped (limit = request unless given): a runner that leaks is
 * OOM-killed (exit 137, reported) instead of starving the node. CPU is not capped unless asked: a
 * throttled load generator silently produces less load.
 */
function resources(plan: RunnerPlan): V1ResourceRequirements {
  const { requests = {}, limits = {} } = plan.resources;
  const cpu = requests.cpu ?? limits.cpu ?? DEFAULT_REQUESTS.cpu;
  const memory = requests.memory ?? limits.memory ?? DEFAULT_REQUESTS.memory;
  return {
    requests: { cpu, memory },
    limits: { memory: limits.memory ?? memory, ...(limits.cpu ? { cpu: limits.cpu } : {}) },
  };
}
