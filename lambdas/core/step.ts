/**
 * What a stage answers the state machine (the `$.step` of run.asl.json). Poll stages answer
 * `waiting` with the seconds to wait; Watch answers `cruising` instead while the test runs on far from
 * its end, and the poll loop goes on in a cruise window (a child execution, cruise.asl.json); `done`
 * moves on; anything else goes to Decide with the outcome and reason it found.
 */
import type { Outcome } from './status';

export const StepPhase = {
  waiting: 'waiting',
  /** Watch: the test runs on; poll again after nextPollSeconds, in a cruise window (lambdas/core/polling.ts). */
  cruising: 'cruising',
  done: 'done',
  failed: 'failed',
  timed_out: 'timed_out',
  aborted: 'aborted',
  /** Acquire: the run's concurrency group was busy and its spec says skip. */
  skipped: 'skipped',
} as const;
export type StepPhase = (typeof StepPhase)[keyof typeof StepPhase];

export interface StepResult {
  phase: StepPhase;
  /** Seconds the Wait state waits before the next poll (0 when not waiting). */
  nextPollSeconds: number;
  /** Set when the step ends the run early (failed, timed out, aborted) or, from Collect, always. */
  outcome?: Outcome;
  reason?: string;
}

export const waiting = (nextPollSeconds: number): StepResult => ({ phase: StepPhase.waiting, nextPollSeconds });
export const cruising = (nextPollSeconds: number): StepResult => ({ phase: StepPhase.cruising, nextPollSeconds });
export const done = (): StepResult => ({ phase: StepPhase.done, nextPollSeconds: 0 });
export const endsRun = (phase: Exclude<StepPhase, 'waiting' | 'cruising' | 'done'>, outcome: Outcome, reason: string): StepResult => ({
  phase,
  nextPollSeconds: 0,
  outcome,
  reason,
});
