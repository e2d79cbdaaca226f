import { describe, expect, it } from 'vitest';
import { ClusterRejected, ClusterThrottled } from '../../lambdas/core/errors';
import { ExecutionStatus, LocalStateMachine, type TaskHandler } from '../../local/engine/local-execution';
import { readRunDefinition } from '../../statemachine/run-definition';

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
    const answer = (script[p.stage] ?? defaults[p.stage])?.(p, n);
    return (answer ?? {}) as never;
  };
  return { handler, calls };
}

describe('local engine on statemachine/run.asl.json', () => {
  // 1,230 simulated seconds of waiting: unscaled, this test could not finish within its timeout.
  it('runs the lifecycle, passing the execution name and ARN, with Waits scaled to the cluster clock', async () => {
    const { handler, calls } = scripted({
      Watch: (_p, n) => (n < 3 ? { phase: 'waiting', nextPollSeconds: 600 } : { phase: 'done', nextPollSeconds: 0 }),
    });
    const execution = machine.start({ name: 'r1', input: { spec: { name: 'x' } }, handler, timeScale: 60_000 });
    const result = await execution.result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.map((c) => c.stage)).toEqual([
      'Admit', 'Prepare', 'AwaitPrepared', 'Launch', 'AwaitReady', 'Start', 'Watch', 'Watch', 'Watch', 'Collect', 'Decide', 'Notify', 'Cleanup',
    ]);
    expect(calls[0]).toMatchObject({ request: { spec: { name: 'x' } }, executionName: 'r1', execution: execution.executionArn });
    expect(calls[1]).toEqual({ stage: 'Prepare', runId: 'r1', execution: execution.executionArn });
    expect(result.stateTransitions).toBe(result.history.filter((e) => e.type === 'StateEntered').length);
    expect(result.history.filter((e) => e.type === 'StateEntered' && e.state?.name === 'WatchWait')).toHaveLength(2);
  });

  it('ends a duplicate execution at Duplicate without running any stage after Admit', async () => {
    const { handler, calls } = scripted({ Admit: () => ({ runId: 'r1', duplicate: true }) });
    const result = await machine.start({ name: 'r1-again', input: {}, handler }).result;
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
    const result = await machine.start({ name: 'r1', input: {}, handler, timeScale: 1000 }).result;
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
    const result = await machine.start({ name: 'r1', input: {}, handler, timeScale: 1000 }).result;
    expect(result.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.filter((c) => c.stage === 'Start')).toHaveLength(2);
    expect(result.history.filter((e) => e.type === 'StateRetried')).toHaveLength(1);
  });

  it('shows a recorded non-success outcome as a failed execution named by the outcome', async () => {
    const { handler } = scripted({ Collect: () => ({ phase: 'done', outcome: 'THRESHOLDS_FAILED', reason: 'runner 2 exited 99' }) });
    const result = await machine.start({ name: 'r1', input: {}, handler, timeScale: 1000 }).result;
    expect(result.status).toBe(ExecutionStatus.FAILED);
    expect(result.error).toBe('THRESHOLDS_FAILED');
    expect(result.cause).toBe('decided');
  });

  it('stops hard like StopExecution: ABORTED, and no Catch runs', async () => {
    const { handler, calls } = scripted({ Watch: () => ({ phase: 'waiting', nextPollSeconds: 3_600_000 }) });
    const execution = machine.start({ name: 'r1', input: {}, handler, timeScale: 1000 });
    while (!calls.some((c) => c.stage === 'Watch')) await new Promise((r) => setTimeout(r, 5));
    execution.stop();
    const result = await execution.result;
    expect(result.status).toBe(ExecutionStatus.ABORTED);
    expect(calls.map((c) => c.stage)).not.toContain('Decide');
  });
});
