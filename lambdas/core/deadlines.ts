/**
 * Deadlines of a run (DESIGN §6), as absolute instants in epoch ms. Admit fixes the whole run's
 * deadline and Prepare's; the ready and run deadlines are fixed when their phase begins (at Launch and
 * at Start), because a phase's allowance must not be eaten by a slow phase before it. Every deadline
 * is capped by the whole run's, so the run always ends by `totalBy` whatever the phases add up to.
 */

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

export interface AdmitDeadlines {
  prepareBy: number;
  totalBy: number;
}

/** Least time added to the expected run duration: covers setup()/teardown(), which k6 inspect does not count. */
export const MIN_RUN_GRACE_SECONDS = 60;
/** Share of the expected duration added on long runs, where a fixed minute would be too tight. */
export const RUN_GRACE_FRACTION = 0.1;

const MS = 1000;

/**
 * At Admit: the run must end by `total` (default the deployment's maximum, which is also the state
 * machine's TimeoutSeconds, so a larger total could never be honoured and is capped).
 */
export function admitDeadlines(now: number, timeouts: PhaseTimeouts, maxRunDurationSeconds: number): AdmitDeadlines {
  const totalBy = now + Math.min(timeouts.total ?? maxRunDurationSeconds, maxRunDurationSeconds) * MS;
  return { prepareBy: Math.min(now + timeouts.prepare * MS, totalBy), totalBy };
}

/** At Launch: runner pods must be Running and answering within `ready` (slow schedulers such as Fargate need minutes). */
export function readyDeadline(launchedAt: number, timeouts: Pick<PhaseTimeouts, 'ready'>, totalBy: number): number {
  return Math.min(launchedAt + timeouts.ready * MS, totalBy);
}

/**
 * At Start: the spec's `run` timeout when given, else the expected duration plus grace; with neither
 * (no expectation could be derived), only the whole run's deadline bounds the test.
 */
export function runDeadline(
  startedAt: number,
  timeouts: Pick<PhaseTimeouts, 'run'>,
  expectedDurationSeconds: number | undefined,
  totalBy: number,
): number {
  if (timeouts.run !== undefined) return Math.min(startedAt + timeouts.run * MS, totalBy);
  if (expectedDurationSeconds === undefined) return totalBy;
  return Math.min(startedAt + (expectedDurationSeconds + runGraceSeconds(expectedDurationSeconds)) * MS, totalBy);
}

/** max(60 s, 10 % of the expected duration), in whole seconds. */
export function runGraceSeconds(expectedDurationSeconds: number): number {
  return Math.max(MIN_RUN_GRACE_SECONDS, Math.ceil(expectedDurationSeconds * RUN_GRACE_FRACTION));
}

/**
 * Whole seconds from `now` to `deadline`, at least 1: what a Job's backstop is sized from (the
 * initializer's from `prepareBy`, the runners' from `totalBy`, since the run deadline is only known at
 * Start). The builders add JOB_DEADLINE_GRACE_SECONDS, so our own deadline fires first and cleans up.
 */
export function jobDeadlineSeconds(now: number, deadline: number): number {
  return Math.max(1, Math.ceil((deadline - now) / MS));
}

/** Nanoseconds per unit: parts are summed as whole nanoseconds, so `1m30s` is exactly 90 and rounds up to 90. */
const GO_DURATION_UNIT_NS: Readonly<Record<string, number>> = {
  h: 3600e9,
  m: 60e9,
  s: 1e9,
  ms: 1e6,
  us: 1e3,
  'µs': 1e3, // U+00B5, as Go prints it
  'μs': 1e3, // U+03BC, also accepted by Go's time.ParseDuration
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
  if (typeof output !== 'object' || output === null) return undefined;
  const total = (output as { totalDuration?: unknown }).totalDuration;
  if (typeof total !== 'string') return undefined;
  const seconds = parseK6Duration(total);
  return seconds === undefined ? undefined : Math.ceil(seconds);
}
