/**
 * What a runner pod looks like from outside: the labels, names, ports, paths and argv shape that the
 * manifest builders (lambdas/cluster) produce and that kube-sim (local/kube-sim) and the watcher read.
 * One place, so the simulator and the real builders cannot drift apart.
 */

/** Labels every object carries (architecture §7). */
export const Labels = {
  managedBy: 'app.kubernetes.io/managed-by',
  runId: 'loadplane.io/run-id',
  /** `initializer` | `runner` | `script` (ConfigMap) */
  role: 'loadplane.io/role',
  /** 0-based runner index, on runner Jobs, their pods and Services. */
  runnerIndex: 'loadplane.io/runner-index',
  engine: 'loadplane.io/engine',
} as const;
export const MANAGED_BY = 'loadplane';

export const Role = { initializer: 'initializer', runner: 'runner', script: 'script' } as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Object names: `lp-<runId>-<role>[-<i>]` (≤ 63 chars since runId ≤ 26). */
export function objectName(runId: string, role: Role, index?: number): string {
  return index === undefined ? `lp-${runId}-${role}` : `lp-${runId}-${role}-${index}`;
}

/** The container every loadplane pod runs: the wrapper, then `--`, then the engine's argv. */
export const RUNNER_CONTAINER = 'runner';
export const WRAPPER_COMMAND = '/loadplane/runner';
/**
 * args = ['--engine', 'k6'|'gatling', '--role', 'initializer'|'runner', '--index', '<i>', '--', ...engineArgv]
 * The wrapper execs engineArgv (no shell), prints `LOADPLANE_SUMMARY {json}` (summary.ts) for runners,
 * and exits with the engine's exit code.
 */
export const WRAPPER_ARGV_SEPARATOR = '--';

/** Where the script ConfigMap is mounted, and the k6 REST API port. */
export const SCRIPT_MOUNT_PATH = '/loadplane/scripts';
export const K6_API_PORT = 6565;

/** Env var carrying Gatling's common start instant (ISO 8601 UTC) to every runner. */
export const ENV_START_AT = 'LOADPLANE_START_AT';

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
} as const;
