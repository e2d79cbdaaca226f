/**
 * The transitions one stage invocation stands for (lambdas/core/asl-transitions.ts), worked by hand
 * from statemachine/run.asl.json and cruise.asl.json: the invocation's own (entry or retry) + the
 * non-Lambda states entered before the next Lambda Task or the end.
 */
import { describe, expect, it } from 'vitest';
import { invocationTransitions, lambdaTasks, type TaskRef } from '../../lambdas/core/asl-transitions';
import runDefinition from '../../statemachine/run.asl.json' with { type: 'json' };
import cruiseDefinition from '../../statemachine/cruise.asl.json' with { type: 'json' };

const run = (state: string): TaskRef => ({ machine: 'run', state });
const cruise = (state: string): TaskRef => ({ machine: 'cruise', state });

describe('invocationTransitions', () => {
  it.each<[TaskRef, unknown, number, string]>([
    // [task, answer, transitions, the states after it]
    [run('Admit'), { runId: 'r', duplicate: false, queued: false }, 2, 'IsDuplicate'],
    [run('Admit'), { runId: 'r', duplicate: true, queued: false }, 3, 'IsDuplicate, Duplicate (Succeed)'],
    [run('Admit'), { runId: 'r', duplicate: false, queued: true }, 2, 'IsDuplicate'],
    [run('Acquire'), { phase: 'waiting' }, 3, 'AcquireChoice, AcquireWait'],
    [run('AwaitPrepared'), { phase: 'done' }, 2, 'PrepareChoice'],
    [run('Launch'), {}, 1, 'none (AwaitReady is a Lambda Task)'],
    [run('AwaitReady'), { phase: 'waiting' }, 3, 'ReadyChoice, ReadyWait'],
    [run('Watch'), { phase: 'waiting' }, 3, 'WatchChoice, WatchWait'],
    [run('Watch'), { phase: 'cruising' }, 4, "WatchChoice, CruiseWindow, the window's WatchWait"],
    [run('Watch'), { phase: 'done' }, 2, 'WatchChoice'],
    [run('Watch'), { phase: 'failed' }, 2, 'WatchChoice (Default: Decide)'],
    [cruise('Watch'), { phase: 'cruising' }, 3, "the window's WatchChoice, WatchWait"],
    [cruise('Watch'), { phase: 'done' }, 5, "the window's WatchChoice, WindowEnded; CruiseAnswer, WatchChoice"],
    [cruise('Watch'), { phase: 'waiting' }, 6, "the window's WatchChoice, WindowEnded; CruiseAnswer, WatchChoice, WatchWait"],
    [run('Decide'), { outcome: 'SUCCEEDED' }, 1, 'none'],
    [run('Cleanup'), {}, 3, 'Finished, then a Succeed or a Fail (its input, not the answer, decides: one state either way)'],
    [run('CleanupOnError'), {}, 2, 'RunFailed'],
  ])('%o answering %o: %i (%s)', (task, result, expected, _states) => {
    expect(invocationTransitions(task, { result })).toBe(expected);
  });

  it('an error a Retrier names is retried (the retry counts itself); one only a Catch names leads on', () => {
    expect(invocationTransitions(run('Watch'), { error: 'Lambda.Unknown' })).toBe(1);
    // Admit's SpecInvalid is caught into AdmitRejected (a Fail).
    expect(invocationTransitions(run('Admit'), { error: 'SpecInvalid' })).toBe(2);
    // A Decide that fails for good goes to DecideOnError, a Lambda Task.
    expect(invocationTransitions(run('Decide'), { error: 'SpecInvalid' })).toBe(1);
  });

  it('walks every Lambda Task of both definitions, answered or failed', () => {
    const tasks = lambdaTasks();
    const count = (states: Record<string, { Type: string; Resource?: string }>) =>
      Object.values(states).filter((s) => s.Type === 'Task' && s.Resource?.startsWith('${')).length;
    expect(tasks).toHaveLength(count(runDefinition.States) + count(cruiseDefinition.States));
    for (const task of tasks) {
      expect(invocationTransitions(task, { result: {} })).toBeGreaterThanOrEqual(1);
      expect(invocationTransitions(task, { error: 'SomeError' })).toBeGreaterThanOrEqual(1);
    }
  });

  it("every Lambda Task's Parameters name it (state, and machine in the cruise window): the stage reads them", () => {
    for (const [machine, definition] of [
      ['run', runDefinition],
      ['cruise', cruiseDefinition],
    ] as const) {
      for (const [name, state] of Object.entries(
        definition.States as Record<string, { Type: string; Resource?: string; Parameters?: Record<string, unknown> }>,
      )) {
        if (state.Type !== 'Task' || !state.Resource?.startsWith('${')) continue;
        expect(state.Parameters?.state, `${machine}.${name}`).toBe(name);
        expect(state.Parameters?.machine, `${machine}.${name}`).toBe(machine === 'run' ? undefined : machine);
      }
    }
  });
});
