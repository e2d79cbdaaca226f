/**
 * Maps an admitted run spec onto the manifest builders' narrow input (lambdas/cluster/plan.ts), so
 * the builders never depend on the spec's shape.
 */
import type { V1Toleration } from '@kubernetes/client-node';
import type { RunnerPlan, ScriptSource } from '../cluster/plan';
import { homeOf, type Placement } from '../core/placements';
import { setupTeardownOf, type RunSpec } from '../core/spec';
import { CleanupPolicy } from '../core/status';

/**
 * Finished Jobs stay this long for Collect and inspection (Cleanup normally deletes them first; this
 * is the backstop when the control plane never comes back); longer when the spec keeps them. Hours,
 * not minutes: under kube-sim's time scale (600× in tests) an hour passes in six real seconds, and a
 * busy machine must not lose a runner's pod before Start or Collect reads it.
 */
const TTL_AFTER_FINISHED_SECONDS = 6 * 60 * 60;
const TTL_AFTER_FINISHED_KEPT_SECONDS = 24 * 60 * 60;

/** Each stage gives the deadline of the Jobs it creates, from what it knows then (architecture §7). */
export interface PlanTiming {
  /** Prepare: seconds the initializer Job may live (from Prepare to the prepare deadline). */
  prepareSeconds?: number;
  /** Launch: seconds the runner Jobs may live (runnerJobDeadlineSeconds: ready deadline + run phase, not the total). */
  runSeconds?: number;
  /** Gatling: the common start instant (ISO 8601 UTC). */
  startAt?: string;
}

/** `at`: the cluster the plan builds for (its namespace and block of runners); default the run's home. */
export function runnerPlan(runId: string, spec: RunSpec, timing: PlanTiming, at: Placement = homeOf(spec)): RunnerPlan {
  const script: ScriptSource =
    'inline' in spec.script
      ? { kind: 'inline', file: spec.script.filename, content: spec.script.inline }
      : { kind: 'configMap', name: spec.script.configMap.name, file: spec.script.configMap.file };
  return {
    runId,
    name: spec.name,
    engine: spec.engine,
    namespace: at.namespace,
    image: spec.runner.image,
    parallelism: spec.parallelism,
    block: { first: at.first, runners: at.runners, home: at.home },
    separate: spec.separate,
    arguments: spec.arguments,
    env: spec.env,
    ...(spec.envFrom ? { envFrom: spec.envFrom } : {}),
    resources: spec.runner.resources,
    nodeSelector: spec.runner.nodeSelector,
    tolerations: spec.runner.tolerations as V1Toleration[],
    ...(spec.runner.serviceAccountName ? { serviceAccountName: spec.runner.serviceAccountName } : {}),
    ...podFields(spec.runner),
    podLabels: { ...spec.labels, ...spec.runner.metadata.labels },
    podAnnotations: spec.runner.metadata.annotations,
    script,
    deadlines: {
      ...(timing.prepareSeconds === undefined ? {} : { prepareSeconds: timing.prepareSeconds }),
      ...(timing.runSeconds === undefined ? {} : { runSeconds: timing.runSeconds }),
      ttlSecondsAfterFinished: spec.cleanup === CleanupPolicy.never ? TTL_AFTER_FINISHED_KEPT_SECONDS : TTL_AFTER_FINISHED_SECONDS,
    },
    onRunnerRestart: spec.onRunnerRestart,
    setupTeardown: setupTeardownOf(spec),
    ...(timing.startAt ? { startAt: timing.startAt } : {}),
  };
}

/** The spec's pod fields that are set (runner-pod-fields.ts), as the builders take them. */
function podFields(
  runner: RunSpec['runner'],
): Pick<RunnerPlan, 'volumes' | 'volumeMounts' | 'affinity' | 'topologySpreadConstraints' | 'imagePullSecrets' | 'priorityClassName'> {
  const { volumes, volumeMounts, affinity, topologySpreadConstraints, imagePullSecrets, priorityClassName } = runner;
  return {
    ...(volumes ? { volumes } : {}),
    ...(volumeMounts ? { volumeMounts } : {}),
    ...(affinity ? { affinity } : {}),
    ...(topologySpreadConstraints ? { topologySpreadConstraints } : {}),
    ...(imagePullSecrets ? { imagePullSecrets } : {}),
    ...(priorityClassName ? { priorityClassName } : {}),
  };
}
