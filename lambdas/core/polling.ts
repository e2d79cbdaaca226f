/**
 * Adaptive polling for the waiting phases (architecture §3.6, §1 last row). Each poll is a Wait → Task →
 * Choice cycle in the state machine, and an execution's history holds at most 25,000 events (DLT
 * broke tests longer than ~12 h by polling every 15 s, DLT #335). So the interval is:
 * - prepare/ready: short while the phase is young (2 s), growing with its age to 10 s;
 * - run: dense near the test's expected end (half the remaining time, at least 5 s), sparse while it
 *   is far away, and backing off again if the test overruns (a quarter of the overrun);
 * - never later than the phase deadline: the last poll lands on it, and sees it passed.
 * Each phase's sparsest interval is raised for long phases so the phase spends at most its budget
 * of poll cycles, whatever its length: the three budgets together bound every execution's history.
 *
 * A run-phase poll that is due no sooner than the cruise interval is a cruise poll: Watch answers
 * `cruising` and the polls go on every cruise interval (cruisePollSeconds) in a cruise window, a child
 * execution of its own (statemachine/cruise.asl.json) that ends at the first poll that answers
 * anything else, so a long test's polls are not the run's history (AWS's pattern for long loops). No
 * poll is an error: a healthy run leaves the stage function's Errors metric at 0. The adaptive part
 * (dense near the end) stays Waits of the run's own execution.
 */
import { DEFAULT_CONFIG, type DeploymentConfig } from './config';
import { Phase, runDeadline } from './deadlines';
import { longestTaskVisitSeconds } from './stage-timing';
import { Stage } from './status';

export const HISTORY_EVENT_LIMIT = 25_000;

/**
 * History events of one poll cycle on AWS: a Lambda Task (entered, scheduled, started, succeeded,
 * exited), a Choice (entered, exited), a Wait (entered, exited). DLT counts about 9 as well. A cruise
 * window's poll is the same cycle, in the window's own history.
 */
export const EVENTS_PER_POLL_CYCLE = 9;

/**
 * The run's own events per cruise window: its Task (entered, scheduled, started, submitted,
 * succeeded, exited: a `.sync` Task also records TaskSubmitted), the Pass that takes the window's
 * answer (entered, exited) and the Choice that reads it (entered, exited).
 */
export const EVENTS_PER_CRUISE_WINDOW = 10;

/** A cruise window's own events besides its polls: ExecutionStarted, its Succeed state (2), ExecutionSucceeded. */
export const CRUISE_WINDOW_OWN_EVENTS = 4;

/**
 * The cruise interval: how often a running test is polled while its end is far off, and so the
 * longest a runner that fails mid-test goes unseen. A minute, unless the deployment allows tests so
 * long that a minute would spend more than CRUISE_POLL_BUDGET polls on the longest.
 */
export const CRUISE_POLL_SECONDS = 60;
export const CRUISE_POLL_BUDGET = 2000;

export function cruisePollSeconds(limits: Pick<DeploymentConfig, 'maxRunDurationSeconds'>): number {
  const longestRunPhaseSeconds = runDeadline(0, {}, limits.maxRunDurationSeconds, Number.POSITIVE_INFINITY) / 1000;
  return Math.max(CRUISE_POLL_SECONDS, Math.ceil(longestRunPhaseSeconds / CRUISE_POLL_BUDGET));
}

/**
 * Cruise intervals per cruise window: the first poll after every CRUISE_WINDOW_POLLS intervals of the
 * test answers `waiting` (a Wait of the run's own), which ends the window before. A window of an hour
 * (at the default interval) keeps both histories small: the run's gains EVENTS_PER_CRUISE_WINDOW and
 * one poll cycle per window, the window's own holds at most CRUISE_WINDOW_POLLS poll cycles. Each
 * poll is a fresh visit of the window's Watch Task, so the transient-error budget (6 retries) is per
 * poll, whatever the window's length.
 */
export const CRUISE_WINDOW_POLLS = 60;

/** Whether the poll `elapsedMs` into the test is the first of a new cruise window (the one before it was not). */
export function startsCruiseWindow(elapsedMs: number, cruiseSeconds: number): boolean {
  const windowMs = CRUISE_WINDOW_POLLS * cruiseSeconds * 1000;
  return Math.floor(elapsedMs / windowMs) !== Math.floor((elapsedMs - cruiseSeconds * 1000) / windowMs);
}

/**
 * A cruise window's TimeoutSeconds: it ends at its first poll at or past the window's end (every poll
 * reads the clock), so it lasts at most its CRUISE_WINDOW_POLLS intervals, one more, and the longest
 * visit of its Watch Task. Its Task in the run waits a minute longer (CRUISE_WINDOW_TASK_MARGIN_SECONDS): the window's own
 * timeout comes first and says what happened.
 */
export function cruiseWindowTimeoutSeconds(limits: Pick<DeploymentConfig, 'maxRunDurationSeconds'>): number {
  return (CRUISE_WINDOW_POLLS + 1) * cruisePollSeconds(limits) + Math.ceil(longestTaskVisitSeconds(Stage.Watch));
}
export const CRUISE_WINDOW_TASK_MARGIN_SECONDS = 60;

interface PhasePolicy {
  /** Shortest wait (s). */
  minSeconds: number;
  /** Longest wait (s) for phases short enough to stay within the budget at that pace. */
  maxSeconds: number;
  /** Most sparse poll cycles the phase may spend; a longer phase polls more slowly. */
  cycleBudget: number;
}

const POLICY: Readonly<Record<Phase, PhasePolicy>> = {
  prepare: { minSeconds: 2, maxSeconds: 10, cycleBudget: 300 },
  ready: { minSeconds: 2, maxSeconds: 10, cycleBudget: 300 },
  run: { minSeconds: 5, maxSeconds: 60, cycleBudget: 1200 },
};

/** prepare/ready wait a tenth of the phase's age: a pod that is slow to come is likely to stay slow. */
const WAITING_AGE_FRACTION = 0.1;
/** Before the expected end: wait half the remaining time, so polls close in on the end. */
const APPROACH_FRACTION = 0.5;
/** After it: wait a quarter of the overrun, so a test that ends late is seen at most ~25 % late. */
const OVERRUN_FRACTION = 0.25;

export interface PollInput {
  phase: Phase;
  /** Epoch ms. */
  now: number;
  /** When the phase began (epoch ms): its age paces prepare/ready, and a run without an expected end. */
  phaseStartedAt: number;
  /** The phase's deadline (epoch ms). */
  deadline: number;
  /** Run phase: when the test is expected to end (Start + k6 inspect's totalDuration). */
  expectedEndAt?: number;
}

/** Seconds to wait before the next poll: a whole number, at least 1 (Wait's `SecondsPath` needs one). */
export function nextPollSeconds(input: PollInput): number {
  const { phase, now, phaseStartedAt, deadline, expectedEndAt } = input;
  const policy = POLICY[phase];
  const seconds = (ms: number) => Math.max(0, ms) / 1000;

  let wanted: number;
  if (phase !== Phase.run || expectedEndAt === undefined) {
    wanted = seconds(now - phaseStartedAt) * WAITING_AGE_FRACTION;
  } else if (now < expectedEndAt) {
    wanted = seconds(expectedEndAt - now) * APPROACH_FRACTION;
  } else {
    wanted = seconds(now - expectedEndAt) * OVERRUN_FRACTION;
  }
  const cap = Math.max(policy.maxSeconds, Math.ceil(seconds(deadline - phaseStartedAt) / policy.cycleBudget));
  const interval = Math.min(Math.max(Math.ceil(wanted), policy.minSeconds), cap);
  // Past the deadline the caller ends the phase; should it poll anyway, the shortest wait is right.
  return Math.max(1, Math.min(interval, Math.ceil(seconds(deadline - now))));
}

/** Shortest and (for queues up to QUEUE_CYCLE_BUDGET × 30 s) longest wait between two tries for a slot. */
const QUEUE_MIN_SECONDS = 5;
const QUEUE_MAX_SECONDS = 30;
/** Most tries a queued run makes, whatever its queueTimeout: a long queue polls more slowly. */
export const QUEUE_CYCLE_BUDGET = 300;

/**
 * Seconds before a queued run tries for a slot again (Acquire): a tenth of its time in the queue,
 * between 5 and 30 s (slower for queues longer than 2.5 h, so the queue spends about
 * QUEUE_CYCLE_BUDGET poll cycles of the execution's history — some 330 at most, the young queue's
 * short waits included), never past the queue's deadline.
 */
export function queuePollSeconds(input: { now: number; queuedAt: number; queueBy: number }): number {
  const seconds = (ms: number) => Math.max(0, ms) / 1000;
  const wanted = Math.ceil(seconds(input.now - input.queuedAt) * WAITING_AGE_FRACTION);
  const cap = Math.max(QUEUE_MAX_SECONDS, Math.ceil(seconds(input.queueBy - input.queuedAt) / QUEUE_CYCLE_BUDGET));
  return Math.max(1, Math.min(Math.max(wanted, QUEUE_MIN_SECONDS), cap, Math.ceil(seconds(input.queueBy - input.now))));
}

/**
 * The number of Wait cycles a phase makes from its start until a poll reaches its deadline: the worst
 * case, a phase that never finishes early. Task run time is left out, which only makes it an overestimate.
 */
export function pollCyclesUntilDeadline(phase: Phase, phaseLengthSeconds: number, expectedEndSeconds?: number): number {
  return pollsUntilDeadline(phase, phaseLengthSeconds, expectedEndSeconds).waits;
}

/** The polls of a phase until its deadline, by where they run (see pollsUntilDeadline). */
export interface PhasePolls {
  /** Polls in the run's own execution: each a Wait → Task → Choice cycle. */
  waits: number;
  /** Polls in cruise windows (the same cycle, in the window's history). */
  cruises: number;
  /** Cruise windows started (child executions). */
  windows: number;
  /** The most polls one window made. */
  longestWindow: number;
}

/**
 * The polls a phase makes until its deadline, as Watch answers them (watch.ts): a poll due sooner
 * than `cruiseSeconds` answers `waiting` (the next poll is the run's own); so does the first poll of
 * each cruise window; any other answers `cruising`, and the next poll is a cruise window's, every
 * `cruiseSeconds` until a poll answers otherwise. Without `cruiseSeconds` every poll is the run's own.
 */
export function pollsUntilDeadline(phase: Phase, phaseLengthSeconds: number, expectedEndSeconds?: number, cruiseSeconds?: number): PhasePolls {
  const input = {
    phase,
    phaseStartedAt: 0,
    deadline: phaseLengthSeconds * 1000,
    ...(expectedEndSeconds === undefined ? {} : { expectedEndAt: expectedEndSeconds * 1000 }),
  };
  const polls: PhasePolls = { waits: 0, cruises: 0, windows: 0, longestWindow: 0 };
  let inWindow = 0;
  for (let now = 0; now < input.deadline;) {
    if (inWindow > 0) polls.cruises += 1;
    else polls.waits += 1;
    const next = nextPollSeconds({ ...input, now });
    const cruising = cruiseSeconds !== undefined && next >= cruiseSeconds && !startsCruiseWindow(now, cruiseSeconds);
    if (cruising) {
      if (inWindow === 0) polls.windows += 1;
      inWindow += 1;
      now += cruiseSeconds * 1000;
    } else {
      polls.longestWindow = Math.max(polls.longestWindow, inWindow);
      inWindow = 0;
      now += (cruiseSeconds !== undefined && next >= cruiseSeconds ? cruiseSeconds : next) * 1000;
    }
  }
  polls.longestWindow = Math.max(polls.longestWindow, inWindow);
  return polls;
}

/** Tasks, Choices and the end states of one execution outside the poll loops (architecture §2's path). */
const STRAIGHT_LINE_EVENTS =
  2 + // ExecutionStarted, ExecutionSucceeded
  11 * 5 + // Tasks: Admit, Acquire, Prepare, Launch, AwaitReady, Start, Watch, Collect, Decide, Notify, Cleanup
  6 * 2 + // Choices: IsDuplicate, AcquireChoice, PrepareChoice, ReadyChoice, WatchChoice, Finished
  2; // the Succeed state

/** The spec's default prepare and ready timeouts (10 min each), assumed waited out in full. */
const ESTIMATE_WAITING_PHASE_SECONDS = 600;

/** The events of a queue that never gets a slot until `queueSeconds` (Acquire's Wait cycles). */
function queueEvents(queueSeconds: number): number {
  let cycles = 0;
  for (let now = 0; now < queueSeconds * 1000; cycles++) now += queuePollSeconds({ now, queuedAt: 0, queueBy: queueSeconds * 1000 }) * 1000;
  return cycles * EVENTS_PER_POLL_CYCLE;
}

type EstimateOptions = { limits?: Pick<DeploymentConfig, 'maxRunDurationSeconds'>; queueSeconds?: number };

/** The run phase's polls of a test expected to take `runSeconds` that runs on to its run deadline. */
function worstRunPhase(runSeconds: number, options: EstimateOptions): PhasePolls {
  const runPhaseSeconds = runDeadline(0, {}, runSeconds, Number.POSITIVE_INFINITY) / 1000;
  return pollsUntilDeadline(Phase.run, runPhaseSeconds, runSeconds, cruisePollSeconds(options.limits ?? DEFAULT_CONFIG));
}

/**
 * History events of the run's execution whose test is expected to take `runSeconds`, in the worst
 * case: it queues `queueSeconds` for a slot (default: not at all), prepare and ready wait out their
 * default deadlines, and the test runs on until its run deadline (expected duration + grace), with
 * every poll simulated by nextPollSeconds and the deployment's cruise interval (default: the default
 * limits'). The cruise windows' polls are in the windows' own histories (estimateCruiseWindowEvents).
 */
export function estimateHistoryEvents(runSeconds: number, options: EstimateOptions = {}): number {
  const run = worstRunPhase(runSeconds, options);
  const waits =
    pollCyclesUntilDeadline(Phase.prepare, ESTIMATE_WAITING_PHASE_SECONDS) + pollCyclesUntilDeadline(Phase.ready, ESTIMATE_WAITING_PHASE_SECONDS) + run.waits;
  return STRAIGHT_LINE_EVENTS + waits * EVENTS_PER_POLL_CYCLE + run.windows * EVENTS_PER_CRUISE_WINDOW + queueEvents(options.queueSeconds ?? 0);
}

/** History events of the longest cruise window of that run (0 when it has none). */
export function estimateCruiseWindowEvents(runSeconds: number, options: EstimateOptions = {}): number {
  const run = worstRunPhase(runSeconds, options);
  return run.windows === 0 ? 0 : run.longestWindow * EVENTS_PER_POLL_CYCLE + CRUISE_WINDOW_OWN_EVENTS;
}
