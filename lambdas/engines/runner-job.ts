/**
 * Runner i's Job, whatever the engine: the run's Job shell (the run phase's deadline, the restart policy)
 * around a pod that runs the runner script with the engine's argv. Each engine gives only its pod's own
 * parts (argv, env, uid, defaults, mounts, ports).
 */
import type { V1Job } from '@kubernetes/client-node';
import { loadplaneJob, runnerPodFailurePolicy } from '../cluster/manifests/job';
import { podTemplate, type PodTemplateInput } from '../cluster/manifests/pod-template';
import type { RunnerPlan } from '../cluster/plan';
import { objectName, Role } from '../core/runner-contract';
import { RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from './pod-scripts';

export function runnerJob(plan: RunnerPlan, index: number, pod: Omit<PodTemplateInput, 'role' | 'index' | 'command'>): V1Job {
  const role = Role.runner;
  return loadplaneJob(plan, {
    name: objectName(plan.runId, role, index),
    role,
    index,
    deadlineSeconds: plan.deadlines.runSeconds,
    podFailurePolicy: runnerPodFailurePolicy(plan.onRunnerRestart),
    template: podTemplate(plan, { ...pod, role, index, command: shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME) }),
  });
}

/** The runner indexes a plan's cluster holds: its block of the run's N (RunnerPlan.block). */
export function blockIndexes(plan: RunnerPlan): number[] {
  return Array.from({ length: plan.block.runners }, (_, i) => plan.block.first + i);
}
