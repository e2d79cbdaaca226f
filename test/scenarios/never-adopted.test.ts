/**
 * A run that no execution ever adopted must not stay PENDING forever. Admit creates
 * (or finds) the run, then adopts it for its execution; when adopting fails transiently past Admit's
 * retries, the execution fails at AdmitRejected with the run created and unowned. The reaper, which
 * used to ignore such a run ("belongs to another execution"), now adopts it for the execution that
 * ended and finishes it: one outcome, one notification, nothing left.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StoreError, TransientStoreError } from '../../lambdas/core/errors';
import { newRunId } from '../../lambdas/core/run-id';
import { assertValidSpec } from '../../lambdas/core/spec';
import { specHash } from '../../lambdas/core/spec-hash';
import { Outcome, RunStatus, TriggerKind } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import type { StageDeps } from '../../lambdas/stages/deps';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let h: Harness;
let receiver: WebhookReceiver;
/** Executions (by name) whose Admit cannot adopt: the store fails that write every time. */
const failingAdoption = new Set<string>();
/** Executions (by name) whose Admit fails for good at once when adopting (a write the store refuses). */
const refusedAdoption = new Set<string>();

async function invokeStage(deps: StageDeps, payload: unknown): Promise<unknown> {
  const { stage, executionName } = payload as { stage: string; executionName?: string };
  const name = executionName ?? '';
  if (stage !== 'Admit' || !(failingAdoption.has(name) || refusedAdoption.has(name))) return dispatchStage(deps, payload);
  const ledger = Object.create(deps.ledger) as Ledger;
  ledger.adoptRun = async (runId) => {
    if (refusedAdoption.has(name)) throw new StoreError(`ledger adoptRun ${runId} failed (ValidationException)`);
    throw new TransientStoreError(`ledger adoptRun ${runId} failed (ProvisionedThroughputExceededException)`);
  };
  return dispatchStage({ ...deps, ledger }, payload);
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { invokeStage, channels: { webhook: { url: `${receiver.url}/hooks/adopt` } } });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

const spec = () => k6Spec({ name: 'never-adopted', parallelism: 2, notify: { channels: ['webhook'] } });

describe('a run no execution adopted is finished by the reaper, not left PENDING', () => {
  it('a console start whose Admit cannot adopt the run past its retries: FAILED, notified once, nothing left', async () => {
    const runId = newRunId();
    failingAdoption.add(runId);
    const result = await h.runtime.startExecution({ name: runId, input: { spec: spec(), source: 'local' } }).result;
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('TransientStoreError');
    // Admit used its retries before giving up.
    expect(result.history.filter((e) => e.type === 'StateRetried' && e.state?.name === 'Admit').length).toBeGreaterThan(1);
    expect(result.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.FAILED });

    const view = (await h.runtime.ledger.getRun(runId))!;
    expect(view.run.executionArn).toBe(result.executionArn);
    expect(view.run.status).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/TransientStoreError/);
    expect(receiver.requests).toHaveLength(1);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a run the API created (input { runId }) whose execution never adopted it: FAILED and notified, not PENDING', async () => {
    const runId = newRunId();
    const valid = assertValidSpec(spec(), h.runtime.deps.config);
    await h.runtime.ledger.createRun({
      runId,
      spec: valid,
      specHash: specHash(valid),
      trigger: { kind: TriggerKind.api, caller: 'arn:aws:iam::000000000000:user/ci' },
    });
    expect((await h.runtime.ledger.getRun(runId))!.run.status).toBe(RunStatus.PENDING);
    failingAdoption.add(runId);
    const result = await h.runtime.startExecution({ name: runId, input: { runId } }).result;
    expect(result.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.FAILED });
    expect((await h.runtime.ledger.getRun(runId))!.run.status).toBe(Outcome.FAILED);
    expect(receiver.requests).toHaveLength(1);
  });

  it("an execution that failed at once, and the reaper's first adoption after Admit's give-up failing too: the reaper tries again and finishes the run", async () => {
    const runId = newRunId();
    refusedAdoption.add(runId);
    // The reaper's adoptions (through the runtime's own ledger) fail twice, transiently, once they are allowed.
    const ledger = h.runtime.ledger;
    const adopt = ledger.adoptRun.bind(ledger);
    let failures = 0;
    ledger.adoptRun = async (id, arn) => {
      if (id === runId && failures < 2) {
        failures += 1;
        throw new TransientStoreError(`ledger adoptRun ${id} failed (ProvisionedThroughputExceededException)`);
      }
      return adopt(id, arn);
    };
    try {
      const result = await h.runtime.startExecution({ name: runId, input: { spec: spec(), source: 'local' } }).result;
      expect(result.error).toBe('StoreError');
      // Admit did not retry: the reaper began as the run was created, and had to wait out Admit's give-up.
      expect(result.history.filter((e) => e.type === 'StateRetried' && e.state?.name === 'Admit')).toHaveLength(0);
      expect(failures).toBe(2);
      expect(result.reaped).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.FAILED });
      expect((await h.runtime.ledger.getRun(runId))!.run.status).toBe(Outcome.FAILED);
      expect(receiver.requests).toHaveLength(1);
      expect(h.leftovers(runId)).toEqual({});
    } finally {
      ledger.adoptRun = adopt;
    }
  });

  it('an execution that failed while another execution owns the run leaves that run alone', async () => {
    const { runId, view } = await h.run(spec());
    const before = view.run;
    failingAdoption.add('someone-else');
    const reaped = await h.runtime.startExecution({ name: 'someone-else', input: { runId } }).result;
    expect(reaped.reaped).toMatchObject({ kind: 'ignored' });
    const after = (await h.runtime.ledger.getRun(runId))!.run;
    expect(after.executionArn).toBe(before.executionArn);
    expect(after.outcome).toBe(before.outcome);
  });
});
