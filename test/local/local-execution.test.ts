import { describe, expect, it } from 'vitest';
import { ClusterRejected, ClusterThrottled } from '../../lambdas/core/errors';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { ScaledClock } from '../../local/clock/scaled-clock';
import { ExecutionStatus, LOCAL_CRUISE_STATE_MACHINE_ARN, LocalStateMachine, type TaskHandler } from '../../local/engine/local-execution';
import { readRunDefinition, renderCruiseDefinition, renderRunDefinition } from '../../statemachine/run-definition';
import { VirtualClock } from '../../local/clock/virtual-clock';

// These tests exercise the engine's plumbing on the real definition: what each Task receives, how
// Waits scale, how errors route. The stage handler here is a script of answers, not the stages.
const machine = new LocalStateMachine(readRunDefinition());

type Payload = { stage: string; [k: string]: unknown };
type Script = Partial<Record<string, (p: Payload, call: number) => unknown>>;

function scripted(script: Script): { handler: TaskHandler; calls: Payload[] } {
  const calls: Payload[] = [];
  const counts = new Map<string, number>();
  const defaults: Script = {
    Admit: () => ({ runId: 'r1', duplicate: false }),
    Prepare: () => ({ phase: 'waiting', nextPollSeconds: 30 }),
    AwaitPrepared: () => ({ phase: 'done', nextPollSeconds: 0 }),
    AwaitReady: () => ({ phase: 'done', nextPollSeconds: 0 }),
    Watch: () => ({ phase: 'done', nextPollSeconds: 0 }),
    Collect: () => ({ phase: 'done', outcome: 'SUCCEEDED', reason: 'all runners passed' }),
    Decide: (p) => (p.error ? { outcome: 'FAILED', reason: 'stage failed' } : { outcome: (p.verdict as { outcome: string }).outcome, reason: 'decided' }),
  };
  const handler: TaskHandler = async (payload) => {
    const p = payload as Payload;
    calls.push(p);
    const n = (counts.get(p.stage) ?? 0) + 1;
    counts.set(p.stage, n);
    const answer = await (script[p.stage] ?? defaults[p.stage])?.(p, n);
    return (answer ?? {}) as never;
  };
  return { handler, calls };
}

describe('local engine on statemachine/run.asl.json', () => {
  // 1,200 simulated seconds of waiting, on a virtual clock: no real time passes.
  it('runs the lifecycle, passing the execution name and ARN, with Waits on the cluster clock', async () => {
    const { handler, calls } = scripted({
      Watch: (_p, n) => (n < 3 ? { phase: 'waiting', nextPollSeconds: 600 } : { phase: 'done', nextPollSeconds: 0 }),
    });
    const execution = machine.start({ name: 'r1', input: { spec: { name: 'x' } }, handler, clock: new VirtualClock() });
    const result = await execution.result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.map((c) => c.stage)).toEqual([
      'Admit',
      'Prepare',
      'AwaitPrepared',
      'Launch',
      'AwaitReady',
      'Start',
      'Watch',
      'Watch',
      'Watch',
      'Collect',
      'Decide',
      'Notify',
      'Cleanup',
    ]);
    expect(calls[0]).toMatchObject({ request: { spec: { name: 'x' } }, executionName: 'r1', execution: execution.executionArn });
    // The Task names itself (state): the stage's meter counts the transitions after it from there.
    expect(calls[1]).toEqual({ stage: 'Prepare', state: 'Prepare', runId: 'r1', execution: execution.executionArn });
    expect(result.stateTransitions).toBe(result.history.filter((e) => e.type === 'StateEntered').length);
    expect(result.history.filter((e) => e.type === 'StateEntered' && e.state?.name === 'WatchWait')).toHaveLength(2);
  });

  it('ends a duplicate execution at Duplicate without running any stage after Admit', async () => {
    const { handler, calls } = scripted({ Admit: () => ({ runId: 'r1', duplicate: true }) });
    const result = await machine.start({ name: 'r1-again', input: {}, handler, clock: new VirtualClock() }).result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.map((c) => c.stage)).toEqual(['Admit']);
    expect(result.history.some((e) => e.state?.name === 'Duplicate')).toBe(true);
  });

  it('routes a non-retryable stage error through Decide, Notify and Cleanup to a failed execution', async () => {
    const { handler, calls } = scripted({
      Launch: () => {
        throw new ClusterRejected('Job lp-r1-runner-0 is invalid', 422);
      },
    });
    const result = await machine.start({ name: 'r1', input: {}, handler, clock: new VirtualClock() }).result;
    expect(calls.map((c) => c.stage)).toEqual(['Admit', 'Prepare', 'AwaitPrepared', 'Launch', 'Decide', 'Notify', 'Cleanup']);
    expect(calls[4]).toMatchObject({ error: { Error: 'ClusterRejected', Cause: 'Job lp-r1-runner-0 is invalid' } });
    expect(result.status).toBe(ExecutionStatus.FAILED);
    expect(result.error).toBe('ClusterRejected');
  });

  it('retries a retryable stage error by its name, then carries on', async () => {
    const { handler, calls } = scripted({
      Start: (_p, n) => {
        if (n === 1) throw new ClusterThrottled('too many requests', 429);
        return {};
      },
    });
    const result = await machine.start({ name: 'r1', input: {}, handler, clock: new VirtualClock() }).result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.filter((c) => c.stage === 'Start')).toHaveLength(2);
    expect(result.history.filter((e) => e.type === 'StateRetried')).toHaveLength(1);
    // Step Functions bills the retry as a transition too.
    expect(result.stateTransitions).toBe(result.history.filter((e) => e.type === 'StateEntered').length + 1);
  });

  describe('cruise windows: a START_EXECUTION_SYNC Task runs a child execution to its end', () => {
    const cruiseArn = LOCAL_CRUISE_STATE_MACHINE_ARN;
    const withWindows = new LocalStateMachine(renderRunDefinition({ limits: DEFAULT_CONFIG, cruiseStateMachineArn: cruiseArn }), {
      nested: { [cruiseArn]: new LocalStateMachine(renderCruiseDefinition({ limits: DEFAULT_CONFIG }), { stateMachineArn: cruiseArn }) },
    });
    const cruisingThenDone = (polls: number, at: number[], clock: VirtualClock) => (_p: Payload, n: number) => {
      at.push(clock.now());
      return n <= polls ? { phase: 'cruising', nextPollSeconds: 60 } : { phase: 'done', nextPollSeconds: 0 };
    };

    it("polls in the child every interval on the cluster's clock, with the run's execution id; its last answer is the run's step", async () => {
      const clock = new VirtualClock();
      // Real time for the platform: were the windows' Waits on it, each poll would wait a real minute (and time out here).
      const platformClock = new ScaledClock(1);
      const polledAt: number[] = [];
      const { handler, calls } = scripted({ Watch: cruisingThenDone(4, polledAt, clock) });
      const events: Array<{ type: string; execution?: string }> = [];
      try {
        const execution = withWindows.start({ name: 'r1', input: {}, handler, clock, platformClock, onEvent: (e) => events.push(e) });
        const result = await execution.result;
        expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
        // The run's Watch answered cruising; the window polled 4 more times, a minute apart, the last answering done.
        expect(polledAt.slice(1).map((t, i) => t - polledAt[i]!)).toEqual([60_000, 60_000, 60_000, 60_000]);
        expect(calls.filter((c) => c.stage === 'Watch').map((c) => c.execution)).toEqual(Array(5).fill(execution.executionArn));
        expect(calls.map((c) => c.stage).slice(-4)).toEqual(['Collect', 'Decide', 'Notify', 'Cleanup']);
        expect(result.children).toHaveLength(1);
        const [window] = result.children;
        expect(window!.status).toBe(ExecutionStatus.SUCCEEDED);
        expect(window!.executionArn).toBe(`${cruiseArn.replace(':stateMachine:', ':execution:')}:r1-0001`);
        expect(window!.output).toMatchObject({ runId: 'r1', execution: execution.executionArn, step: { phase: 'done', nextPollSeconds: 0 } });
        const entered = (h: typeof result.history, name: string) => h.filter((e) => e.type === 'StateEntered' && e.state?.name === name).length;
        expect([entered(window!.history, 'WatchWait'), entered(window!.history, 'Watch')]).toEqual([4, 4]);
        expect([entered(result.history, 'Watch'), entered(result.history, 'CruiseWindow'), entered(result.history, 'WatchWait')]).toEqual([1, 1, 0]);
        // Its events reach onEvent as they happen, marked with its ARN; the run's are unmarked.
        expect(events.filter((e) => e.execution === window!.executionArn)).toHaveLength(window!.history.length);
        expect(events.filter((e) => e.execution === undefined)).toHaveLength(result.history.length);
      } finally {
        platformClock.close();
      }
    });

    it('a window that fails for good is tried twice more, then the run takes the fail path with what failed in the window', async () => {
      const { handler, calls } = scripted({
        Watch: (_p, n) => {
          if (n === 1) return { phase: 'cruising', nextPollSeconds: 60 };
          throw new ClusterRejected('pods is forbidden', 403);
        },
      });
      const result = await withWindows.start({ name: 'r1', input: {}, handler, clock: new VirtualClock() }).result;
      expect(result.status).toBe(ExecutionStatus.FAILED);
      expect(result.children.map((c) => c.status)).toEqual([ExecutionStatus.FAILED, ExecutionStatus.FAILED, ExecutionStatus.FAILED]);
      const decide = calls.find((c) => c.stage === 'Decide')!;
      const error = decide.error as { Error: string; Cause: string };
      expect(error.Error).toBe('States.TaskFailed');
      expect(JSON.parse(error.Cause)).toEqual({
        ExecutionArn: result.children[2]!.executionArn,
        Status: 'FAILED',
        Error: 'ClusterRejected',
        Cause: 'pods is forbidden',
      });
      expect(calls.map((c) => c.stage).slice(-3)).toEqual(['Decide', 'Notify', 'Cleanup']);
    });

    it('stopping the run stops its window: no poll after the stop', async () => {
      const clock = new VirtualClock();
      const polledAt: number[] = [];
      const poll = cruisingThenDone(100, polledAt, clock);
      const { handler } = scripted({
        Watch: (p, n) => {
          // 150 s after the run's first poll, mid-way through the window's second Wait.
          if (n === 1) clock.at(clock.now() + 150_000, () => execution.stop());
          return poll(p, n);
        },
      });
      const execution = withWindows.start({ name: 'r1', input: {}, handler, clock });
      const result = await execution.result;
      expect(result.status).toBe(ExecutionStatus.ABORTED);
      expect(result.children.map((c) => c.status)).toEqual([ExecutionStatus.ABORTED]);
      expect(polledAt.every((t) => t <= polledAt[0]! + 150_000)).toBe(true);
      expect(polledAt).toHaveLength(3);
    });
  });

  it('shows a recorded non-success outcome as a failed execution named by the outcome', async () => {
    const { handler } = scripted({ Collect: () => ({ phase: 'done', outcome: 'THRESHOLDS_FAILED', reason: 'runner 2 exited 99' }) });
    const result = await machine.start({ name: 'r1', input: {}, handler, clock: new VirtualClock() }).result;
    expect(result.status).toBe(ExecutionStatus.FAILED);
    expect(result.error).toBe('THRESHOLDS_FAILED');
    expect(result.cause).toBe('decided');
  });

  it('stops hard like StopExecution: ABORTED, no Catch runs, and no Task is invoked after the stop', async () => {
    const stop: { execution?: ReturnType<typeof machine.start> } = {};
    const { handler, calls } = scripted({
      Watch: () => {
        // Stopped while this Watch is in flight: its Wait and the next poll must never come.
        stop.execution!.stop();
        return { phase: 'waiting', nextPollSeconds: 60 };
      },
    });
    const execution = machine.start({ name: 'r1', input: {}, handler, clock: new VirtualClock() });
    stop.execution = execution;
    const result = await execution.result;
    expect(result.status).toBe(ExecutionStatus.ABORTED);
    expect(calls.map((c) => c.stage).filter((s) => s === 'Watch')).toHaveLength(1);
    expect(calls.map((c) => c.stage)).not.toContain('Decide');
  });

  it("takes the definition's Retry delays on the platform clock: backoff, capped, with full jitter", async () => {
    const clock = new VirtualClock(0);
    const startTimes: number[] = [];
    const { handler } = scripted({
      Start: (_p, n) => {
        startTimes.push(clock.now());
        if (n <= 3) throw new ClusterThrottled('too many requests', 429);
        return {};
      },
    });
    // random() = 1: the full interval each time (jitter picks in [0, interval]).
    const result = await machine.start({ name: 'r1', input: {}, handler, clock, random: () => 1 }).result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    const retrier = readRunDefinition().States.Start!.Retry!.find((r) => r.ErrorEquals.includes('ClusterThrottled'))!;
    const gaps = startTimes.slice(1).map((t, i) => t - startTimes[i]!);
    const expected = [0, 1, 2].map((k) => Math.min(retrier.IntervalSeconds! * retrier.BackoffRate! ** k, retrier.MaxDelaySeconds ?? Infinity) * 1000);
    expect(gaps).toEqual(expected);
  });

  it('times a Task out on its TimeoutSeconds (States.Timeout, retried) while the late invocation goes on', async () => {
    const clock = new VirtualClock(0);
    let lateFinishedAt: number | undefined;
    const { handler, calls } = scripted({
      Collect: async (_p, n) => {
        if (n === 1) {
          await clock.sleep(10 * 60_000); // hangs far past the Task's TimeoutSeconds
          lateFinishedAt = clock.now();
        }
        return { phase: 'done', outcome: 'SUCCEEDED', reason: 'all runners passed' };
      },
    } as Script);
    const result = await machine.start({ name: 'r1', input: {}, handler, clock }).result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.filter((c) => c.stage === 'Collect')).toHaveLength(2);
    expect(result.history.some((e) => e.type === 'StateFailed' && e.Error === 'States.Timeout')).toBe(true);
    await clock.sleep(10 * 60_000);
    expect(lateFinishedAt).toBeDefined();
  });

  it("ends the execution TIMED_OUT at the machine's TimeoutSeconds, on the cluster clock", async () => {
    const clock = new VirtualClock(0);
    const { handler } = scripted({ Watch: () => ({ phase: 'waiting', nextPollSeconds: 7000 }) });
    const result = await machine.start({ name: 'r1', input: {}, handler, clock }).result;
    expect(result.status).toBe(ExecutionStatus.TIMED_OUT);
    expect(clock.now()).toBe(readRunDefinition().TimeoutSeconds * 1000);
  });
});
