/**
 * Deadlines of a run (architecture §6), as absolute instants in epoch ms. Admit fixes the whole run's
 * deadline and Prepare's; the ready and run deadlines are fixed when their phase begins (at Launch and
 * at Start), because a phase's allowance must not be eaten by a slow phase before it. Every deadline
 * is capped by the whole run's, so the run always ends by `totalBy` whatever the phases add up to.
 *
 * The deployment bounds each phase (maxPrepareSeconds, maxReadySeconds, maxRunDurationSeconds: the
 * longest test), so the longest admissible total is their sum, and the state machine's own
 * TimeoutSeconds is that plus the finish budget: a run's `totalBy` always passes first, and the
 * run ends TIMED_OUT with the phase named, not by an anonymous execution timeout.
 */
import type { DeploymentConfig } from './config';

/** The waiting phases that have a deadline each; their names are the spec's `timeouts` keys. */
export const Phase = { prepare: 'prepare', ready: 'ready', run: 'run' } as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** A validated spec's `timeouts`, in seconds. Without `run`, the run phase gets the expected duration + grace. */
export interface PhaseTimeouts {
  prepare: number;
  ready: number;
  run?: number;
  total?: number;
}

/** The deployment's limit on each phase, in seconds (lambdas/core/config.ts). */
export type PhaseLimits = Pick<DeploymentConfig, 'maxPrepareSeconds' | 'maxReadySeconds' | 'maxRunDurationSeconds'>;
/** The limits the state machine's timeout is made of: the phases, and the longest wait for a concurrency slot. */
export type MachineLimits = PhaseLimits & Pick<DeploymentConfig, 'maxQueueSeconds'>;

export interface AdmitDeadlines {
  prepareBy: number;
  totalBy: number;
}

/** Least time added to the expected run duration: covers setup()/teardown(), which k6 inspect does not count. */
export const MIN_RUN_GRACE_SECONDS = 60;
/** Share of the expected duration added on long runs, where a fixed minute would be too tight. */
export const RUN_GRACE_FRACTION = 0.1;

/**
 * What the state machine allows beyond the longest admissible total: Admit (before `totalBy` is
 * fixed), the Task that sees `totalBy` pass, and the finish phases (Collect, Decide, Notify, Cleanup,
 * or the fail path), each with every retry. Generous on purpose: it only delays the execution
 * timeout of a run that is stuck anyway. A test checks it covers the longest path of Tasks through
 * run.asl.json with every attempt timing out.
 */
export const FINISH_PHASES_SECONDS = 2 * 60 * 60;

const MS = 1000;

/** The longest `timeouts.total` a spec may have: the phase maxima together, so a test of maxRunDurationSeconds fits. */
export function maxTotalSeconds(limits: PhaseLimits): number {
  return limits.maxPrepareSeconds + limits.maxReadySeconds + limits.maxRunDurationSeconds;
}

/**
 * The state machine's TimeoutSeconds (architecture §6): the longest wait for a concurrency slot, then
 * the longest admissible total (its deadlines are fixed when the slot is taken), plus the finish budget.
 */
export function stateMachineTimeoutSeconds(limits: MachineLimits): number {
  return limits.maxQueueSeconds + maxTotalSeconds(limits) + FINISH_PHASES_SECONDS;
}

/**
 * `total` when the spec gives none: its phases together, the run phase at the longest test when it
 * has no `run` (its expected duration is only known after Prepare); never above maxTotalSeconds.
 */
export function defaultTotalSeconds(timeouts: Omit<PhaseTimeouts, 'total'>, limits: PhaseLimits): number {
  return Math.min(timeouts.prepare + timeouts.ready + (timeouts.run ?? limits.maxRunDurationSeconds), maxTotalSeconds(limits));
}

/**
 * At Admit: the run must end by `total` (by the spec rule's default when absent), never later than
 * the longest admissible total, so it ends before the state machine's own timeout.
 */
export function admitDeadlines(now: number, timeouts: PhaseTimeouts, limits: PhaseLimits): AdmitDeadlines {
  const total = Math.min(timeouts.total ?? defaultTotalSeconds(timeouts, limits), maxTotalSeconds(limits));
  const totalBy = now + total * MS;
  return { prepareBy: Math.min(now + timeouts.prepare * MS, totalBy), totalBy };
}

/** At Launch: runner pods must be Running and answering within `ready` (slow schedulers such as Fargate need minutes). */
export function readyDeadline(launchedAt: number, timeouts: Pick<PhaseTimeouts, 'ready'>, totalBy: number): number {
  return Math.min(launchedAt + timeouts.ready * MS, totalBy);
}

/**
 * The run phase's length: the spec's `run` timeout when given, else the expected duration plus
 * grace; undefined with neither (no expectation could be derived).
 */
function runPhaseSeconds(run: number | undefined, expectedDurationSeconds: number | undefined): number | undefined {
  if (run !== undefined) return run;
  return expectedDurationSeconds === undefined ? undefined : expectedDurationSeconds + runGraceSeconds(expectedDurationSeconds);
}

/**
 * At Start: the spec's `run` timeout when given, else the expected duration plus grace; with neither
 * (no expectation could be derived), only the whole run's deadline bounds the test.
 */
export function runDeadline(startedAt: number, timeouts: Pick<PhaseTimeouts, 'run'>, expectedDurationSeconds: number | undefined, totalBy: number): number {
  const seconds = runPhaseSeconds(timeouts.run, expectedDurationSeconds);
  return seconds === undefined ? totalBy : Math.min(startedAt + seconds * MS, totalBy);
}

/** max(60 s, 10 % of the expected duration), in whole seconds. */
export function runGraceSeconds(expectedDurationSeconds: number): number {
  return Math.max(MIN_RUN_GRACE_SECONDS, Math.ceil(expectedDurationSeconds * RUN_GRACE_FRACTION));
}

/**
 * Whole seconds from `now` to `deadline`, at least 1: what a Job's backstop is sized from (the
 * initializer's from `prepareBy`; the runners' see runnerJobDeadlineSeconds). The builders add
 * JOB_DEADLINE_GRACE_SECONDS, so our own deadline fires first and cleans up.
 */
export function jobDeadlineSeconds(now: number, deadline: number): number {
  return Math.max(1, Math.ceil((deadline - now) / MS));
}

export interface RunnerJobDeadlineInput {
  /** Epoch ms: Launch, when the runner Jobs are created. */
  launchedAt: number;
  /** Epoch ms: the ready deadline Launch fixed (Start comes by then). */
  readyBy: number;
  /** Epoch ms: the whole run's deadline. */
  totalBy: number;
  /** The spec's `timeouts.run`, when given. */
  runSeconds?: number | undefined;
  /** k6: the expected test duration from `k6 inspect` (AwaitPrepared's recorded output). */
  expectedSeconds?: number | undefined;
  /** `onRunnerRestart: restart`: a runner's pod may be replaced, and the replacement runs its share again. */
  restart: boolean;
}

/**
 * The runner Jobs' backstop (architecture §7), in seconds from Launch: what is known at Launch, not the
 * whole run's total (a 30 s test must not hold nodes for a day if the control plane never comes
 * back). Start comes by the ready deadline, then the test takes its run phase (the spec's `run`, or
 * the expected duration + grace, as runDeadline has it). Under `restart` the backstop covers one
 * replacement: its pod may come as late as the end of that run phase, gets the ready timeout to
 * start and then runs the runner's whole share again (core/restart.ts), so the window is taken
 * twice. Nothing known about the test (Gatling without `run`, a k6 script with no expectation): the
 * rest of the total. Never past the total; at least 1. The builders add JOB_DEADLINE_GRACE_SECONDS,
 * so the control plane's own deadlines fire first.
 */
export function runnerJobDeadlineSeconds(input: RunnerJobDeadlineInput): number {
  const remaining = jobDeadlineSeconds(input.launchedAt, input.totalBy);
  const share = runPhaseSeconds(input.runSeconds, input.expectedSeconds);
  if (share === undefined) return remaining;
  const untilReady = Math.max(0, Math.ceil((input.readyBy - input.launchedAt) / MS));
  return Math.max(1, Math.min((untilReady + share) * (input.restart ? 2 : 1), remaining));
}

/** Nanoseconds per unit: parts are summed as whole nanoseconds, so `1m30s` is exactly 90 and rounds up to 90. */
const GO_DURATION_UNIT_NS: Readonly<Record<string, number>> = {
  h: 3600e9,
  m: 60e9,
  s: 1e9,
  ms: 1e6,
  us: 1e3,
  µs: 1e3, // U+00B5, as Go prints it
  μs: 1e3, // U+03BC, also accepted by Go's time.ParseDuration
  ns: 1,
};
const GO_DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|μs|ns)/y;

/**
 * Seconds from a Go duration string, as k6 prints them (`1m30s`, `30s`, `2h0m0s`, `1.5s`, `500ms`, `0s`);
 * undefined when the text is not one (negative durations included: no phase lasts less than nothing).
 */
export function parseK6Duration(text: string): number | undefined {
  if (text === '') return undefined;
  let nanoseconds = 0;
  for (let at = 0; at < text.length; at = GO_DURATION_PART.lastIndex) {
    GO_DURATION_PART.lastIndex = at;
    const match = GO_DURATION_PART.exec(text);
    if (!match) return undefined;
    nanoseconds += Math.round(Number(match[1]) * GO_DURATION_UNIT_NS[match[2]!]!);
  }
  return nanoseconds / 1e9;
}

/**
 * The expected test duration, in whole seconds rounded up, from `k6 inspect --execution-requirements`
 * JSON. Its `totalDuration` already includes every scenario's gracefulStop; setup() and teardown() are
 * not in it, which the run grace covers. Undefined when the output carries no usable totalDuration.
 */
export function expectedDurationFromInspect(output: unknown): number | undefined {
  // A primitive has no totalDuration either: no answer.
  const total = (output as { totalDuration?: unknown } | null | undefined)?.totalDuration;
  if (typeof total !== 'string') return undefined;
  const seconds = parseK6Duration(total);
  return seconds === undefined ? undefined : Math.ceil(seconds);
}

/**
 * When the test's schedule ends, in whole seconds: every scenario's startTime + duration (or stages),
 * before any gracefulStop, which k6 inspect's totalDuration includes (30 s by default: a 30 s test's
 * totalDuration is 1m0s). What a user expects the test to take, for progress and for polling densely
 * near the end; the deadlines keep totalDuration. Undefined when a scenario ends by its iterations
 * (its length is not known beforehand) or the scenarios cannot be read.
 */
export function scheduledDurationFromInspect(output: unknown): number | undefined {
  const scenarios = (output as { scenarios?: unknown } | null)?.scenarios;
  // Stryker disable next-line ConditionalExpression: equivalent: a primitive's values carry no executor, so it is no answer either way
  if (typeof scenarios !== 'object' || scenarios === null || Object.keys(scenarios).length === 0) return undefined;
  const executors = Object.values(scenarios as Record<string, { executor?: unknown }>).map((s) => s?.executor);
  // The executor Sets hold strings: an executor that is not one is in neither.
  if (!executors.every((e) => TIME_BOUND_EXECUTORS.has(e as string) || STAGED_EXECUTORS.has(e as string))) return undefined;
  return minimumDurationFromInspect(output);
}

/** k6 executors that run for their whole `duration` (or their stages'): the others end when their iterations are done. */
const TIME_BOUND_EXECUTORS = new Set(['constant-vus', 'constant-arrival-rate', 'externally-controlled']);
const STAGED_EXECUTORS = new Set(['ramping-vus', 'ramping-arrival-rate']);

/**
 * The shortest the test can run, in seconds, from the `scenarios` that `k6 inspect
 * --execution-requirements` prints with the consolidated options: a time-bound scenario runs its
 * `startTime` + `duration` however fast its iterations are; an arrival-rate ramp runs all its stages;
 * a `ramping-vus` one ends once its VUs stay at 0 (trailing zero stages do not count, as in k6); an
 * iteration-based one may end at once. `totalDuration` is no lower bound: it is the most the test may
 * take (every gracefulStop included, and 10m for an iteration-based scenario's default maxDuration),
 * so it caps the result. Undefined when the output names no scenarios, or one this cannot read.
 */
export function minimumDurationFromInspect(output: unknown): number | undefined {
  const scenarios = (output as { scenarios?: unknown } | null)?.scenarios;
  if (typeof scenarios !== 'object' || scenarios === null) return undefined;
  const seconds = (value: unknown) => (typeof value === 'string' ? parseK6Duration(value) : value == null ? 0 : undefined);
  let longest = 0;
  for (const scenario of Object.values(scenarios as Record<string, unknown>)) {
    const s = scenario as { executor?: unknown; startTime?: unknown; duration?: unknown; stages?: unknown; startVUs?: unknown };
    const start = seconds(s.startTime);
    if (start === undefined || typeof s.executor !== 'string') return undefined;
    let runs = 0;
    if (TIME_BOUND_EXECUTORS.has(s.executor)) {
      const d = seconds(s.duration);
      if (d === undefined) return undefined;
      runs = d;
    } else if (STAGED_EXECUTORS.has(s.executor)) {
      if (!Array.isArray(s.stages)) return undefined;
      // ramping-vus: up to the end of the last stage that starts or ends with VUs (k6 default startVUs 1).
      let level = typeof s.startVUs === 'number' ? s.startVUs : 1;
      let elapsed = 0;
      for (const stage of s.stages as Array<{ duration?: unknown; target?: unknown }>) {
        const d = seconds(stage?.duration);
        if (d === undefined) return undefined;
        elapsed += d;
        const target = typeof stage?.target === 'number' ? stage.target : 0;
        if (s.executor !== 'ramping-vus' || level > 0 || target > 0) runs = elapsed;
        level = target;
      }
    }
    longest = Math.max(longest, start + runs);
  }
  const most = expectedDurationFromInspect(output);
  return Math.floor(most === undefined ? longest : Math.min(longest, most));
}
