/**
 * The sweeper's finishing step (lambdas/stages/sweep-ended.ts, architecture §6 Outages) case by case, against the
 * real local runtime's deps (dynalite ledger, kube-sim, the stages, a webhook receiver) on a virtual
 * clock. Step Functions is the SDK boundary: a double lists and describes the executions each case
 * gives it (test/scenarios/outages.test.ts runs them for real behind the local Step Functions API).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EndedExecution, ExecutionDescription, SweeperExecutions } from '../../lambdas/core/executions';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome, RunStatus, Stage, StageState } from '../../lambdas/core/status';
import { DEFAULT_SWEEP_OPTIONS, sweep } from '../../lambdas/stages/sweep';
import { executionArnFor } from '../../local/engine/local-execution';
import { k6Spec, recordAsApi, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const MINUTE = 60_000;

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { channels: { webhook: { url: `${receiver.url}/hooks/ended` } }, notifyTimeoutMs: 1000 });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

interface Ended {
  name: string;
  input: string;
  status?: 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  /** What DescribeExecution says now (default: the listed status). */
  describedStatus?: string;
  stoppedAgoMs: number;
  error?: string;
  cause?: string;
}

/** ListExecutions and DescribeExecution over the given executions; start and stop are never expected. */
function endedExecutions(ended: Ended[]): SweeperExecutions & { described: string[] } {
  const now = h.runtime.ledger.now();
  const listed: EndedExecution[] = ended.map((e) => ({
    executionArn: executionArnFor(e.name),
    name: e.name,
    status: e.status ?? 'FAILED',
    startedAt: now - e.stoppedAgoMs - 10 * MINUTE,
    stoppedAt: now - e.stoppedAgoMs,
  }));
  const described: string[] = [];
  return {
    described,
    start: () => Promise.reject(new Error('no start expected')),
    stop: () => Promise.reject(new Error('no stop expected')),
    listEnded: async (startedSince) => listed.filter((e) => e.startedAt >= startedSince),
    describe: async (executionArn): Promise<ExecutionDescription | undefined> => {
      described.push(executionArn);
      const e = ended.find((x) => executionArnFor(x.name) === executionArn);
      if (!e) return undefined;
      return {
        executionArn,
        name: e.name,
        status: e.describedStatus ?? e.status ?? 'FAILED',
        input: e.input,
        ...(e.error ? { error: e.error } : {}),
        ...(e.cause ? { cause: e.cause } : {}),
      };
    },
  };
}

/** An API run adopted by its execution, which then ended with nothing finishing it (the reaper gave up in an outage). */
async function strandedRun(name: string): Promise<string> {
  const runId = await recordAsApi(h.runtime, k6Spec({ name, parallelism: 2, notify: { channels: ['webhook'] } }));
  await h.runtime.ledger.adoptRun(runId, executionArnFor(runId));
  return runId;
}

const sweepWith = (executions: SweeperExecutions) => h.clock.actor(() => sweep({ ...h.runtime.deps, executions }));
const past = DEFAULT_SWEEP_OPTIONS.reaperGraceMs + MINUTE;

describe('the sweeper finishes runs whose execution ended while nothing could finish them', () => {
  it("an adopted run whose execution ended FAILED past the reaper grace: decided with the execution's error, notified once, cleaned up", async () => {
    const runId = await strandedRun('stranded');
    const executions = endedExecutions([
      { name: runId, input: JSON.stringify({ runId }), stoppedAgoMs: past, error: 'States.TaskFailed', cause: 'TransientStoreError: ledger unreachable' },
    ]);
    const result = await sweepWith(executions);
    expect(result.errors).toEqual([]);
    expect(result.finished).toEqual([{ runId, outcome: Outcome.FAILED, execution: executionArnFor(runId), ended: 'FAILED' }]);
    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run.outcomeReason).toBe('the execution failed (States.TaskFailed: TransientStoreError: ledger unreachable)');
    expect(view.stages[Stage.Notify]?.state).toBe(StageState.completed);
    expect(view.stages[Stage.Cleanup]?.state).toBe(StageState.completed);
    expect(receiver.requests).toHaveLength(1);

    // The next sweep finds it finished by the ledger alone: no DescribeExecution, no second reap, no second message.
    executions.described.length = 0;
    const again = await sweepWith(executions);
    expect(again.finished).toEqual([]);
    expect(executions.described).toEqual([]);
    expect(receiver.requests).toHaveLength(1);
  });

  it('TIMED_OUT and ABORTED executions end their runs TIMED_OUT and ABORTED', async () => {
    const timedOut = await strandedRun('stranded-timeout');
    const aborted = await strandedRun('stranded-abort');
    const result = await sweepWith(
      endedExecutions([
        { name: timedOut, input: JSON.stringify({ runId: timedOut }), status: 'TIMED_OUT', stoppedAgoMs: past },
        { name: aborted, input: JSON.stringify({ runId: aborted }), status: 'ABORTED', stoppedAgoMs: past, cause: 'stopped by hand' },
      ]),
    );
    expect(result.finished.map((f) => [f.runId, f.outcome])).toEqual(
      expect.arrayContaining([
        [timedOut, Outcome.TIMED_OUT],
        [aborted, Outcome.ABORTED],
      ]),
    );
    expect((await h.runtime.ledger.getRun(aborted))!.run.outcomeReason).toBe('the execution was stopped: stopped by hand');
  });

  it('an execution stopped within the reaper grace is left to the reaper, and finished by the first sweep after it', async () => {
    const runId = await strandedRun('within-grace');
    const justNow = endedExecutions([{ name: runId, input: JSON.stringify({ runId }), stoppedAgoMs: DEFAULT_SWEEP_OPTIONS.reaperGraceMs - MINUTE }]);
    expect((await sweepWith(justNow)).finished).toEqual([]);
    expect(justNow.described).toEqual([]);
    expect((await h.runtime.ledger.getRun(runId))!.run.status).toBe(RunStatus.PENDING);
    const later = endedExecutions([{ name: runId, input: JSON.stringify({ runId }), stoppedAgoMs: DEFAULT_SWEEP_OPTIONS.reaperGraceMs }]);
    expect((await sweepWith(later)).finished.map((f) => f.runId)).toEqual([runId]);
  });

  it('an execution that stopped before the window is not looked at', async () => {
    const runId = await strandedRun('before-window');
    const old = endedExecutions([{ name: runId, input: JSON.stringify({ runId }), stoppedAgoMs: DEFAULT_SWEEP_OPTIONS.finishWindowMs + MINUTE }]);
    expect((await sweepWith(old)).finished).toEqual([]);
    expect(old.described).toEqual([]);
  });

  it("leaves alone: an input that is no run's, a run another execution owns, an execution Step Functions now says is running", async () => {
    const owned = await strandedRun('owned-elsewhere');
    const running = await strandedRun('described-running');
    const executions = endedExecutions([
      { name: newRunId(), input: JSON.stringify({ hello: 'world' }), stoppedAgoMs: past },
      { name: newRunId(), input: 'not json', stoppedAgoMs: past },
      // A duplicate execution of `owned`'s run (its name differs): the run is its owner's to finish.
      { name: `dup-${owned}`.slice(0, 80), input: JSON.stringify({ runId: owned }), stoppedAgoMs: past },
      { name: running, input: JSON.stringify({ runId: running }), describedStatus: 'RUNNING', stoppedAgoMs: past },
    ]);
    const result = await sweepWith(executions);
    expect(result.errors).toEqual([]);
    expect(result.finished).toEqual([]);
    expect((await h.runtime.ledger.getRun(owned))!.run.status).toBe(RunStatus.PENDING);
    expect((await h.runtime.ledger.getRun(running))!.run.status).toBe(RunStatus.PENDING);
    expect(receiver.requests).toHaveLength(0);
  });

  it('a ListExecutions that fails is one error of the sweep; the other steps still run', async () => {
    const executions: SweeperExecutions = {
      ...endedExecutions([]),
      listEnded: () => Promise.reject(Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable' })),
    };
    const result = await sweepWith(executions);
    expect(result.errors).toEqual([{ step: 'finish', error: 'ServiceUnavailable: Service Unavailable' }]);
  });
});
