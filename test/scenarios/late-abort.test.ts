/**
 * An abort that arrives after the test already ended (DELETE / Ctrl-C after every runner finished,
 * before or during Watch's last poll or Collect) does not turn a completed test into ABORTED: the run
 * reports what the test did, from the exit codes, and the reason notes the late request. An abort wins
 * only over a test some runner was still running (architecture §3). Everything else is real: the ASL,
 * the stages, dynalite, kube-sim, the webhook sender; time is the harness's VirtualClock.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Role, SimAnnotations } from '../../lambdas/core/runner-contract';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { CLOCK_SKEW_TOLERANCE_MS } from '../../lambdas/stages/runners';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let h: Harness;
let receiver: WebhookReceiver;
/** Runs to abort late, and when: just before Watch's poll that finds every runner exited, or just before Collect. */
const lateAbort = new Map<string, 'last-watch' | 'collect' | 'ready-partial'>();

/** Every runner pod of the run has exited (kube-sim's view). */
function runnersExited(runId: string, atLeast?: number): boolean {
  const pods = h.kubeSim.list('Pod', undefined, `loadplane.io/run-id=${runId}`).filter((p) => p.metadata?.labels?.['loadplane.io/role'] === Role.runner);
  const exited = pods.filter((p) => p.status?.containerStatuses?.[0]?.state?.terminated !== undefined).length;
  return atLeast === undefined ? pods.length > 0 && exited === pods.length : exited >= atLeast;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/late-abort` } },
    // The Lambda service's boundary: the abort is recorded right before the chosen invocation.
    invokeStage: async (deps, payload) => {
      const { stage, runId } = payload as { stage: string; runId?: string };
      const when = runId === undefined ? undefined : lateAbort.get(runId);
      const due =
        (when === 'collect' && stage === Stage.Collect) ||
        (when === 'last-watch' && stage === Stage.Watch && runnersExited(runId!)) ||
        (when === 'ready-partial' && stage === Stage.AwaitReady && runnersExited(runId!, 1));
      if (due) {
        lateAbort.delete(runId!);
        // Past the last exit by more than the clock-skew tolerance and the whole second Kubernetes
        // keeps: within those the abort wins (runners.ts, runningAt).
        await h.clock.sleep(CLOCK_SKEW_TOLERANCE_MS + 2_000);
        await h.runtime.abort(runId!, 'alice');
      }
      return dispatchStage(deps, payload);
    },
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

async function runWithLateAbort(spec: Parameters<Harness['run']>[0], when: 'last-watch' | 'collect' | 'ready-partial', before?: (runId: string) => void) {
  const runId = newRunId();
  before?.(runId);
  lateAbort.set(runId, when);
  const finished = await h.run(spec, { name: runId });
  expect(lateAbort.has(runId)).toBe(false); // the abort was recorded
  expect(finished.view.run.abortRequestedBy).toBe('alice');
  return finished;
}

function expectOneNotificationAndNothingLeft(runId: string, outcome: Outcome) {
  const deliveries = receiver.requests.filter((r) => String(r.headers['idempotency-key']).startsWith(`${runId}:`));
  expect(deliveries).toHaveLength(1);
  expect(JSON.parse(deliveries[0]!.body.toString())).toMatchObject({ runId, outcome });
  expect(h.leftovers(runId)).toEqual({});
}

describe('an abort after every runner finished', () => {
  it('during Collect: the run reports SUCCEEDED from the exit codes, notes the late abort, notifies once, leaves nothing', async () => {
    const { runId, view } = await runWithLateAbort(k6Spec({ name: 'late-abort-collect', parallelism: 2, notify: { channels: ['webhook'] } }), 'collect');
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.outcomeReason).toBe('both runners exited 0 with every threshold passed; abort requested by alice after the test had ended');
    expect(view.stages[Stage.Cleanup]?.state).toBe(StageState.completed);
    expectOneNotificationAndNothingLeft(runId, Outcome.SUCCEEDED);
  });

  it('before Watch’s last poll: THRESHOLDS_FAILED from the exit codes (k6 99), not ABORTED', async () => {
    const { runId, view } = await runWithLateAbort(
      k6Spec({ name: 'late-abort-watch', parallelism: 2, notify: { channels: ['webhook'] }, annotations: { [SimAnnotations.exitCode]: '99' } }),
      'last-watch',
    );
    expect(view.run.outcome).toBe(Outcome.THRESHOLDS_FAILED);
    expect(view.run.outcomeReason).toMatch(/^threshold .* failed on runners 0-1; abort requested by alice after the test had ended$/);
    expectOneNotificationAndNothingLeft(runId, Outcome.THRESHOLDS_FAILED);
  });

  it('Gatling, before Watch’s last poll: SUCCEEDED, not ABORTED', async () => {
    const { runId, view } = await runWithLateAbort(
      gatlingSpec({ name: 'late-abort-gatling', parallelism: 2, notify: { channels: ['webhook'] } }),
      'last-watch',
    );
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.outcomeReason).toMatch(/abort requested by alice after the test had ended$/);
    expectOneNotificationAndNothingLeft(runId, Outcome.SUCCEEDED);
  });

  it('Gatling, some runners done but one not yet started: the abort wins, ABORTED while the runners were starting', async () => {
    // Runners start 60 s after Launch and run 10 s; runner 1 is scheduled only 90 s after creation.
    const spec = gatlingSpec({
      name: 'abort-mid-ready',
      parallelism: 2,
      notify: { channels: ['webhook'] },
      runner: { metadata: { annotations: { [SimAnnotations.duration]: '10s' } } },
    });
    const { runId, view } = await runWithLateAbort(spec, 'ready-partial', (id) => h.kubeSim.faults.setScheduleDelay(90, { runId: id, runnerIndex: 1 }));
    expect(`${view.run.outcome}: ${view.run.outcomeReason}`).toBe('ABORTED: ready: aborted by alice while the runners were starting');
    expectOneNotificationAndNothingLeft(runId, Outcome.ABORTED);
  });
});
