/**
 * Where a k6 runner stands, from its REST API's `GET /v1/status` (k6's lib.ExecutionStatus, as the
 * real k6 1.3.0 reported it through whole runs: test/fixtures/real-k6, README "Facts observed").
 *
 * k6 answers its REST API about 100 ms after launch, while still initializing its VUs (status 1,
 * `vus-max` counting up); its VUs are ready only at status 4 (PausedBeforeRun), seconds later with
 * hundreds of VUs and a heavy init. An unpause sent during status 1 is accepted (200) and k6 starts on
 * its own when init ends, late: so "answers" is not "ready". The answer to the unpause still says
 * status 4 (with paused:false); the next read says 5–8. A second unpause after the start answers 500.
 */
import type { K6Status } from './rest-api';

/** lib/execution.go's ExecutionStatus values (0, 2, 3 and 5 pass too fast to be seen at 50 ms polling). */
export const K6ExecutionStatus = {
  Created: 0,
  InitVUs: 1,
  InitExecutors: 2,
  InitDone: 3,
  PausedBeforeRun: 4,
  Started: 5,
  Setup: 6,
  Running: 7,
  Teardown: 8,
  Ended: 9,
  Interrupted: 10,
} as const;

export const K6RunnerPhase = {
  /** Its API does not answer (not listening yet, or the test ended and k6 exited). */
  silent: 'silent',
  /** Answering, its VUs not all initialized yet (status below 4), or an answer without a status. */
  initializing: 'initializing',
  /** Status 4, paused: every VU of its segment initialized; it can take the start. */
  ready: 'ready',
  /** Status 4 with paused:false: a start request was accepted, the test is not running yet. */
  starting: 'starting',
  /** Status 5–8: started, setup, running, teardown. */
  running: 'running',
  /** Status 9 (ended, lingering) or 10 (interrupted). */
  ended: 'ended',
} as const;
export type K6RunnerPhase = (typeof K6RunnerPhase)[keyof typeof K6RunnerPhase];

export function k6RunnerPhase(status: K6Status | undefined): K6RunnerPhase {
  if (status === undefined) return K6RunnerPhase.silent;
  const code = status.status;
  if (typeof code !== 'number' || code < K6ExecutionStatus.PausedBeforeRun) return K6RunnerPhase.initializing;
  if (code === K6ExecutionStatus.PausedBeforeRun) return status.paused === false ? K6RunnerPhase.starting : K6RunnerPhase.ready;
  if (code <= K6ExecutionStatus.Teardown) return K6RunnerPhase.running;
  return K6RunnerPhase.ended;
}

/** True once the runner's test has begun (or already ended): its start happened. */
export function hasStarted(phase: K6RunnerPhase): boolean {
  return phase === K6RunnerPhase.running || phase === K6RunnerPhase.ended;
}

/** `k6 status 1 (initializing VUs: 132 ready)`, `REST API not answering`: why a runner is not ready, for reasons. */
export function describeK6Status(status: K6Status | undefined): string {
  if (status === undefined) return 'REST API not answering';
  if (typeof status.status !== 'number') return 'REST API answered without an execution status';
  const vus = status['vus-max'];
  if (status.status < K6ExecutionStatus.PausedBeforeRun)
    return `k6 status ${status.status} (initializing VUs${typeof vus === 'number' ? `: ${vus} ready` : ''})`;
  return `k6 status ${status.status}${status.paused === false ? ', unpaused' : ''}`;
}
