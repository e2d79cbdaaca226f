/**
 * Gatling runner Jobs, on the user's image with `gatling.sh` (st-tech/gatling-operator's runner image is
 * the reference: the Gatling 3.10.5 bundle at /opt/gatling, files owned by uid 1000). Gatling has no
 * pause/resume API, so every runner gets the same start instant (ENV_START_AT_EPOCH) and the runner
 * script sleeps until it, then starts `gatling.sh`: the runners start the launcher together, but each
 * compiles the simulation before the load begins, so the load starts apart by the difference in
 * compile time (seconds, more on a small CPU request), not by the clock skew alone.
 */
import type { V1Job } from '@kubernetes/client-node';
import { CPU_STAT_FILES, ENV_CPU_STAT_FILES, ENV_START_AT, ENV_START_AT_EPOCH, SCRIPT_MOUNT_PATH, WORK_DIR } from '../../core/runner-contract';
import { loadplaneEnv } from '../../cluster/manifests/loadplane-env';
import type { RunnerPlan } from '../../cluster/plan';
import { runnerJob } from '../runner-job';
import { GATLING_SIMULATION_MOUNT, GATLING_WRITABLE_PATHS } from '../../core/gatling-pod-paths';

/**
 * The uid the Gatling pods run as: the reference image's `gatling` user (it declares no USER, so
 * without this it would run as root, which "restricted" refuses). An image of your own must work as it.
 */
export const GATLING_UID = 1000;

/**
 * Requests when the spec names none: the bundle runs the simulation in a JVM with `-Xmx1G` beside the
 * launcher's own (`-Xmx128M`), plus metaspace and Netty's off-heap buffers; 1 Gi would be OOM-killed.
 */
export const GATLING_DEFAULT_REQUESTS = { cpu: '1', memory: '2Gi' } as const;

/**
 * The simulations folder under the simulation's mount (GATLING_SIMULATION_MOUNT), and the whole script
 * ConfigMap as the resources folder (feeders, bodies: `csv("users.csv")`); results and compiled classes.
 */
export const GATLING_SIMULATIONS_DIR = `${GATLING_SIMULATION_MOUNT}/simulations`;
export const GATLING_RESOURCES_DIR = SCRIPT_MOUNT_PATH;
export const GATLING_RESULTS_DIR = `${WORK_DIR}/gatling-results`;
export const GATLING_BINARIES_DIR = `${WORK_DIR}/gatling-binaries`;

/**
 * The bundle's launcher: `-rm local` (since 3.8 it asks otherwise), the simulations folder holding the
 * simulation alone, the whole script ConfigMap as resources, results and compiled classes in the emptyDir, a run description (without one
 * Gatling asks for it on stdin, which a pod does not have), then the user's arguments (the simulation
 * class, `-s`). Not `-nr`: Gatling prints its "Global Information" block (counts, response times,
 * percentiles: the runner's result) only while it generates the HTML report (gatling-app
 * RunResultProcessor, 3.10–3.15); the report costs a few seconds and MB of the emptyDir.
 */
export function gatlingRunnerArgv(plan: RunnerPlan): string[] {
  // Only the exact tokens: the bundle forwards `-rd x` to the app but drops `--run-description=x`.
  const described = plan.arguments.some((a) => a === '-rd' || a === '--run-description');
  return [
    'gatling.sh',
    '-rm',
    'local',
    '-sf',
    GATLING_SIMULATIONS_DIR,
    '-rsf',
    GATLING_RESOURCES_DIR,
    '-rf',
    GATLING_RESULTS_DIR,
    '-bf',
    GATLING_BINARIES_DIR,
    ...(described ? [] : ['-rd', `loadplane run ${plan.runId}`]),
    ...plan.arguments,
  ];
}

export function gatlingRunnerJob(plan: RunnerPlan, index: number): V1Job {
  if (!plan.startAt) throw new Error(`gatling run ${plan.runId} has no start instant`);
  return runnerJob(plan, index, {
    args: gatlingRunnerArgv(plan),
    loadplaneEnv: {
      ...loadplaneEnv(plan, index),
      [ENV_START_AT]: plan.startAt,
      [ENV_START_AT_EPOCH]: String(Math.ceil(Date.parse(plan.startAt) / 1000)),
      // The runner script prints the container's cgroup cpu.stat over the test (core/cpu-throttling.ts).
      [ENV_CPU_STAT_FILES]: CPU_STAT_FILES,
    },
    runAsUser: GATLING_UID,
    defaultRequests: GATLING_DEFAULT_REQUESTS,
    scriptAloneAt: GATLING_SIMULATION_MOUNT,
    writablePaths: [...GATLING_WRITABLE_PATHS],
  });
}
