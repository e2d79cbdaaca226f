/**
 * A healthy run raises no error anywhere (architecture §3.6): a 1-hour and a 24-hour k6 test on the
 * local engine, every stage invocation counted as the stage functions' Errors metric would count it,
 * every execution's history (the run's and each cruise window's) counted as Step Functions records
 * it, against a 10,000-event budget per execution; and the runners are still polled at least every
 * 60 s while the test runs, so a runner that fails is seen within a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRUISE_POLL_SECONDS } from '../../lambdas/core/polling';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { StartRecord } from '../../lambdas/stages/start';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { awsHistoryEvents } from '../../local/engine/aws-history';
import { ExecutionStatus, type ExecutionResult } from '../../local/engine/local-execution';
import { LOCAL_CRUISE_STATE_MACHINE_ARN } from '../../local/engine/local-execution';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

const EVENT_BUDGET = 10_000;

interface Invocation {
  stage: string;
  at: number;
  error?: string;
}

let h: Harness;
let invocations: Invocation[] = [];

beforeAll(async () => {
  h = await startHarness(undefined, {
    invokeStage: async (deps, payload) => {
      const call: Invocation = { stage: String((payload as { stage?: unknown }).stage), at: h.clock.now() };
      invocations.push(call);
      try {
        return await dispatchStage(deps, payload);
      } catch (err) {
        call.error = (err as Error).name;
        throw err;
      }
    },
  });
});
afterAll(async () => h?.close());

const executionsOf = (execution: ExecutionResult) => [execution, ...execution.children];

describe.each([
  { label: '1 h', duration: '1h', run: '2h', total: '3h' },
  { label: '24 h', duration: '23h50m', run: '24h', total: '25h' },
])('a healthy $label test', ({ duration, run, total }) => {
  let result: Awaited<ReturnType<Harness['run']>>;
  let calls: Invocation[];

  beforeAll(async () => {
    invocations = [];
    const script = `export const options = { vus: 4, duration: '${duration}' };\nexport default function () {}\n`;
    result = await h.run(k6Spec({ name: 'no-errors', script: { inline: script }, timeouts: { prepare: '2m', ready: '2m', run, total } }));
    calls = invocations;
  });

  it('succeeds, with no stage invocation ending in an error and no state failing in any execution', () => {
    expect(result.view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(result.execution.status).toBe(ExecutionStatus.SUCCEEDED);
    expect(calls.filter((c) => c.error !== undefined)).toEqual([]);
    for (const execution of executionsOf(result.execution)) {
      expect(execution.status).toBe(ExecutionStatus.SUCCEEDED);
      expect(execution.history.filter((e) => e.type === 'StateFailed' || e.type === 'StateRetried')).toEqual([]);
    }
  });

  it('polls far from the end in cruise windows, child executions of the cruise machine', () => {
    const windows = result.execution.children;
    expect(windows.length).toBeGreaterThan(0);
    for (const w of windows) expect(w.executionArn.startsWith(LOCAL_CRUISE_STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:'))).toBe(true);
    // Most polls are the windows': the run's own history keeps only the few near the start and the end.
    const watchesIn = (e: ExecutionResult) => e.history.filter((x) => x.type === 'StateEntered' && x.state?.name === 'Watch').length;
    const inWindows = windows.reduce((n, w) => n + watchesIn(w), 0);
    expect(inWindows).toBeGreaterThan(watchesIn(result.execution));
  });

  it(`keeps every execution's history within ${EVENT_BUDGET.toLocaleString('en-US')} events`, () => {
    for (const execution of executionsOf(result.execution)) expect(awsHistoryEvents(execution.history)).toBeLessThanOrEqual(EVENT_BUDGET);
  });

  it(`polls the runners at least every ${CRUISE_POLL_SECONDS} s while the test runs`, () => {
    const started = result.view.stages.Start?.output as StartRecord;
    const watches = calls.filter((c) => c.stage === Stage.Watch).map((c) => c.at);
    expect(watches[0]! - started.startedAt).toBeLessThanOrEqual(CRUISE_POLL_SECONDS * 1000);
    const gaps = watches.slice(1).map((at, i) => at - watches[i]!);
    // Each gap is a Wait or a window's Wait of at most the cruise interval, plus the poll's own calls (no simulated time passes in them here).
    expect(Math.max(...gaps)).toBeLessThanOrEqual(CRUISE_POLL_SECONDS * 1000);
    // The last poll saw the test over: past its schedule's end.
    expect(watches.at(-1)!).toBeGreaterThanOrEqual(started.scheduledEndAt!);
  });
});
