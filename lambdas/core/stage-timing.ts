/**
 * One table for the time every stage may take (architecture §6): the Task's TimeoutSeconds (= the stage
 * Lambda's own timeout), the stage's ledger lease (= that timeout + a margin, so a lease never lapses
 * under a live invocation and never outlives a dead one by much), and the Retry budgets. The ASL
 * (statemachine/run.asl.json) is checked against it by a test, the local reaper uses it, and the CDK
 * app sizes the functions from it.
 *
 * The rule that makes a Task timeout harmless: after `States.Timeout` (or a crash) the stage's lease is
 * still held by the invocation that gave up, so the retry meets `StageBusy`. That error has a Retry entry
 * of its own, without jitter, whose total wait is certain to outlast every lease it can meet.
 */
import type { ErrorName } from './errors';
import { Stage } from './status';

/** Added to a stage's timeout to make its lease: covers clock skew and the ledger write after the work. */
export const LEASE_MARGIN_SECONDS = 30;

/** Task TimeoutSeconds = the stage Lambda's timeout. Creating and deleting N objects take longest. */
export const STAGE_TIMEOUT_SECONDS = {
  [Stage.Admit]: 30,
  [Stage.Acquire]: 30,
  [Stage.Prepare]: 60,
  [Stage.AwaitPrepared]: 30,
  [Stage.Launch]: 120,
  [Stage.AwaitReady]: 60,
  [Stage.Start]: 180,
  [Stage.Watch]: 60,
  [Stage.Collect]: 120,
  [Stage.Decide]: 30,
  [Stage.Notify]: 60,
  [Stage.Cleanup]: 240,
} as const satisfies Record<Stage, number>;

/**
 * k6 setup() and teardown() once per run (engines/k6/coordinator.ts): Start waits for setup() and
 * Cleanup for teardown(), each synchronously through the coordinator's REST API, so each stage's
 * timeout holds the longest the function may take (k6's setupTimeout / teardownTimeout, 60 s unless
 * the script says more) plus the stage's own work. A script allowing more is refused at AwaitPrepared.
 */
export const SETUP_BUDGET_SECONDS = STAGE_TIMEOUT_SECONDS[Stage.Start] - 60;
export const TEARDOWN_BUDGET_SECONDS = STAGE_TIMEOUT_SECONDS[Stage.Cleanup] - 120;

/**
 * How long a notification claim protects one send: connect-and-send plus the answer, each bounded by
 * NOTIFY_SEND_TIMEOUT_SECONDS, with margin. An unmarked claim older than this is ambiguous (architecture §5).
 */
export const NOTIFY_CLAIM_LEASE_SECONDS = 30;
export const NOTIFY_SEND_TIMEOUT_SECONDS = 10;

/** The ledger lease of a stage invocation, in ms. */
export function stageLeaseMs(stage: Stage): number {
  return (STAGE_TIMEOUT_SECONDS[stage] + LEASE_MARGIN_SECONDS) * 1000;
}

/** A Retry entry's timing, as Step Functions takes it. */
export interface RetryTiming {
  IntervalSeconds: number;
  MaxAttempts: number;
  BackoffRate: number;
  MaxDelaySeconds: number;
  JitterStrategy: 'FULL' | 'NONE';
}

/** Errors that mean "someone else holds the lease or the claim": waited out, not counted as failures. */
export const BUSY_ERROR_NAMES = ['StageBusy', 'NotificationInProgress'] as const satisfies readonly ErrorName[];

/** Everything else transient (throttling, the API server, the store): backoff with full jitter. */
export const TRANSIENT_RETRY: RetryTiming = { IntervalSeconds: 2, MaxAttempts: 6, BackoffRate: 2, MaxDelaySeconds: 30, JitterStrategy: 'FULL' };

/** The shape of the busy retry; its MaxAttempts is sized per stage by `busyRetry`. */
const BUSY_INTERVAL_SECONDS = 5;
const BUSY_BACKOFF_RATE = 1.5;
const BUSY_MAX_DELAY_SECONDS = 30;

/**
 * The leases a busy error of `stage` can come from, in seconds: its own; Cleanup also waits for a
 * Prepare or Launch still creating (cleanup.ts); Notify also meets a channel's claim.
 */
export function leasesMetBy(stage: Stage): number[] {
  const own = stageLeaseMs(stage) / 1000;
  if (stage === Stage.Cleanup) return [own, stageLeaseMs(Stage.Prepare) / 1000, stageLeaseMs(Stage.Launch) / 1000];
  if (stage === Stage.Notify) return [own, NOTIFY_CLAIM_LEASE_SECONDS];
  return [own];
}

/** The least total wait of a Retry entry over all its attempts (full jitter can make it zero). */
export function guaranteedRetryWaitSeconds(retry: RetryTiming): number {
  if (retry.JitterStrategy === 'FULL') return 0;
  return totalRetryWaitSeconds(retry);
}

/** The total wait of a Retry entry over all its attempts, without jitter. */
export function totalRetryWaitSeconds(retry: Omit<RetryTiming, 'JitterStrategy'>): number {
  let total = 0;
  for (let k = 0; k < retry.MaxAttempts; k++) total += retryDelaySeconds(retry, k);
  return total;
}

/** The fewest attempts of a no-jitter backoff whose total wait exceeds `seconds` by at least one interval. */
export function attemptsToOutlast(seconds: number, shape: Omit<RetryTiming, 'MaxAttempts' | 'JitterStrategy'>): number {
  let attempts = 1;
  while (totalRetryWaitSeconds({ ...shape, MaxAttempts: attempts }) < seconds + shape.IntervalSeconds) attempts++;
  return attempts;
}

/** The Retry entry for BUSY_ERROR_NAMES on `stage`'s Task: no jitter, and a total wait longer than any lease it meets. */
export function busyRetry(stage: Stage): RetryTiming {
  const shape = { IntervalSeconds: BUSY_INTERVAL_SECONDS, BackoffRate: BUSY_BACKOFF_RATE, MaxDelaySeconds: BUSY_MAX_DELAY_SECONDS };
  return { ...shape, MaxAttempts: attemptsToOutlast(Math.max(...leasesMetBy(stage)), shape), JitterStrategy: 'NONE' };
}

/**
 * The longest one visit of `stage`'s Task can last: every attempt of both Retry entries running to its
 * Task timeout, plus their waits (without jitter, the longest they can be).
 */
export function longestTaskVisitSeconds(stage: Stage): number {
  const busy = busyRetry(stage);
  const attempts = 1 + TRANSIENT_RETRY.MaxAttempts + busy.MaxAttempts;
  return attempts * STAGE_TIMEOUT_SECONDS[stage] + totalRetryWaitSeconds(TRANSIENT_RETRY) + totalRetryWaitSeconds(busy);
}

/**
 * The longest an execution can spend in Admit before it gives up (longestTaskVisitSeconds). A run
 * created this recently and not yet adopted may still be adopted by an execution on its way.
 */
export function admitGiveUpSeconds(): number {
  return longestTaskVisitSeconds(Stage.Admit);
}

/**
 * Attempts the reaper has left, at the least, once Admit can no longer adopt a run (admitGiveUpSeconds
 * after its creation): the reaper may start at once (an execution that failed right after creating
 * the run), and adopting it is a ledger write that may fail transiently like any other.
 */
export const REAPER_ATTEMPTS_AFTER_ADMIT = 5;

/**
 * How the reaper is retried (EventBridge's retry policy on AWS, the local runtime's loop here): long
 * enough to outlast every lease Decide, Notify and Cleanup can meet, so a killed process's claim is
 * resolved rather than left, and longer than Admit can take, so a run no execution adopted is taken
 * over only once no execution can still be adopting it, with REAPER_ATTEMPTS_AFTER_ADMIT attempts
 * (at the longest delay) left then.
 */
export function reaperRetry(): RetryTiming {
  const shape = { IntervalSeconds: 5, BackoffRate: 2, MaxDelaySeconds: 60 };
  const adoptable = admitGiveUpSeconds() + REAPER_ATTEMPTS_AFTER_ADMIT * shape.MaxDelaySeconds;
  // Stryker disable next-line ArrayDeclaration: equivalent with this table: the adoption wait (815.9375 s) exceeds every lease these stages meet (at most Cleanup's 270 s), so the list never sets the maximum
  const longest = Math.max(...[Stage.Decide, Stage.Notify, Stage.Cleanup].flatMap(leasesMetBy), adoptable);
  return { ...shape, MaxAttempts: attemptsToOutlast(longest, shape), JitterStrategy: 'NONE' };
}

/** The wait before retry number `attempt + 1` (0-based), without jitter. */
export function retryDelaySeconds(retry: Omit<RetryTiming, 'JitterStrategy' | 'MaxAttempts'>, attempt: number): number {
  return Math.min(retry.IntervalSeconds * retry.BackoffRate ** attempt, retry.MaxDelaySeconds);
}

/**
 * The reaper's function timeout: it runs Decide, Notify and Cleanup one after another (reap.ts), each
 * within its own stage's time.
 */
export function reaperTimeoutSeconds(): number {
  return STAGE_TIMEOUT_SECONDS[Stage.Decide] + STAGE_TIMEOUT_SECONDS[Stage.Notify] + STAGE_TIMEOUT_SECONDS[Stage.Cleanup];
}

/** The sweeper's function timeout: its per-status budgets keep one sweep well inside it (sweep.ts). */
export const SWEEPER_TIMEOUT_SECONDS = 300;

/** The API function's timeout: API Gateway's own integration timeout is 29 s. */
export const API_TIMEOUT_SECONDS = 29;
