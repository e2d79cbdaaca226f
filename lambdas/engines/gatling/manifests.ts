/**
 * Gatling runner Jobs, on the user's image with `gatling.sh` (st-tech/gatling-operator's runner image is
 * the reference). Gatling has no pause/resume API, so every runner gets the same start instant
 * (ENV_START_AT_EPOCH) and the runner script sleeps until it: the start skew is the clock skew between
 * nodes, not the time N sequential API calls take.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ENV_START_AT, ENV_START_AT_EPOCH, objectName, Role, SCRIPT_MOUNT_PATH, WORK_DIR } from '../../core/runner-contract';
import { loadplaneJob, runnerPodFailurePolicy } from '../../cluster/manifests/job';
import { loadplaneEnv } from '../../cluster/manifests/loadplane-env';
import { podTemplate } from '../../cluster/manifests/pod-template';
import type { RunnerPlan } from '../../cluster/plan';
import { RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from '../pod-scripts';

/** The non-root user of gatling-operator's runner image (`USER 1000`). */
export const GATLING_UID = 1000;

/** Where each runner writes simulation.log, and its compiled simulations (the root filesystem is read-only). */
export const GATLING_RESULTS_DIR = `${WORK_DIR}/gatling-results`;
export const GATLING_BINARIES_DIR = `${WORK_DIR}/gatling-binaries`;

/**
 * The bundle's launcher: `-rm local` (since 3.8 it asks otherwise), `-bm` (batch mode: a question,
 * such as which simulation to run when several are mounted and `-s` names none, fails the runner at
 * once instead of waiting for input until the run's deadline), simulations from the script mount,
 * results and compiled classes in the emptyDir; the simulation class (`-s`) comes from the user's
 * arguments. Not `-nr`: Gatling prints its "Global Information" block (counts, response times,
 * percentiles: the runner's result) only while generating the HTML report (gatling-app
 * RunResultProcessor, 3.10–3.15); the report costs a few seconds and MB of the emptyDir.
 */
export function gatlingRunnerArgv(plan: RunnerPlan): string[] {
  return [
    'gatling.sh',
    '-rm',
    'local',
    '-bm',
    '-sf',
    SCRIPT_MOUNT_PATH,
    '-rf',
    GATLING_RESULTS_DIR,
    '-bf',
    GATLING_BINARIES_DIR,
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
      command: shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME),
      args: gatlingRunnerArgv(plan),
      loadplaneEnv: {
        ...loadplaneEnv(plan, index),
        [ENV_START_AT]: plan.startAt,
        [ENV_START_AT_EPOCH]: String(Math.ceil(Date.parse(plan.startAt) / 1000)),
      },
      runAsUser: GATLING_UID,
    }),
  });
}
