/**
 * k6 runner Jobs and their Services. Runner i of N runs its execution segment, paused, with the REST
 * API on K6_API_PORT; Start unpauses all of them at once through pods/proxy. The argv is k6-operator's
 * argv, with user arguments as separate entries before the script path.
 */
import type { V1Job, V1Service } from '@kubernetes/client-node';
import { K6_API_PORT, Labels, objectName, Role, SCRIPT_MOUNT_PATH } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { loadplaneJob, runnerPodFailurePolicy } from './job';
import { executionSegment, executionSegmentSequence } from './k6-segments';
import { objectLabels } from './labels';
import { loadplaneEnv } from './loadplane-env';
import { jobOwnerReference } from './owners';
import { podTemplate } from './pod-template';

export function k6RunnerArgv(plan: RunnerPlan, index: number): string[] {
  return [
    'k6',
    'run',
    '--quiet',
    `--execution-segment=${executionSegment(index, plan.parallelism)}`,
    `--execution-segment-sequence=${executionSegmentSequence(plan.parallelism)}`,
    ...plan.arguments,
    `${SCRIPT_MOUNT_PATH}/${plan.script.file}`,
    `--address=0.0.0.0:${K6_API_PORT}`,
    '--paused',
    '--tag',
    `instance_id=${index}`,
    '--tag',
    `testrun_name=${plan.name}`,
  ];
}

export function k6RunnerJob(plan: RunnerPlan, index: number): V1Job {
  const role = Role.runner;
  return loadplaneJob(plan, {
    name: objectName(plan.runId, role, index),
    role,
    index,
    deadlineSeconds: plan.deadlines.runSeconds,
    podFailurePolicy: runnerPodFailurePolicy(plan.onRunnerRestart),
    template: podTemplate(plan, {
      role,
      index,
      engineArgv: k6RunnerArgv(plan, index),
      loadplaneEnv: loadplaneEnv(plan, index),
      ports: [{ name: 'k6-api', containerPort: K6_API_PORT }],
    }),
  });
}

/**
 * A stable name for runner i's REST API inside the cluster (the control plane itself uses pods/proxy).
 * Owned by runner i's Job (same name), so Kubernetes deletes it with the Job.
 */
export function k6RunnerService(plan: RunnerPlan, index: number): V1Service {
  const role = Role.runner;
  const name = objectName(plan.runId, role, index);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: plan.namespace,
      labels: objectLabels(plan, role, index),
      ownerReferences: [jobOwnerReference(name)],
    },
    spec: {
      type: 'ClusterIP',
      selector: { [Labels.runId]: plan.runId, [Labels.role]: role, [Labels.runnerIndex]: String(index) },
      ports: [{ name: 'k6-api', port: K6_API_PORT, targetPort: K6_API_PORT, protocol: 'TCP' }],
    },
  };
}
