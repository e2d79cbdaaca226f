/**
 * What a runner pod looks like from outside: the labels, names, ports, paths and argv shape that the
 * manifest builders (lambdas/cluster) produce and that kube-sim (local/kube-sim) and the watcher read.
 * One place, so the simulator and the real builders cannot drift apart.
 */

/** Labels every object carries (architecture §7). */
export const Labels = {
  managedBy: 'app.kubernetes.io/managed-by',
  runId: 'loadplane.io/run-id',
  /** `initializer` | `runner` | `coordinator` (Jobs) | `script` | `anchor` (ConfigMaps) */
  role: 'loadplane.io/role',
  /** 0-based runner index, on runner Jobs and their pods. */
  runnerIndex: 'loadplane.io/runner-index',
  engine: 'loadplane.io/engine',
} as const;
export const MANAGED_BY = 'loadplane';

/**
 * `coordinator`: k6's pod that runs setup() and teardown() once per run and no load (engines/k6/coordinator.ts).
 * `anchor`: the run's ConfigMap that owns every other object of the run and is owned by every Job of
 * it (cluster/manifests/anchor.ts, architecture §7).
 */
export const Role = { initializer: 'initializer', runner: 'runner', coordinator: 'coordinator', script: 'script', anchor: 'anchor' } as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Object names: `lp-<runId>-<role>[-<i>]` (≤ 63 chars since runId ≤ 26). */
export function objectName(runId: string, role: Role, index?: number): string {
  return index === undefined ? `lp-${runId}-${role}` : `lp-${runId}-${role}-${index}`;
}

/**
 * Every loadplane pod runs the engine's stock image with a fixed POSIX-sh script as its command
 * (lambdas/engines/pod-scripts.ts) and the engine's argv as its args, never through the shell:
 *   command: ['sh', '-c', <script>, <script name>]   args: ['k6', 'run', ...]
 * kube-sim tells runner pods apart by their labels (role, engine, runner index), never by the script.
 */
export const RUNNER_CONTAINER = 'runner';
export const POD_SHELL = 'sh';

/**
 * The line the runner script prints after the engine exits: this prefix, then the content of the file
 * ENV_RESULT_FILE names (k6's summary export) on one line. Collect reads it from the log.
 */
export const RESULT_LINE_PREFIX = 'LOADPLANE_RESULT ';
/** Env var naming the file whose content the runner script prints as the result line (k6 runners). */
export const ENV_RESULT_FILE = 'LOADPLANE_RESULT_FILE';

/**
 * The line the runner script prints last, after the engine exits (after the result line: a large export
 * spans many log records, and Collect reads the log's tail): this prefix, then
 * `start ` + the runner container's cgroup `cpu.stat` as it was just before the engine started, then
 * ` end ` + the same file after it exited, each file's lines joined by single spaces
 * (core/cpu-throttling.ts reads it). Only when ENV_CPU_STAT_FILES names a readable file.
 */
export const CPU_STAT_LINE_PREFIX = 'LOADPLANE_CPU_STAT ';
/**
 * Env var: the cgroup `cpu.stat` files the runner script tries, space-separated, the first readable one
 * used: cgroup v2 (the container's own cgroup at /sys/fs/cgroup), then cgroup v1's cpu controller.
 */
export const ENV_CPU_STAT_FILES = 'LOADPLANE_CPU_STAT_FILES';
export const CPU_STAT_FILES = '/sys/fs/cgroup/cpu.stat /sys/fs/cgroup/cpu/cpu.stat';

/** The writable emptyDir every pod gets (the root filesystem is read-only): k6's export and archive, Gatling's results, the JVM's /tmp. */
export const WORK_DIR = '/tmp';
export const K6_SUMMARY_EXPORT_PATH = `${WORK_DIR}/loadplane-summary.json`;
export const K6_ARCHIVE_PATH = `${WORK_DIR}/loadplane-archive.tar`;
/** Env var naming the archive the k6 initializer script writes and then inspects. */
export const ENV_ARCHIVE = 'LOADPLANE_ARCHIVE';
/** The line the k6 initializer script prints between `k6 archive` and `k6 inspect`: the requirements JSON follows it. */
export const REQUIREMENTS_MARKER = 'LOADPLANE_REQUIREMENTS';

/** Where the script ConfigMap is mounted, and the k6 REST API port. */
export const SCRIPT_MOUNT_PATH = '/loadplane/scripts';

/**
 * The volumes loadplane gives every pod (cluster/manifests/pod-template.ts): the script ConfigMap, the
 * WORK_DIR emptyDir, the script alone (Gatling) and the engine's other writable emptyDirs, `work-1`,
 * `work-2`, …. A volume of the spec's runner.volumes may not take these names.
 */
export const PodVolumes = { script: 'script', work: 'work', scriptAlone: 'script-alone' } as const;
export function writableVolumeName(i: number): string {
  return `${PodVolumes.work}-${i}`;
}
export const WRITABLE_VOLUME_NAME = /^work-[1-9][0-9]*$/;
/** Where every engine's pods have loadplane's mounts; each engine adds its own (EngineAdapter.podMountPaths). */
export const COMMON_MOUNT_PATHS: readonly string[] = [SCRIPT_MOUNT_PATH, WORK_DIR];
export const K6_API_PORT = 6565;

/** Env var carrying Gatling's common start instant (ISO 8601 UTC) to every runner, for people and simulations. */
export const ENV_START_AT = 'LOADPLANE_START_AT';
/** The same instant in whole epoch seconds: the runner script sleeps until `date +%s` reaches it. */
export const ENV_START_AT_EPOCH = 'LOADPLANE_START_AT_EPOCH';

/** A line kube-sim's simulated engines print first: the numbers that follow are synthetic. */
export const SIMULATED_OUTPUT_MARKER = 'kube-sim: simulated engine output, synthetic numbers';

/**
 * kube-sim fault injection by annotation, set through the spec's `runner.metadata.annotations` and
 * copied onto runner pods by the builders. Values are strings.
 */
export const SimAnnotations = {
  /** Exit code for runners (k6: 99 thresholds, 107 script error, 108 test.abort(), 137 OOM-kill). */
  exitCode: 'kube-sim.loadplane.io/exit-code',
  /** Comma-separated runner indexes the exit-code fault applies to (default: all). */
  faultRunners: 'kube-sim.loadplane.io/fault-runners',
  /** Pod scheduling delay (`5s`, `2m`, in simulated time) or `never`. */
  scheduleDelay: 'kube-sim.loadplane.io/schedule-delay',
  /** `true`: pods stay Pending with ErrImagePull / ImagePullBackOff. */
  imagePullFailure: 'kube-sim.loadplane.io/image-pull-failure',
  /** Simulated test duration when neither argv nor script says (`30s`). */
  duration: 'kube-sim.loadplane.io/duration',
  /** Iterations a k6 runner drops (`"60"`), for the runners faultRunners names (default: all). */
  droppedIterations: 'kube-sim.loadplane.io/dropped-iterations',
  /** Share of CPU periods a runner is throttled in (`"0.3"`), for the runners faultRunners names (default: all). */
  cpuThrottledShare: 'kube-sim.loadplane.io/cpu-throttled-share',
} as const;
