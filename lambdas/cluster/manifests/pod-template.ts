/**
 * The pod template every loadplane Job runs: the engine's stock image in one container, its command
 * the engine's fixed sh script (lambdas/engines/pod-scripts.ts) and its args the engine's argv, under
 * the Pod Security Standard "restricted" (non-root, no privilege escalation, every capability dropped,
 * seccomp RuntimeDefault) with a read-only root filesystem: the script is mounted read-only and
 * WORK_DIR is an emptyDir (k6's summary export and archive, Gatling's results and classes, the JVM's
 * temp files), plus the engine's other writable paths (Gatling's compiler cache). No Kubernetes API token.
 * The spec's pod fields (runner.volumes and volumeMounts after loadplane's, affinity, spread
 * constraints, pull secrets, priority class) go on every pod; spec validation keeps them off
 * loadplane's volumes and paths and within "restricted" (core/runner-pod-fields.ts).
 *
 * The kubelet expands `$(NAME)` in a container's command, args and env values (Kubernetes'
 * expansion rules: `$$` is a literal `$`), so the command, every argument and every env value rendered
 * here is escaped: a user's reaches the process as written, and so does the engine's script (its
 * `/proc/$$/cmdline` reached sh as `/proc/$/cmdline` before). The one expansion loadplane wants is explicit
 * (ArgWithVariable): an argument too long to repeat in every pod of a large run is read from the run's
 * anchor ConfigMap into a variable (anchorEnv) and referenced from the argument.
 */
import type { V1Affinity, V1EnvFromSource, V1EnvVar, V1EnvVarSource, V1PodTemplateSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import { Labels, PodVolumes, RUNNER_CONTAINER, Role, SCRIPT_MOUNT_PATH, WORK_DIR, writableVolumeName } from '../../core/runner-contract';
import type { EnvFrom, EnvReference, RunnerPlan } from '../plan';
import { objectLabels } from './labels';
import { anchorName } from './owners';
import { scriptConfigMapName } from './script-configmap';

export interface PodTemplateInput {
  role: Role;
  /** Runner index (runners only). */
  index?: number;
  /** The engine's sh script: `['sh', '-c', script, name]`. */
  command: string[];
  /** The engine's argv, the script's positional parameters: never seen by a shell. */
  args: PodArg[];
  /** LOADPLANE_* variables for this pod; they override user env of the same name. */
  loadplaneEnv: Record<string, string>;
  /** LOADPLANE_* variables read from a key of the run's anchor ConfigMap (variable → key): their values stay out of the pod spec. */
  anchorEnv?: Record<string, string>;
  /** The non-root uid of the engine's image. */
  runAsUser: number;
  ports?: { name: string; containerPort: number }[];
  /** Requests when the spec names neither a request nor a limit (the engine's needs: a JVM wants more). */
  defaultRequests: { cpu: string; memory: string };
  /**
   * Mount the script file a second time, alone, at `<this>/simulations/<file>` (a ConfigMap volume's
   * `items` into a sub-directory): a directory walk there sees the file once, not the volume's `..data`
   * links and timestamped copy (Gatling compiles every file under its simulations folder). The whole
   * ConfigMap stays at SCRIPT_MOUNT_PATH (feeders, bodies).
   */
  scriptAloneAt?: string;
  /** More writable emptyDirs the engine needs outside WORK_DIR (mount paths). */
  writablePaths?: string[];
}

/** An argument as written, or one that ends in a variable of the container's environment. */
export type PodArg = string | ArgWithVariable;

/** `before` as written, then the value of `variable` (the kubelet's `$(variable)`). */
export interface ArgWithVariable {
  before: string;
  variable: string;
}

/**
 * `text` as the kubelet passes it on unchanged: a `$` it would read as the start of `$$` or `$(` is
 * doubled (its expansion reads `$$` as one `$`); any other `$` it leaves alone, so scripts stay readable.
 */
export function kubeletLiteral(text: string): string {
  return text.replace(/\$(?=[$(])/g, '$$$$');
}

function renderArg(arg: PodArg): string {
  return typeof arg === 'string' ? kubeletLiteral(arg) : `${kubeletLiteral(arg.before)}$(${arg.variable})`;
}

export function podTemplate(plan: RunnerPlan, input: PodTemplateInput): V1PodTemplateSpec {
  const isRunner = input.role === Role.runner;
  // The spec's pod annotations (a sidecar switched off, a scheduler hint) go on every pod that runs the
  // test's script for its whole length: the runners and k6's coordinator; not the initializer.
  const annotated = isRunner || input.role === Role.coordinator;
  return {
    metadata: {
      labels: objectLabels(plan, input.role, input.index),
      ...(annotated && Object.keys(plan.podAnnotations).length > 0 ? { annotations: { ...plan.podAnnotations } } : {}),
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      ...(plan.serviceAccountName ? { serviceAccountName: plan.serviceAccountName } : {}),
      ...(plan.nodeSelector ? { nodeSelector: { ...plan.nodeSelector } } : {}),
      ...(plan.tolerations ? { tolerations: plan.tolerations.map((t) => ({ ...t })) } : {}),
      ...podAffinity(plan, isRunner),
      ...(plan.topologySpreadConstraints ? { topologySpreadConstraints: structuredClone(plan.topologySpreadConstraints) } : {}),
      ...(plan.imagePullSecrets ? { imagePullSecrets: plan.imagePullSecrets.map((s) => ({ ...s })) } : {}),
      ...(plan.priorityClassName ? { priorityClassName: plan.priorityClassName } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: input.runAsUser,
        runAsGroup: input.runAsUser,
        fsGroup: input.runAsUser,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: RUNNER_CONTAINER,
          image: plan.image,
          command: input.command.map(kubeletLiteral),
          args: input.args.map(renderArg),
          env: podEnv(plan, input.loadplaneEnv, input.anchorEnv ?? {}),
          ...(plan.envFrom && plan.envFrom.length > 0 ? { envFrom: plan.envFrom.map(podEnvFrom) } : {}),
          resources: resources(plan, input.defaultRequests),
          ...(input.ports ? { ports: input.ports.map((p) => ({ ...p, protocol: 'TCP' })) } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: input.runAsUser,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          // loadplane's mounts first, then the spec's (validated not to touch loadplane's paths or volumes).
          volumeMounts: [
            { name: PodVolumes.script, mountPath: SCRIPT_MOUNT_PATH, readOnly: true },
            { name: PodVolumes.work, mountPath: WORK_DIR },
            ...(input.scriptAloneAt ? [{ name: PodVolumes.scriptAlone, mountPath: input.scriptAloneAt, readOnly: true }] : []),
            ...(input.writablePaths ?? []).map((mountPath, i) => ({ name: writableVolumeName(i + 1), mountPath })),
            ...structuredClone(plan.volumeMounts ?? []),
          ],
        },
      ],
      volumes: [
        { name: PodVolumes.script, configMap: { name: scriptConfigMapName(plan) } },
        { name: PodVolumes.work, emptyDir: {} },
        ...(input.scriptAloneAt
          ? [
              {
                name: PodVolumes.scriptAlone,
                configMap: { name: scriptConfigMapName(plan), items: [{ key: plan.script.file, path: `simulations/${plan.script.file}` }] },
              },
            ]
          : []),
        ...(input.writablePaths ?? []).map((_, i) => ({ name: writableVolumeName(i + 1), emptyDir: {} })),
        ...structuredClone(plan.volumes ?? []),
      ],
    },
  };
}

/**
 * The spec's affinity, and for runners with `separate` the term below added to its required pod
 * anti-affinity: required terms all hold, so both the spec's rules and one runner per node do.
 */
function podAffinity(plan: RunnerPlan, isRunner: boolean): { affinity?: V1Affinity } {
  const separate = isRunner && plan.separate ? separateRunnersAffinity(plan.runId) : undefined;
  if (!plan.affinity) return separate ? { affinity: separate } : {};
  const affinity = structuredClone(plan.affinity);
  if (separate) {
    const anti = (affinity.podAntiAffinity ??= {});
    anti.requiredDuringSchedulingIgnoredDuringExecution = [
      ...(anti.requiredDuringSchedulingIgnoredDuringExecution ?? []),
      ...separate.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution!,
    ];
  }
  return { affinity };
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

/**
 * The spec's env, then loadplane's (which replace the spec's of the same name), then loadplane's from
 * the anchor; a reference becomes `valueFrom`, resolved by the kubelet: its value is never in the pod
 * spec. Explicit `env` entries win over `envFrom` in Kubernetes, so loadplane's own variables always do.
 */
function podEnv(plan: RunnerPlan, loadplane: Record<string, string>, fromAnchor: Record<string, string>): V1EnvVar[] {
  const anchor = Object.fromEntries(
    Object.entries(fromAnchor).map(([name, key]): [string, EnvReference] => [name, { configMapKeyRef: { name: anchorName(plan.runId), key } }]),
  );
  return Object.entries({ ...plan.env, ...loadplane, ...anchor }).map(([name, value]) =>
    typeof value === 'string' ? { name, value: kubeletLiteral(value) } : { name, valueFrom: envVarSource(value) },
  );
}

function envVarSource(ref: EnvReference): V1EnvVarSource {
  return 'secretKeyRef' in ref ? { secretKeyRef: { ...ref.secretKeyRef } } : { configMapKeyRef: { ...ref.configMapKeyRef } };
}

function podEnvFrom(source: EnvFrom): V1EnvFromSource {
  const from = 'secretRef' in source ? { secretRef: { ...source.secretRef } } : { configMapRef: { ...source.configMapRef } };
  return { ...(source.prefix ? { prefix: source.prefix } : {}), ...from };
}

/**
 * A request defaults to the limit when only the limit is given (as Kubernetes does), so defaults never
 * exceed a user's limit. Memory is always capped (limit = request unless given): a runner that leaks is
 * OOM-killed (exit 137, reported) instead of starving the node. CPU is not capped unless asked: a
 * throttled load generator silently produces less load.
 */
function resources(plan: RunnerPlan, defaults: { cpu: string; memory: string }): V1ResourceRequirements {
  const { requests = {}, limits = {} } = plan.resources;
  const cpu = requests.cpu ?? limits.cpu ?? defaults.cpu;
  const memory = requests.memory ?? limits.memory ?? defaults.memory;
  return {
    requests: { cpu, memory },
    limits: { memory: limits.memory ?? memory, ...(limits.cpu ? { cpu: limits.cpu } : {}) },
  };
}
