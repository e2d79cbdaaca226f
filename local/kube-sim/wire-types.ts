/**
 * The JSON shapes kube-sim reads and writes, as they travel on the wire (timestamps are RFC 3339
 * strings). Only the fields kube-sim looks at are typed; everything else passes through untouched.
 * (@kubernetes/client-node's model classes describe the deserialized form, with Date fields.)
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** `{ name, key, optional }` of a Secret's or ConfigMap's key (SecretKeySelector / ConfigMapKeySelector). */
export interface KeySelector {
  name: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  /** The kinds kube-sim's kubelet resolves; others (fieldRef, resourceFieldRef) give an empty value. */
  valueFrom?: { secretKeyRef?: KeySelector; configMapKeyRef?: KeySelector; [other: string]: unknown };
}

export interface EnvFromSource {
  prefix?: string;
  secretRef?: { name: string; optional?: boolean };
  configMapRef?: { name: string; optional?: boolean };
}

export interface ContainerPort {
  containerPort: number;
  name?: string;
  hostPort?: number;
}

/** A probe's or lifecycle handler's network target (only `host` is read, by Pod Security). */
export interface ProbeHandler {
  httpGet?: { host?: string } | null;
  tcpSocket?: { host?: string } | null;
}

/** The security-relevant fields of a container's securityContext (read by Pod Security admission). */
export interface SecurityContext {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  capabilities?: { add?: string[] | null; drop?: string[] | null } | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  procMount?: string | null;
  seccompProfile?: { type?: string; localhostProfile?: string } | null;
  appArmorProfile?: { type?: string; localhostProfile?: string } | null;
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string } | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
}

/** The security-relevant fields of a pod's securityContext (read by Pod Security admission). */
export interface PodSecurityContext {
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  seccompProfile?: { type?: string; localhostProfile?: string } | null;
  appArmorProfile?: { type?: string; localhostProfile?: string } | null;
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string } | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
  sysctls?: { name: string; value?: string }[] | null;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: ContainerPort[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
  securityContext?: SecurityContext | null;
  livenessProbe?: ProbeHandler | null;
  readinessProbe?: ProbeHandler | null;
  startupProbe?: ProbeHandler | null;
  lifecycle?: { postStart?: ProbeHandler | null; preStop?: ProbeHandler | null } | null;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> } | null;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  configMap?: { name: string; items?: KeyToPath[] | null; optional?: boolean | null };
  secret?: { secretName?: string; items?: KeyToPath[] | null; optional?: boolean | null };
  emptyDir?: { medium?: string; sizeLimit?: string | number } | null;
  projected?: {
    sources?: {
      configMap?: { name?: string; items?: KeyToPath[] | null; optional?: boolean | null };
      secret?: { name?: string; items?: KeyToPath[] | null; optional?: boolean | null };
    }[];
  } | null;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[] | null;
  volumes?: Volume[];
  restartPolicy?: string;
  nodeName?: string;
  securityContext?: PodSecurityContext | null;
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  hostUsers?: boolean | null;
  os?: { name: string } | null;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number;
        reason: string;
        message?: string;
        startedAt?: string;
        finishedAt: string;
      };
    };

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
}

export interface PodStatus {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  podIP?: string;
  podIPs?: { ip: string }[];
  hostIP?: string;
  startTime?: string;
  reason?: string;
  message?: string;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodFailurePolicyRule {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  onExitCodes?: { containerName?: string; operator: 'In' | 'NotIn'; values: number[] };
  onPodConditions?: { type: string; status?: string }[];
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  podFailurePolicy?: { rules: PodFailurePolicyRule[] };
  selector?: { matchLabels?: Record<string, string> };
  template: { metadata?: ObjectMeta; spec: PodSpec };
}

export interface JobCondition {
  type: 'Complete' | 'Failed';
  status: 'True';
  reason?: string;
  message?: string;
  lastProbeTime: string;
  lastTransitionTime: string;
}

export interface JobStatus {
  active?: number;
  ready?: number;
  succeeded?: number;
  failed?: number;
  startTime?: string;
  completionTime?: string;
  conditions?: JobCondition[];
}

export interface Job extends KubeObject {
  spec: JobSpec;
  status?: JobStatus;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** `data` values are base64; `stringData` exists only in a write (merged into `data`, secrets.ts). */
export interface Secret extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
}
