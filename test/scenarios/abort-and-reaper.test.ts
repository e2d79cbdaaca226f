/**
 * Runs that end other than by finishing: a graceful abort, an execution stopped hard (StopExecution),
 * a duplicate or rejected execution failing. The reaper (played locally as EventBridge would) finishes
 * what the execution could not, through the same ledger keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { cleanup } from '../../lambdas/stages/cleanup';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { reap } from '../../lambdas/stages/reap';
import { outputOf } from '../../lambdas/stages/run-context';
import { ExecutionStatus } from '../../local/engine/local-execution';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const TEN_MINUTES = `export const options = { vus: 8, duration: '10m' };\nexport default function () {}\n`;
const longSpec = (name: string) => k6Spec({ name, script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } });

describe('graceful abort', () => {
  it('mid-run: the runners are told to stop, their partial results are collected, the run ends ABORTED and is cleaned up', async () => {
    const runId = newRunId();
    const before = h.kubeSim.requestLog.length;
    const { view, execution } = await h.run(longSpec('abort-mid-run'), {
      name: runId,
      onEvent: (e) => {
        if (e.type === 'StateExited' && e.state?.name === 'Start') void h.runtime.abort(runId, 'alice');
      },
    });
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(view.run.outcomeReason).toMatch(/^aborted by alice; partial results from 4 of 4 runners/);
    expect(execution.error).toBe(Outcome.ABORTED);
    const stops = h.kubeSim.requestLog.slice(before).filter((r) => r.method === 'PATCH' && r.path.endsWith(':6565/proxy/v1/status'));
    expect(stops.length).toBeGreaterThanOrEqual(8); // 4 starts, then at least one stop per runner
    const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
    expect(result.durationMs).toBeLessThan(10 * 60 * 1000); // partial: stopped well before the 10 minutes
    expect(h.leftovers(runId)).toEqual({});
  });

  it('before the runners start: the run ends ABORTED without launching them', async () => {
    const runId = newRunId();
    const { view } = await h.run(longSpec('abort-early'), {
      name: runId,
      onEvent: (e) => {
        if (e.type === 'StateExited' && e.state?.name === 'Admit') void h.runtime.abort(runId, 'bob');
      },
    });
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(view.run.outcomeReason).toMatch(/aborted by bob before the test started/);
    expect(h.leftovers(runId)).toEqual({});
  });
});

describe('the reaper', () => {
  it('finishes an execution stopped hard mid-run (no Catch runs): ABORTED, notified once, nothing left', async () => {
    const runId = newRunId();
    const execution = h.runtime.startExecution({
      name: runId,
      input: { spec: longSpec('stopped-hard'), source: 'local' },
      onEvent: (e) => {
        if (e.type === 'StateEntered' && e.state?.name === 'Watch') execution.stop();
      },
    });
    const result = await execution.result;
    expect(result.status).toBe(ExecutionStatus.ABORTED);
    expect(result.history.some((e) => e.state?.name === 'DecideOnError')).toBe(false);
    expect(result.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.ABORTED, reason: 'the execution was stopped' });
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    for (const stage of [Stage.Decide, Stage.Notify, Stage.Cleanup]) expect(view.stages[stage]?.state).toBe(StageState.completed);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a duplicate event for a run its execution already finished changes nothing and touches no cluster', async () => {
    const { runId, view, execution } = await h.run(k6Spec({ name: 'thresholds', annotations: { 'kube-sim.loadplane.io/exit-code': '99' } }));
    expect(view.run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(execution.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.THRESHOLDS_FAILED });
    const before = h.kubeSim.requestLog.length;
    const again = await reap(h.runtime.deps, {
      executionArn: execution.executionArn,
      name: runId,
      status: 'FAILED',
      input: JSON.stringify({ spec: k6Spec({ name: 'thresholds', annotations: { 'kube-sim.loadplane.io/exit-code': '99' } }), source: 'local' }),
      error: 'THRESHOLDS_FAILED',
    });
    expect(again).toMatchObject({ kind: 'reaped', outcome: Outcome.THRESHOLDS_FAILED });
    expect(h.kubeSim.requestLog.slice(before)).toEqual([]);
    const after = (await h.runtime.ledger.getRun(runId))!;
    for (const stage of [Stage.Decide, Stage.Notify, Stage.Cleanup]) expect(after.stages[stage]?.attempts).toBe(1);
  });

  it('ignores the failure of an execution that never owned its run (a rejected edit of an existing run)', async () => {
    const key = { idempotencyKey: 'k-1', caller: 'ci' };
    const first = await h.run(k6Spec({ name: 'owned', parallelism: 2 }), { input: { spec: k6Spec({ name: 'owned', parallelism: 2 }), ...key } });
    const second = await h.runtime.startExecution({ name: 'edit', input: { spec: k6Spec({ name: 'owned', parallelism: 3 }), ...key } }).result;
    expect(second.error).toBe('RunConflict');
    expect(second.reaped).toMatchObject({ kind: 'ignored' });
    expect((await h.runtime.ledger.getRun(first.runId))!.run.outcome).toBe(Outcome.SUCCEEDED);
  });

  it('Cleanup waits (StageBusy, retried) while a stopped execution’s Launch still holds its lease, then deletes', async () => {
    const runId = newRunId();
    await dispatchStage(h.runtime.deps, {
      stage: Stage.Admit,
      request: { spec: k6Spec({ name: 'lease-held' }), source: 'local' },
      execution: `arn:local:${runId}`,
      executionName: runId,
    });
    // A Launch invocation still running after StopExecution: its lease is live in the ledger.
    await h.runtime.ledger.beginStage(runId, Stage.Launch, 'launch-still-running', 60_000);
    await expect(cleanup(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'StageBusy', stage: Stage.Launch, retryable: true });
    await h.runtime.ledger.completeStage(runId, Stage.Launch, 'launch-still-running', {});
    await expect(cleanup(h.runtime.deps, runId)).resolves.toMatchObject({ kept: false });
  });
});
