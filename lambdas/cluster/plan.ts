/**
 * The narrow input of the manifest builders: everything they need to know about one run, already
 * validated and defaulted. The stages map a run spec to a RunnerPlan; the builders never see the spec,
 * so the spec schema can change without touching them.
 */
import type { V1Affinity, V1LocalObjectReference, V1Toleration, V1TopologySpreadConstraint, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { Engine, RunnerRestartPolicy, SetupTeardown } from '../core/status';

/** The script as given inline (we create `lp-<runId>-script`) or as an existing ConfigMap in the namespace. */
export type ScriptSource = { kind: 'inline'; file: string; content: string } | { kind: 'configMap'; name: string; file: string };

/** CPU/memory as Kubernetes quantities (`500m`, `1Gi`). Missing fields take the builders' defaults. */
export interface ResourceQuantities {
  cpu?: string;
  memory?: string;
}

/** An env value the kubelet reads from a Secret or ConfigMap of the run's namespace (Kubernetes' EnvVarSource). */
export type EnvReference =
  { secretKeyRef: { name: string; key: string; optional?: boolean } } | { configMapKeyRef: { name: string; key: string; optional?: boolean } };

/** Every key of a Secret or ConfigMap as env vars, named `prefix` + key (Kubernetes' EnvFromSource). */
export type EnvFrom = ({ secretRef: { name: string; optional?: boolean } } | { configMapRef: { name: string; optional?: boolean } }) & {
  prefix?: string;
};

export interface RunnerPlan {
  runId: string;
  /** The run's human name, tagged on k6 metrics as `testrun_name`. */
  name: string;
  engine: Engine;
  namespace: string;
  image: string;
  /** Number of runners (N) of the whole run, in every cluster: the execution-segment sequence is over N. */
  parallelism: number;
  /**
   * The runners this plan's cluster holds (core/placements.ts): indexes `first` .. `first + runners - 1`
   * of the run's N; `home`: the cluster of the k6 initializer and coordinator. A run in one cluster: all
   * N, home.
   */
  block: { first: number; runners: number; home: boolean };
  /** One runner per node: anti-affinity between this run's runners only. */
  separate: boolean;
  /** User arguments for the engine, one argv entry each; never joined, never seen by a shell. */
  arguments: string[];
  /** User environment, values or references; LOADPLANE_* variables set by the builders take precedence. */
  env: Record<string, string | EnvReference>;
  /** Whole Secrets/ConfigMaps as env; `env` and the builders' variables win over them (as Kubernetes does). */
  envFrom?: EnvFrom[];
  resources: { requests?: ResourceQuantities; limits?: ResourceQuantities };
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  serviceAccountName?: string;
  /**
   * The spec's pod fields for a shared cluster, on every pod of the run (the k6 initializer and
   * coordinator too): user volumes and their mounts (beside loadplane's, never in place of them),
   * affinity (runners with `separate` also get its anti-affinity term), spread constraints, pull
   * secrets, priority class.
   */
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  affinity?: V1Affinity;
  topologySpreadConstraints?: V1TopologySpreadConstraint[];
  imagePullSecrets?: V1LocalObjectReference[];
  priorityClassName?: string;
  /** User labels, on every object (loadplane's own labels win on a clash). */
  podLabels: Record<string, string>;
  /** User annotations, on runner pods (kube-sim's fault annotations travel this way). */
  podAnnotations: Record<string, string>;
  script: ScriptSource;
  /** Each from what the stage building the plan knows: a Job whose deadline is absent is not built (job.ts throws). */
  deadlines: {
    /** How long the initializer Job may live, from Prepare (set by Prepare). */
    prepareSeconds?: number;
    /** How long runner Jobs may live, from Launch: ready deadline + run phase, never past the total (set by Launch). */
    runSeconds?: number;
    /** How long finished Jobs stay for inspection before Kubernetes deletes them. */
    ttlSecondsAfterFinished: number;
  };
  onRunnerRestart: RunnerRestartPolicy;
  /** k6: `perRun` adds the coordinator Job at Launch and runs every runner with --no-setup --no-teardown. */
  setupTeardown: SetupTeardown;
  /** Gatling only: the common start instant (ISO 8601 UTC) every runner waits for. */
  startAt?: string;
}
