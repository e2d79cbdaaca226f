/**
 * What Step Functions would record and bill for an execution, read off the local engine's history
 * (aws-local-stepfunctions' events) rather than off the shape of run.asl.json, so the figures stay
 * right whatever the state machine's loops look like.
 *
 * The local engine records, per state visit: StateEntered; for each failed attempt StateFailed, then
 * StateRetried (a retry) or StateCaught (a Catch); StateExited unless the failure ends the execution.
 * Step Functions' own history for the same visit of a Lambda Task state:
 *   TaskStateEntered, then per attempt {Scheduled, Started, Succeeded | Failed | TimedOut}, then
 *   TaskStateExited (absent when an uncaught failure ends the execution).
 * So a Task entered and exited costs 5 events, each retry 3 more (a `.sync` Task that runs a child
 * execution, the CruiseWindow, one more per attempt: TaskSubmitted); a Wait, Choice, Pass or Succeed 2
 * (entered, exited); a Fail 1 (entered; the ExecutionFailed that follows is the execution's); the
 * execution's start and end 1 each. This is lambdas/core/polling.ts's convention (a poll cycle of
 * Wait + Task + Choice = 9 events).
 */
import type { HistoryEvent } from './local-execution';
import { CRUISE_WINDOW_STATE } from '../../statemachine/run-definition';

const TASK = 'Task';

/** Events for the execution's start and end: ExecutionStarted, ExecutionSucceeded/Failed/Aborted/TimedOut. */
const EXECUTION_EVENTS = new Set(['ExecutionStarted', 'ExecutionSucceeded', 'ExecutionFailed', 'ExecutionAborted', 'ExecutionTimeout']);

/** Step Functions history events of an execution whose local history is `history` (see the header). */
export function awsHistoryEvents(history: readonly HistoryEvent[]): number {
  // TaskSubmitted: a `.sync` Task's attempt records it once the child execution has started.
  const submitted = (e: HistoryEvent) => (e.state?.name === CRUISE_WINDOW_STATE ? 1 : 0);
  let events = 0;
  // Whether the Task visit in progress ended its last attempt in a failure (caught, or to be retried).
  let lastAttemptFailed = false;
  for (const e of history) {
    const task = e.state?.type === TASK;
    switch (e.type) {
      case 'StateEntered':
        // TaskStateEntered + the first attempt's Scheduled and Started.
        events += task ? 3 + submitted(e) : 1;
        lastAttemptFailed = false;
        break;
      case 'StateFailed':
        // A Task attempt's Failed (or TimedOut). Other states failing (a Fail state, a Choice with no
        // match) add nothing of their own: ExecutionFailed follows.
        if (task) {
          events += 1;
          lastAttemptFailed = true;
        }
        break;
      case 'StateRetried':
        // The next attempt's Scheduled and Started.
        if (task) events += 2 + submitted(e);
        lastAttemptFailed = false;
        break;
      case 'StateExited':
        // TaskStateExited, and the last attempt's Succeeded unless it failed and was caught.
        events += task && !lastAttemptFailed ? 2 : 1;
        lastAttemptFailed = false;
        break;
      default:
        if (EXECUTION_EVENTS.has(e.type)) events += 1;
    }
  }
  return events;
}

/**
 * State transitions Step Functions bills for the execution: one per state entered, and one per
 * retry ("each retry will be charged as an additional state transition", aws.amazon.com/step-functions/pricing).
 */
export function awsStateTransitions(history: readonly HistoryEvent[]): number {
  return history.filter((e) => e.type === 'StateEntered' || e.type === 'StateRetried').length;
}
