/**
 * What a runner's exit code means for the run, as the real k6 behaves (test/fixtures/real-k6: exit-test-abort,
 * exit-test-fail, exit-sigterm-running). Before, Watch ended the run FAILED as soon as one runner exited
 * with 108, 110 or 105, Collect never ran, and the runners still running were cut off, though each
 * printed its result. Now: 110 (the script's exec.test.fail()) runs to its end and is the script's
 * verdict, THRESHOLDS_FAILED; 108 (exec.test.abort()) ends the test early and the run ABORTED by the
 * script; 105 (a signal) and a crash end it FAILED. Whenever a runner ends the test early the others
 * are stopped gracefully (partial results) and every runner's result is collected. Each run: one
 * outcome, one notification, nothing left on the cluster. Whole runs on the real ASL, dynalite and kube-sim.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome, Stage } from '../../lambdas/core/status';
import type { CollectRecord } from '../../lambdas/stages/collect';
import { outputOf } from '../../lambdas/stages/run-context';
import type { RunView } from '../../lambdas/ledger/ledger';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { channels: { webhook: { url: `${receiver.url}/hooks/exit-codes` } } });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const TWO_MINUTES = "export const options = { vus: 6, duration: '2m' };\nexport default function () {}\n";
const spec = (name: string, script = TWO_MINUTES) => k6Spec({ name, parallelism: 3, script: { inline: script }, notify: { channels: ['webhook'] } });

/** The runners Collect has a result for: index, exit code, whether it counted requests. */
function exits(_runId: string, view: RunView) {
  const { result } = outputOf<CollectRecord>(view, Stage.Collect)!;
  return result.runners.map((r) => [r.runner, r.exitCode, r.requests.count > 0]);
}

function expectOneNotificationAndNothingLeft(runId: string, outcome: Outcome) {
  const deliveries = receiver.requests.filter((r) => String(r.headers['idempotency-key']).startsWith(`${runId}:`));
  expect(deliveries).toHaveLength(1);
  expect(JSON.parse(deliveries[0]!.body.toString())).toMatchObject({ runId, outcome });
  expect(h.leftovers(runId)).toEqual({});
}

describe('a runner exit code is read for what it means, and every result is collected', () => {
  it('108 (exec.test.abort() on one runner): the others are stopped, all three results collected, ABORTED by the script', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(108, { runId, runnerIndex: 1 });
    const { view } = await h.run(spec('script-abort'), { name: runId });
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(view.run.outcomeReason).toBe(
      'run: aborted by the script on runner 1 (exit 108: test.abort() called by the script); runners 0 and 2 stopped by loadplane when the test ended early (partial results); results from all 3 runners',
    );
    expect(exits(runId, view)).toEqual([
      [0, 103, true],
      [1, 108, true],
      [2, 103, true],
    ]);
    expectOneNotificationAndNothingLeft(runId, Outcome.ABORTED);
  });

  it('exec.test.abort() in the script itself (every runner aborts): ABORTED by the script, every result', async () => {
    const script =
      "import exec from 'k6/execution';\nexport const options = { vus: 6, duration: '2m' };\nexport default function () {\n  exec.test.abort('enough');\n}\n";
    const { runId, view } = await h.run(spec('script-abort-all', script));
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(view.run.outcomeReason).toMatch(
      /^run: aborted by the script on runners 0, 1 and 2 \(exit 108: test\.abort\(\) called by the script\); results from all 3 runners$/,
    );
    expect(exits(runId, view).map(([, code]) => code)).toEqual([108, 108, 108]);
    expectOneNotificationAndNothingLeft(runId, Outcome.ABORTED);
  });

  it("110 (exec.test.fail()): the test runs to its end on every runner, the script's verdict: THRESHOLDS_FAILED, not FAILED", async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(110, { runId, runnerIndex: 0 });
    const { view } = await h.run(spec('script-fail'), { name: runId });
    expect(view.run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(view.run.outcomeReason).toBe('runner 0 exited 110 (test.fail() called by the script)');
    expect(exits(runId, view)).toEqual([
      [0, 110, true],
      [1, 0, true],
      [2, 0, true],
    ]);
    expectOneNotificationAndNothingLeft(runId, Outcome.THRESHOLDS_FAILED);
  });

  it('105 (a SIGTERM from outside, half-way): FAILED, its partial result and the stopped runners’ kept', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(105, { runId, runnerIndex: 2 });
    const { view } = await h.run(spec('signalled'), { name: runId });
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(
      /^run: runner 2 stopped before the test's end \(exit 105: aborted from outside \(SIGINT\/SIGTERM\)\); runners 0 and 1 stopped by loadplane/,
    );
    expect(exits(runId, view)).toEqual([
      [0, 103, true],
      [1, 103, true],
      [2, 105, true],
    ]);
    expectOneNotificationAndNothingLeft(runId, Outcome.FAILED);
  });

  it('137 (OOM-killed, no result): FAILED naming it; the other two runners’ partial results are kept', async () => {
    const runId = newRunId();
    h.kubeSim.faults.setExitCode(137, { runId, runnerIndex: 0 });
    const { view } = await h.run(spec('oom'), { name: runId });
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(
      /^run: runner 0 exited 137 \(SIGKILL, usually OOM-killed\) before the test's end; runners 1 and 2 stopped by loadplane .*; results from 2 of 3 runners; also runner 0 produced no result/,
    );
    expect(exits(runId, view)).toEqual([
      [1, 103, true],
      [2, 103, true],
    ]);
    expectOneNotificationAndNothingLeft(runId, Outcome.FAILED);
  });
});
