/**
 * Every k6 execution status (lib/execution.go's ExecutionStatus, 0–10) through the phase AwaitReady and
 * Start judge runners by, and the words a reason uses for it (execution-status.ts), as a table stated
 * from k6's meanings: below 4 its VUs are still being initialized; 4 is paused before the run (ready,
 * or starting once an unpause was accepted); 5–8 started, setup, running, teardown; 9 and 10 ended.
 * The recordings replay (k6-recordings-status.test.ts) shows the same on the real k6's answers.
 */
import { describe, expect, it } from 'vitest';
import { describeK6Status, hasStarted, K6ExecutionStatus, K6RunnerPhase, k6RunnerPhase } from '../../lambdas/engines/k6/execution-status';

describe("k6's execution status", () => {
  it('the values of lib/execution.go', () => {
    expect(K6ExecutionStatus).toEqual({
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
    });
  });

  // status → [phase while paused, phase with paused:false]
  const phases: [number, string, string][] = [
    [0, 'initializing', 'initializing'],
    [1, 'initializing', 'initializing'],
    [2, 'initializing', 'initializing'],
    [3, 'initializing', 'initializing'],
    [4, 'ready', 'starting'],
    [5, 'running', 'running'],
    [6, 'running', 'running'],
    [7, 'running', 'running'],
    [8, 'running', 'running'],
    [9, 'ended', 'ended'],
    [10, 'ended', 'ended'],
  ];
  it.each(phases)('status %i: %s while paused, %s once unpaused', (status, paused, unpaused) => {
    expect(k6RunnerPhase({ status, paused: true })).toBe(paused);
    expect(k6RunnerPhase({ status, paused: false })).toBe(unpaused);
  });

  it('status 4 without a paused field is ready: only an explicit paused:false says a start was accepted', () => {
    expect(k6RunnerPhase({ status: 4 })).toBe(K6RunnerPhase.ready);
  });

  it('started: running and ended only', () => {
    expect(Object.values(K6RunnerPhase).filter(hasStarted)).toEqual([K6RunnerPhase.running, K6RunnerPhase.ended]);
  });

  it.each([
    [{ status: 1, paused: true, 'vus-max': 132 }, 'k6 status 1 (initializing VUs: 132 ready)'],
    [{ status: 3, paused: true, 'vus-max': 0 }, 'k6 status 3 (initializing VUs: 0 ready)'],
    [{ status: 0, paused: true }, 'k6 status 0 (initializing VUs)'],
    [{ status: 4, paused: true, 'vus-max': 400 }, 'k6 status 4'],
    [{ status: 4, paused: false, 'vus-max': 400 }, 'k6 status 4, unpaused'],
    [{ status: 4 }, 'k6 status 4'],
    [{ status: 7, paused: false }, 'k6 status 7, unpaused'],
    [{ status: 9, paused: true }, 'k6 status 9'],
  ])('%j is described as %j', (status, words) => {
    expect(describeK6Status(status)).toBe(words);
  });
});
