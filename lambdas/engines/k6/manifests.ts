/**
 * k6's Jobs, on the stock grafana/k6 image (architecture §7).
 *
 * The initializer runs K6_INITIALIZER_SCRIPT: `k6 archive` with the user's arguments, then `k6 inspect
 * --execution-requirements` on the archive (as k6-operator does), so --vus, --duration or -e count in
 * the maxVUs and totalDuration AwaitPrepared reads. A bad script fails this Job, and the run ends
 * FAILED with k6's message instead of hanging.
 *
 * Runner i of N runs its execution segment, paused, with the REST API on K6_API_PORT (k6-operator's
 * argv, the user's arguments as separate entries before the script path); Start unpauses all of them at
 * once through pods/proxy, so no Service is needed. The runner script prints k6's summary export as
 * the result line when k6 exits.
 *
 * With setupTeardown `perRun` (the default), every runner runs with --no-setup --no-teardown, and one
 * more Job, the coordinator, runs k6 paused with runner 0's segment and is never unpaused: Start asks
 * it to run setup() (POST /v1/setup) and hands its data to every runner (PUT /v1/setup); Cleanup asks
 * it to run teardown() (POST /v1/teardown) once every runner has finished (coordinator.ts). It runs
 * without the user's metrics outputs (docs/metrics-outputs.md): the runners stream the test's metrics.
 */
import type { V1Job } from '@kubernetes/client-node';
import {
  ENV_ARCHIVE,
  ENV_RESULT_FILE,
  ENV_CPU_STAT_FILES,
  CPU_STAT_FILES,
  K6_API_PORT,
  K6_ARCHIVE_PATH,
  K6_SUMMARY_EXPORT_PATH,
  objectName,
  Role,
  SCRIPT_MOUNT_PATH,
  WORK_DIR,
} from '../../core/runner-contract';
import { loadplaneJob } from '../../cluster/manifests/job';
import { SetupTeardown } from '../../core/status';
import { loadplaneEnv } from '../../cluster/manifests/loadplane-env';
import { podTemplate, type PodArg } from '../../cluster/manifests/pod-template';
import type { RunnerPlan } from '../../cluster/plan';
import { INITIALIZER_SCRIPT_NAME, K6_INITIALIZER_SCRIPT, RUNNER_SCRIPT, RUNNER_SCRIPT_NAME, shellCommand } from '../pod-scripts';
import { runnerJob } from '../runner-job';
import { archiveArguments, withoutOutputs } from './archive-arguments';
import { executionSegment, executionSegmentSequence } from './segments';
import { k6SummaryFlags } from './summary-export';
import { TEARDOWN_BUDGET_SECONDS } from '../../core/stage-timing';

/** grafana/k6's user (its Dockerfile: `USER 12345`). */
export const K6_UID = 12345;

/** Requests when the spec names none: k6 is a single Go process. */
export const K6_DEFAULT_REQUESTS = { cpu: '500m', memory: '1Gi' } as const;

/**
 * Env every k6 pod gets: k6 1.x's automatic extension resolution caches binaries under the home
 * directory's `.cache`, which the read-only root filesystem refuses; /tmp is the emptyDir.
 */
const K6_ENV = { XDG_CACHE_HOME: `${WORK_DIR}/.cache` };

/** The coordinator streams no metrics: the spec's K6_OUT is overridden (argv's -o/--out are dropped). */
const COORDINATOR_ENV = { K6_OUT: '' };

function scriptPath(plan: RunnerPlan): string {
  return `${SCRIPT_MOUNT_PATH}/${plan.script.file}`;
}

/**
 * The initializer script's positional parameters: the spec's env values as `-e` (k6 archive and inspect
 * do not pass the pod's environment to the script, so options computed from __ENV would be the script's
 * defaults; k6-operator does the same), the arguments `k6 archive` accepts, then the script.
 *
 * A referenced value (a Secret's or ConfigMap's key, `envFrom`) is only in the pod's environment, which
 * the kubelet fills: then `--include-system-env-vars` makes `k6 archive` take the whole environment into
 * the archive's env (k6 archive's default is false: internal/cmd/archive.go, runtimeOptionFlagSet(false)),
 * so __ENV holds it as in the runners (`k6 run` includes it by default). The archive stays in the pod's
 * emptyDir; `k6 inspect` prints options, not env.
 */
export function k6InitializerArgs(plan: RunnerPlan): string[] {
  const values = Object.entries(plan.env).flatMap(([name, value]) => (typeof value === 'string' ? ['-e', `${name}=${value}`] : []));
  const referenced = Object.values(plan.env).some((value) => typeof value !== 'string') || (plan.envFrom?.length ?? 0) > 0;
  return [...(referenced ? ['--include-system-env-vars'] : []), ...values, ...archiveArguments(plan.arguments), scriptPath(plan)];
}

export function k6InitializerJob(plan: RunnerPlan): V1Job {
  const role = Role.initializer;
  return loadplaneJob(plan, {
    name: objectName(plan.runId, role),
    role,
    deadlineSeconds: plan.deadlines.prepareSeconds,
    template: podTemplate(plan, {
      role,
      command: shellCommand(K6_INITIALIZER_SCRIPT, INITIALIZER_SCRIPT_NAME),
      args: k6InitializerArgs(plan),
      loadplaneEnv: { ...K6_ENV, ...loadplaneEnv(plan, 0), [ENV_ARCHIVE]: K6_ARCHIVE_PATH },
      runAsUser: K6_UID,
      defaultRequests: K6_DEFAULT_REQUESTS,
    }),
  });
}

/** The anchor's key holding the run's `--execution-segment-sequence`, and the variable its pods read it into. */
export const SEGMENT_SEQUENCE_KEY = 'k6-execution-segment-sequence';
export const ENV_SEGMENT_SEQUENCE = 'LOADPLANE_K6_SEGMENT_SEQUENCE';

/**
 * The sequence is one entry per runner boundary (about 9 KB at 1,000 runners): in every pod's args it
 * made every list of the run's pods and Jobs grow with N² (15 MB a list at 1,000). It is kept once per
 * cluster in the run's anchor; each pod reads it into ENV_SEGMENT_SEQUENCE and its argument refers to it.
 */
export function k6AnchorData(plan: RunnerPlan): Record<string, string> {
  return { [SEGMENT_SEQUENCE_KEY]: executionSegmentSequence(plan.parallelism) };
}

const K6_ANCHOR_ENV = { [ENV_SEGMENT_SEQUENCE]: SEGMENT_SEQUENCE_KEY };

/** `k6 run` of runner `index` (paused, its segment, the REST API); the coordinator's when `index` is Role.coordinator. */
export function k6RunnerArgv(plan: RunnerPlan, index: number | typeof Role.coordinator): PodArg[] {
  const coordinator = index === Role.coordinator;
  // The coordinator initializes runner 0's share of the VUs: a configuration every runner already
  // runs, so it cannot fail where they pass (an override such as --vus 1 --iterations 1 would, for a
  // script without a default function or with --stage). It is never unpaused: no load, no export, and
  // no metrics outputs (-o/--out dropped, K6_OUT emptied: k6CoordinatorJob), so the user's dashboards
  // see the runners only.
  const segment = coordinator ? 0 : index;
  return [
    'k6',
    'run',
    '--quiet',
    `--execution-segment=${executionSegment(segment, plan.parallelism)}`,
    { before: '--execution-segment-sequence=', variable: ENV_SEGMENT_SEQUENCE },
    ...(coordinator ? withoutOutputs(plan.arguments) : plan.arguments),
    scriptPath(plan),
    `--address=0.0.0.0:${K6_API_PORT}`,
    '--paused',
    '--tag',
    `instance_id=${index}`,
    '--tag',
    `testrun_name=${plan.name}`,
    // Last, so they win over the user's own.
    ...(plan.setupTeardown === SetupTeardown.perRun ? ['--no-setup', '--no-teardown'] : []),
    ...(coordinator ? [] : k6SummaryFlags(K6_SUMMARY_EXPORT_PATH)),
  ];
}

/**
 * The coordinator (setupTeardown perRun): a k6 like runner 0, paused for the whole run, that runs
 * setup() and teardown() through its REST API and no load. Its Job lives as long as the runners'
 * plus the time teardown() may take after them; it prints no result line.
 */
export function k6CoordinatorJob(plan: RunnerPlan): V1Job {
  const role = Role.coordinator;
  return loadplaneJob(plan, {
    name: objectName(plan.runId, role),
    role,
    deadlineSeconds: plan.deadlines.runSeconds === undefined ? undefined : plan.deadlines.runSeconds + TEARDOWN_BUDGET_SECONDS,
    template: podTemplate(plan, {
      role,
      command: shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME),
      args: k6RunnerArgv(plan, role),
      // K6_OUT empty is no output at all (k6's envconfig reads an empty list), whatever the spec's env says.
      loadplaneEnv: { ...K6_ENV, ...COORDINATOR_ENV, ...loadplaneEnv(plan, 0) },
      anchorEnv: K6_ANCHOR_ENV,
      runAsUser: K6_UID,
      defaultRequests: K6_DEFAULT_REQUESTS,
      ports: [{ name: 'k6-api', containerPort: K6_API_PORT }],
    }),
  });
}

export function k6RunnerJob(plan: RunnerPlan, index: number): V1Job {
  return runnerJob(plan, index, {
    args: k6RunnerArgv(plan, index),
    // The runner script prints the container's cgroup cpu.stat over the test (core/cpu-throttling.ts).
    loadplaneEnv: { ...K6_ENV, ...loadplaneEnv(plan, index), [ENV_RESULT_FILE]: K6_SUMMARY_EXPORT_PATH, [ENV_CPU_STAT_FILES]: CPU_STAT_FILES },
    anchorEnv: K6_ANCHOR_ENV,
    runAsUser: K6_UID,
    defaultRequests: K6_DEFAULT_REQUESTS,
    ports: [{ name: 'k6-api', containerPort: K6_API_PORT }],
  });
}
