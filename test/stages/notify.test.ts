/**
 * Notify's contract (architecture §5): for a run with an outcome, one delivery per configured channel,
 * each claimed in the ledger before it is sent and marked sent after, with the Idempotency-Key
 * `<runId>:<outcome>`. A channel already sent, or claimed by a live sender, is not sent again.
 * A webhook receiver on 127.0.0.1 counts what arrives.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { NotificationState, NotifyPolicy, Outcome, Stage, StageState } from '../../lambdas/core/status';
import { stageLeaseMs } from '../../lambdas/core/stage-timing';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import { notify, type NotifyRecord } from '../../lambdas/stages/notify';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { driveTo, endRun, markRequests, viewOf } from './stage-fixture';

/** Real ms a send waits for an answer: only the hanging receiver waits it out. */
const SEND_TIMEOUT_MS = 1000;

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/main` }, 'webhook-ops': { url: `${receiver.url}/hooks/ops` } },
    notifyTimeoutMs: SEND_TIMEOUT_MS,
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const spec = (name: string, channels: string[] = ['webhook']) => k6Spec({ name, parallelism: 2, notify: { channels, policy: NotifyPolicy.atMostOnce } });
const deliveriesTo = (path: string) => receiver.requests.filter((r) => r.path === path);

/** A run admitted and decided (FAILED), as the fail path leaves it for Notify. */
async function decided(name: string, channels?: string[]): Promise<string> {
  const { runId } = await driveTo(h, spec(name, channels), Stage.Admit);
  await endRun(h, runId, Outcome.FAILED, 'prepare: the k6 initializer exited 107 (script exception)');
  return runId;
}

describe('Notify', () => {
  it('delivers once per configured channel with the recorded outcome, marks each sent, and skips channels with no webhook', async () => {
    const { runId } = await driveTo(h, spec('notify', ['webhook', 'webhook-ops', 'slack']), Stage.Decide);
    const requests = markRequests(h);

    const record = await notify(h.runtime.deps, runId);

    expect(record).toEqual({
      outcome: Outcome.SUCCEEDED,
      channels: { webhook: 'sent', 'webhook-ops': 'sent', slack: 'not-configured' },
    } satisfies NotifyRecord);
    expect(deliveriesTo('/hooks/main')).toHaveLength(1);
    expect(deliveriesTo('/hooks/ops')).toHaveLength(1);
    expect(receiver.deliveries).toBe(2);
    for (const request of receiver.requests) {
      expect(request.headers['idempotency-key']).toBe(`${runId}:${Outcome.SUCCEEDED}`);
      expect(JSON.parse(request.body.toString())).toMatchObject({ runId, outcome: Outcome.SUCCEEDED });
    }
    const view = await viewOf(h, runId);
    for (const channel of ['webhook', 'webhook-ops']) {
      expect(view.notifications[channel]).toMatchObject({
        state: NotificationState.sent,
        claims: 1,
        dedupeKey: `${runId}:${Outcome.SUCCEEDED}`,
        response: { status: 200 },
      });
    }
    expect(view.notifications.slack).toBeUndefined(); // nothing to claim where nothing can be sent
    expect(view.stages.Notify).toMatchObject({ state: StageState.completed, attempts: 1, output: record });
    expect(requests.since()).toEqual([]); // no Kubernetes request
  });

  it('invoked again after it completed: the recorded answer, and nothing is sent again', async () => {
    const runId = await decided('notify-again', ['webhook', 'webhook-ops']);
    const first = await notify(h.runtime.deps, runId);
    expect(receiver.deliveries).toBe(2);
    expect(await notify(h.runtime.deps, runId)).toEqual(first);
    expect(receiver.deliveries).toBe(2);
    expect((await viewOf(h, runId)).stages.Notify?.attempts).toBe(1);
  });

  it('claims before it sends: while the request is in flight the ledger already holds the claim', async () => {
    const runId = await decided('notify-claim');
    receiver.acceptThenHang(1); // the request arrives; no answer comes back
    const sending = notify(h.runtime.deps, runId);
    let settled = false;
    sending.finally(() => (settled = true)).catch(() => undefined);
    while (receiver.deliveries === 0 && !settled) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(receiver.deliveries).toBe(1);

    expect((await viewOf(h, runId)).notifications.webhook).toMatchObject({ state: NotificationState.claimed, claims: 1 });

    // No answer: ambiguous, so the claim stays (a retry within its lease must not send again).
    await expect(sending).rejects.toMatchObject({ name: 'NotificationNotDelivered', retryable: true });
    expect((await viewOf(h, runId)).notifications.webhook?.state).toBe(NotificationState.claimed);
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationInProgress', retryable: true });
    expect(receiver.deliveries).toBe(1);
  });

  it('a channel claimed by another live sender is not sent (NotificationInProgress); once that one marks it sent, the retry sends nothing', async () => {
    const runId = await decided('notify-busy', ['webhook', 'webhook-ops']);
    const other = await h.runtime.ledger.claimNotification(runId, 'webhook', { leaseMs: 30_000, policy: NotifyPolicy.atMostOnce, outcome: Outcome.FAILED });
    if (other.kind !== 'claimed') throw new Error(`expected a fresh claim, got ${other.kind}`);

    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationInProgress', channel: 'webhook' });
    expect(deliveriesTo('/hooks/main')).toEqual([]);
    expect(deliveriesTo('/hooks/ops')).toHaveLength(1); // the other channel was not held back

    await h.runtime.ledger.markNotificationSent(runId, 'webhook', other.token, { status: 200 });
    expect(await notify(h.runtime.deps, runId)).toEqual({ outcome: Outcome.FAILED, channels: { webhook: 'already-sent', 'webhook-ops': 'already-sent' } });
    expect(receiver.deliveries).toBe(1);
  });

  it('a definite non-delivery (HTTP 500) releases the claim and fails retryably; the retry delivers once', async () => {
    const runId = await decided('notify-500');
    receiver.respondWith(500, { times: 1 });

    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationNotDelivered', retryable: true });
    expect((await viewOf(h, runId)).notifications.webhook?.state).toBe(NotificationState.released);

    expect(await notify(h.runtime.deps, runId)).toMatchObject({ channels: { webhook: 'sent' } });
    expect(receiver.requests.map((r) => r.headers['idempotency-key'])).toEqual([`${runId}:${Outcome.FAILED}`, `${runId}:${Outcome.FAILED}`]);
    expect((await viewOf(h, runId)).notifications.webhook).toMatchObject({ state: NotificationState.sent, claims: 2, response: { status: 200 } });
  });

  it('a dropped connection: the retries say the delivery is unknown and the claim must expire, never "another caller"; another execution is told it is another caller', async () => {
    const runId = await decided('notify-dropped');
    const execution = `arn:aws:states:local:000000000000:execution:loadplane-run:${runId}`;
    const invoke = () => dispatchStage(h.runtime.deps, { stage: Stage.Notify, runId, execution });
    receiver.acceptThenReset(1);

    const first = await invoke().catch((e: Error) => e);
    expect(first).toMatchObject({ name: 'NotificationNotDelivered', retryable: true });
    expect((first as Error).message).toMatch(
      /webhook: delivery unknown \(connection dropped\); the claim expires in 30 s, then the atMostOnce policy decides whether to send again$/,
    );
    expect((await viewOf(h, runId)).stages[Stage.Notify]?.error).toEqual({
      name: 'NotificationNotDelivered',
      message: (first as Error).message,
      deliveryUnknown: { webhook: 'connection dropped' },
    });

    await h.clock.sleep(2_000);
    for (const left of [28, 23]) {
      const retry = await invoke().catch((e: Error) => e);
      expect(retry).toMatchObject({ name: 'NotificationInProgress', retryable: true, detail: { holder: 'own', deliveryUnknown: 'connection dropped' } });
      expect((retry as Error).message).toBe(
        `webhook: delivery unknown (connection dropped); waiting ${left} s for the claim to expire before deciding whether to send again`,
      );
      await h.clock.sleep(5_000);
    }
    const fromAnother = await dispatchStage(h.runtime.deps, { stage: Stage.Notify, runId, execution: `${execution}-other` }).catch((e: Error) => e);
    expect((fromAnother as Error).message).toMatch(/^notification webhook of run \w+ is being sent by another caller; its claim expires in \d+ s$/);

    await h.clock.sleep(30_000); // the claim expires: atMostOnce records unknown, sends nothing more
    expect(await invoke()).toMatchObject({ channels: { webhook: 'unknown' } });
    expect(receiver.deliveries).toBe(1);
  });

  it("the retry reads the unknown delivery's cause from the recorded failure's field, not from its message's words", async () => {
    const runId = await decided('notify-dropped-reworded');
    const execution = `arn:aws:states:local:000000000000:execution:loadplane-run:${runId}`;
    const invoke = () => dispatchStage(h.runtime.deps, { stage: Stage.Notify, runId, execution });
    receiver.acceptThenReset(1);
    await invoke().catch(() => undefined);
    // An attempt whose error says it in other words (as a later wording would), with the same field.
    const owner = `${execution} | reworded`;
    await h.runtime.ledger.beginStage(runId, Stage.Notify, owner, stageLeaseMs(Stage.Notify));
    await h.runtime.ledger.failStage(runId, Stage.Notify, owner, {
      name: 'NotificationNotDelivered',
      message: 'the webhook send may or may not have arrived',
      deliveryUnknown: { webhook: 'connection dropped' },
    });

    const retry = await invoke().catch((e: Error) => e);
    expect(retry).toMatchObject({ name: 'NotificationInProgress', detail: { holder: 'own', deliveryUnknown: 'connection dropped' } });
    expect((retry as Error).message).toMatch(/^webhook: delivery unknown \(connection dropped\); waiting \d+ s for the claim to expire/);
  });

  it('before Decide recorded an outcome: InvalidTransition, nothing claimed, nothing sent', async () => {
    const { runId } = await driveTo(h, spec('notify-early'), Stage.Admit);
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'InvalidTransition', retryable: false });
    expect(receiver.deliveries).toBe(0);
    expect((await viewOf(h, runId)).notifications).toEqual({});
  });

  it('for a run that does not exist: RunNotFound, nothing sent', async () => {
    await expect(notify(h.runtime.deps, newRunId())).rejects.toMatchObject({ name: 'RunNotFound' });
    expect(receiver.deliveries).toBe(0);
  });
});
