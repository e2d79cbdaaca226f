/**
 * Gatling runner Jobs. Gatling has no pause/resume API, so every runner gets the same start instant
 * (ENV_START_AT) and the wrapper sleeps until it: the start skew is the clock skew between nodes, not
 * the time N sequential API calls take.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ENV_START_AT, objectName, Role, SCRIPT_MOUNT_PATH } from '../../core/runner-contract';
import type { RunnerPlan } from '../plan';
import { loadplaneJob, runnerPodFailurePolicy } from './job';
import { loadplaneEnv } from './loadplane-env';
import { podTemplate } from './pod-template';

/** Where each runner writes simulation.log (the /tmp emptyDir; the root filesystem is read-only). */
export const GATLING_RESULTS_DIR = '/tmp/gatling-results';

/** Gatling bundle's launcher, simulations from the script mount; the simulation class comes from user args. */
export function gatlingRunnerArgv(plan: RunnerPlan): string[] {
  return [
    'gatling.sh',
    '--simulations-folder',
    SCRIPT_MOUNT_PATH,
    '--results-folder',
    GATLING_RESULTS_DIR,
    ...plan.arguments,
  ];
}

export function gatlingRunnerJob(plan: RunnerPlan, index: number): V1Job {
  if (!plan.startAt) throw new Error(`gatling run ${plan.runId} has no start instant`);
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
      engineArgv: gatlingRunnerArgv(plan),
      loadplaneEnv: { ...loadplaneEnv(plan, index), [ENV_START_AT]: plan.startAt },
    }),
  });
}
