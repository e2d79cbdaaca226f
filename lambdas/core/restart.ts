/**
 * What `onRunnerRestart: restart` means for the run phase (architecture §3.3, §3.6, §1 "a restarted runner
 * comes back paused and is never started", k6-operator #304 #898). An evicted runner's Job makes a
 * replacement pod; the replacement runs the runner's whole share again (k6: the same execution
 * segment, for the whole test duration), so:
 * - it is started at once: while it is not running yet, Watch polls at the ready phase's pace (2 s,
 *   growing to 10 s for a slow scheduler) instead of the sparse mid-test interval;
 * - it gets a run deadline of its own, counted from its start as Start counted the others'
 *   (`runDeadline`: expected duration + grace, or the spec's `run` timeout), and the run's deadline
 *   is the latest of them, never past the whole run's deadline (Admit's `totalBy`);
 * - it has the ready timeout, from its creation, to start; a replacement that cannot be scheduled
 *   ends the run TIMED_OUT rather than hold it to the total deadline.
 *
 * Stateless on purpose: Watch records nothing between polls, so each poll derives the window from
 * what the cluster shows (the replacement pod's creation and container start times). A retried or
 * repeated Watch computes the same window, and no ledger write is needed mid-phase. The container's
 * start precedes k6's unpause by k6's init and at most one of these dense polls: seconds, which the
 * run grace (at least a minute) covers.
 *
 * Each replacement adds at most a ready phase's worth of dense poll cycles to the execution's
 * history (under 80 for the default 10-minute ready timeout; polling.ts): the 25,000-event limit
 * keeps room for many replacements beyond the longest run's own polls.
 */
import { Phase, runDeadline, type PhaseTimeouts } from './deadlines';
import { nextPollSeconds } from './polling';

const MS = 1000;

/** A runner whose started pod is gone (evicted, preempted) and is being, or was, replaced by its Job. */
export interface Replacement {
  index: number;
  /** When the replacement pod was created (epoch ms); while the Job has not made it yet, when the pod it replaces stopped. */
  createdAt?: number;
  /**
   * When the replacement's test started (epoch ms): its container's start, once it runs the test
   * (k6: unpaused; Gatling: by itself, its start instant being past). Undefined until then.
   */
  startedAt?: number;
}

export interface RunWindowInput {
  /** Epoch ms, cluster clock. */
  now: number;
  /** Start's record: when the test started, its run deadline and (if known) its expected end. */
  startedAt: number;
  runBy: number;
  expectedEndAt?: number;
  /** When the test's schedule ends (no gracefulStop), if known: polls close in on it rather than on expectedEndAt. */
  scheduledEndAt?: number;
  /** The whole run's deadline (Admit): no replacement moves the run past it. */
  totalBy: number;
  timeouts: Pick<PhaseTimeouts, 'ready' | 'run'>;
  replacements: Replacement[];
}

export interface RunWindow {
  /** The effective run deadline: Start's, or a replacement's if later, at most `totalBy`. */
  runBy: number;
  /** The latest expected end, a started replacement's included; polls close in on it. */
  expectedEndAt?: number;
  /** Runners whose replacement moved the run deadline. */
  extendedFor: number[];
  /** A replacement's share would end after the whole run's deadline: the run deadline is `totalBy`. */
  cappedByTotal: boolean;
  /** Replacements not started within the ready timeout of their creation. */
  overdue: number[];
  nextPollSeconds: number;
}

export function runWindow(input: RunWindowInput): RunWindow {
  const { now, startedAt, totalBy, timeouts, replacements } = input;
  const expectedSeconds = input.expectedEndAt === undefined ? undefined : (input.expectedEndAt - startedAt) / MS;
  // A replacement that has not started can start no earlier than now.
  const shares = replacements.map((r) => {
    const start = r.startedAt ?? now;
    const uncapped = runDeadline(start, timeouts, expectedSeconds, Number.POSITIVE_INFINITY);
    return {
      replacement: r,
      runBy: Math.min(uncapped, totalBy),
      // Without a run timeout or an expected duration the run deadline is the total one already.
      capped: Number.isFinite(uncapped) && uncapped > totalBy,
      expectedEndAt: r.startedAt !== undefined && expectedSeconds !== undefined ? r.startedAt + expectedSeconds * MS : undefined,
    };
  });

  const runBy = Math.max(input.runBy, ...shares.map((s) => s.runBy));
  const ends = [input.expectedEndAt, ...shares.map((s) => s.expectedEndAt)].filter((t): t is number => t !== undefined);
  const expectedEndAt = ends.length > 0 ? Math.max(...ends) : undefined;
  // The schedule's end, a started replacement's included (it re-runs the whole share from its own start).
  const scheduledSeconds = input.scheduledEndAt === undefined ? undefined : (input.scheduledEndAt - startedAt) / MS;
  const scheduledEnds =
    scheduledSeconds === undefined
      ? []
      : [input.scheduledEndAt!, ...replacements.flatMap((r) => (r.startedAt !== undefined ? [r.startedAt + scheduledSeconds * MS] : []))];
  const pollTowards = scheduledEnds.length > 0 ? Math.max(...scheduledEnds) : expectedEndAt;
  const waiting = replacements.filter((r) => r.startedAt === undefined);
  const overdue = waiting.filter((r) => r.createdAt !== undefined && now >= r.createdAt + timeouts.ready * MS).map((r) => r.index);

  const runPoll = nextPollSeconds({
    phase: Phase.run,
    now,
    phaseStartedAt: startedAt,
    deadline: runBy,
    ...(pollTowards !== undefined ? { expectedEndAt: pollTowards } : {}),
  });
  // A replacement on its way is waited for as AwaitReady waits for a runner: densely, from its creation.
  const readyPolls = waiting.map((r) => {
    const since = r.createdAt ?? now;
    return nextPollSeconds({ phase: Phase.ready, now, phaseStartedAt: since, deadline: Math.min(since + timeouts.ready * MS, runBy) });
  });

  return {
    runBy,
    ...(expectedEndAt !== undefined ? { expectedEndAt } : {}),
    extendedFor: shares.filter((s) => s.runBy > input.runBy).map((s) => s.replacement.index),
    cappedByTotal: shares.some((s) => s.capped),
    overdue,
    nextPollSeconds: Math.min(runPoll, ...readyPolls),
  };
}

/** "runner 2 was replaced once and completed"; "runner 1 was replaced twice" (no result), joined by "; ". */
export function replacementNote(replaced: { index: number; times: number; completed: boolean }[]): string | undefined {
  const parts = [...replaced]
    .filter((r) => r.times > 0)
    .sort((a, b) => a.index - b.index)
    .map((r) => `runner ${r.index} was replaced ${times(r.times)}${r.completed ? ' and completed' : ''}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function times(n: number): string {
  if (n === 1) return 'once';
  if (n === 2) return 'twice';
  return `${n} times`;
}
