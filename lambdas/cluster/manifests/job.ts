/**
 * The Job shell shared by initializer and runners: one pod, never retried by Kubernetes (a failed
 * runner is a fact Watch reports, not something to paper over), and Kubernetes as the dead-man switch
 * (architecture §7): `activeDeadlineSeconds` stops it and `ttlSecondsAfterFinished` removes it even if the
 * control plane never comes back.
 */
import type { V1Job, V1PodFailurePolicy, V1PodTemplateSpec } from '@kubernetes/client-node';
import { RunnerRestartPolicy } from '../../core/status';
import type { Role } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { objectLabels } from './labels';
import { anchorOwnerReference } from './owners';

/** Added to a phase's deadline: our own deadline (Step Functions) must fire first and clean up properly. */
export const JOB_DEADLINE_GRACE_SECONDS = 300;

export interface JobInput {
  name: string;
  role: Role;
  index?: number;
  template: V1PodTemplateSpec;
  /** The phase deadline in seconds from now; the grace is added here. Undefined: the plan lacks it (a bug). */
  deadlineSeconds: number | undefined;
  podFailurePolicy?: V1PodFailurePolicy;
}

export function loadplaneJob(plan: RunnerPlan, input: JobInput): V1Job {
  // A Job without a deadline would be no dead-man switch at all; the stage that builds it must know one.
  if (input.deadlineSeconds === undefined)
    throw new Error(`${input.name}: the plan has no deadline for this Job (a ${input.role} Job needs its stage's timing)`);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    // Owned by the run's anchor (owners.ts): a Job the API server creates after Cleanup is collected.
    metadata: {
      name: input.name,
      namespace: plan.namespace,
      labels: objectLabels(plan, input.role, input.index),
      ownerReferences: [anchorOwnerReference(plan.runId)],
    },
    spec: {
      backoffLimit: 0,
      parallelism: 1,
      completions: 1,
      activeDeadlineSeconds: input.deadlineSeconds + JOB_DEADLINE_GRACE_SECONDS,
      ttlSecondsAfterFinished: plan.deadlines.ttlSecondsAfterFinished,
      template: input.template,
      ...(input.podFailurePolicy ? { podFailurePolicy: input.podFailurePolicy } : {}),
    },
  };
}

/**
 * With `restart`, an evicted or preempted runner pod (condition DisruptionTarget) does not count
 * against backoffLimit 0: the Job makes a new pod and Watch starts it. With `fail`, no rule: the
 * disruption fails the Job, and the run.
 */
export function runnerPodFailurePolicy(policy: RunnerRestartPolicy): V1PodFailurePolicy | undefined {
  if (policy !== RunnerRestartPolicy.restart) return undefined;
  return { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] };
}
