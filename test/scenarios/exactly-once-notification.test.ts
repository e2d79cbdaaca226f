/**
 * architecture §5: exactly one completion message per run, whichever way the run ends and however often
 * Notify runs. gatling-operator #9 (the duplicate Slack message that started this project) first.
 * A webhook receiver on 127.0.0.1 counts what arrives; everything else is real (ASL, stages,
 * dynalite, kube-sim, the HTTP sender).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { SimAnnotations } from '../../lambdas/core/runner-contract';
import { NotifyPolicy, Outcome, type NotifyPolicy as Policy } from '../../lambdas/core/status';
import { ChannelSecretInvalid } from '../../lambdas/core/errors';
import { notify } from '../../lambdas/stages/notify';
import { reap } from '../../lambdas/stages/reap';
import { NOTIFY_LEASE_MS } from '../../lambdas/stages/deps';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * A send with no answer gives up after SEND_TIMEOUT_MS of real time (a socket timeout; only the
 * receiver that hangs waits it out). The claim's lease is the default, on the harness's virtual clock.
 */
const SEND_TIMEOUT_MS = 1000;

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, {
    channels: { webhook: { url: `${receiver.url}/hooks/s3cr3t-path` } },
    notifyTimeoutMs: SEND_TIMEOUT_MS,
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => {
  receiver.reset();
  h.kubeSim.faults.clear();
});

const spec = (name: string, policy: Policy = NotifyPolicy.atMostOnce, extra = {}) =>
  k6Spec({ name, parallelism: 2, notify: { channels: ['webhook'], policy }, ...extra });

/**
 * Every request that reached the receiver since the last reset, whatever its headers: a send without
 * the Idempotency-Key (or with another run's) still counts, and fails here.
 */
const received = (runId: string) => {
  for (const r of receiver.requests) expect(String(r.headers['idempotency-key'])).toMatch(new RegExp(`^${runId}:`));
  return receiver.requests;
};
const payloads = (runId: string) => received(runId).map((r) => JSON.parse(r.body.toString()) as { outcome: string; runId: string });

/**
 * A run that reached Notify while the receiver answered 500 to everything: Notify used up its retries,
 * the state machine went on to Cleanup, the outcome is recorded and nothing was delivered.
 */
async function decidedButNotNotified(name: string, policy: Policy = NotifyPolicy.atMostOnce): Promise<string> {
  receiver.respondWith(500, { times: 1000 });
  const { runId, view } = await h.run(spec(name, policy));
  expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
  expect(view.notifications.webhook?.state).toBe('released');
  receiver.reset(); // from here on the receiver answers 200
  return runId;
}

describe('gatling-operator #9: the completion message is sent once', () => {
  it('Notify twice at once, again after it succeeded (a retry), and once more from the reaper → 1 delivery', async () => {
    const runId = await decidedButNotNotified('gatling-9');
    const results = await Promise.allSettled([notify(h.runtime.deps, runId), notify(h.runtime.deps, runId)]);
    // One sends; the other is told the stage is busy (retryable) — or, had it come a moment later, gets the recorded result.
    expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ name: 'StageBusy', retryable: true });
    await notify(h.runtime.deps, runId); // the retry after success
    const view = (await h.runtime.ledger.getRun(runId))!;
    await reap(h.runtime.deps, {
      executionArn: view.run.executionArn!,
      name: runId,
      status: 'FAILED',
      input: JSON.stringify({ spec: spec('gatling-9'), source: 'local' }),
      error: 'States.TaskFailed',
    });
    expect(received(runId)).toHaveLength(1);
    expect(payloads(runId)[0]).toMatchObject({ runId, outcome: Outcome.SUCCEEDED });
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook).toMatchObject({ state: 'sent', response: { status: 200 } });
  });

  it('50 concurrent Notify invocations for one run → exactly 1 delivery', async () => {
    const runId = await decidedButNotNotified('fifty');
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => notify(h.runtime.deps, runId)));
    for (const r of results) if (r.status === 'rejected') expect((r.reason as Error).name).toMatch(/^(StageBusy|NotificationInProgress)$/);
    // Those told to retry do, as Step Functions would: the stage is done, nothing more is sent.
    await notify(h.runtime.deps, runId);
    expect(received(runId)).toHaveLength(1);
  });
});

describe('the sender dies after writing the request, before marking it sent', () => {
  async function senderDies(policy: Policy): Promise<string> {
    const runId = await decidedButNotNotified(`dies-${policy.toLowerCase()}`, policy);
    receiver.acceptThenHang(1); // the request arrives; its answer never comes back
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationNotDelivered' });
    expect(received(runId)).toHaveLength(1);
    // Within the claim's lease a retry must wait: the send may still be in flight.
    await expect(notify(h.runtime.deps, runId)).rejects.toMatchObject({ name: 'NotificationInProgress' });
    await h.clock.sleep(NOTIFY_LEASE_MS + 1); // simulated time: the lease expires
    await notify(h.runtime.deps, runId);
    return runId;
  }

  it('atMostOnce (default): 1 delivery; the claim ends `unknown` and is never re-sent', async () => {
    const runId = await senderDies(NotifyPolicy.atMostOnce);
    await notify(h.runtime.deps, runId);
    expect(received(runId)).toHaveLength(1);
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook?.state).toBe('unknown');
  });

  it('atLeastOnce: at most 2 deliveries, both with the same Idempotency-Key', async () => {
    const runId = await senderDies(NotifyPolicy.atLeastOnce);
    const keys = received(runId).map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(`${runId}:${Outcome.SUCCEEDED}`);
    expect(keys[1]).toBe(keys[0]);
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook?.state).toBe('sent');
  });
});

describe('definite non-delivery releases the claim, and the retry delivers once', () => {
  it.each([500, 429])('the receiver answers %i, then 200: delivered once, after the retry', async (status) => {
    receiver.respondWith(status, { times: 1, headers: status === 429 ? { 'Retry-After': '1' } : {} });
    const { runId, view } = await h.run(spec(`answers-${status}`));
    const statuses = received(runId).length;
    expect(statuses).toBe(2); // the refused attempt and the delivery
    expect(view.notifications.webhook).toMatchObject({ state: 'sent', response: { status: 200 } });
    expect(view.stages.Notify).toMatchObject({ state: 'completed', attempts: 2 });
  });

  it('connection refused: released, and delivered once when the receiver comes up', async () => {
    await receiver.close();
    let revived: Promise<void> | undefined;
    const { runId, view } = await h.run(spec('refused'), {
      onEvent: (e) => {
        if (e.type === 'StateRetried' && e.state?.name === 'Notify') revived ??= receiver.listen();
      },
    });
    await revived;
    expect(received(runId)).toHaveLength(1);
    expect(view.notifications.webhook).toMatchObject({ state: 'sent', claims: 2 });
  });
});

describe('every way a run ends gets exactly one notification, with its outcome, and leaves nothing behind', () => {
  it("fails at the cluster (the API server refuses every patch of the run's anchor, which gains each Job as an owner): FAILED", async () => {
    h.kubeSim.faults.failNextRequests(1000, 500, { method: 'PATCH', pathIncludes: '/configmaps/' });
    const { runId, view } = await h.run(spec('anchor-patch-refused'));
    h.kubeSim.faults.clear();
    expect(view.run.outcome).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(/^ClusterUnavailable: add owners to ConfigMap \S+-anchor: HTTP 500/);
    expect(payloads(runId).map((p) => p.outcome)).toEqual([Outcome.FAILED]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('times out (runners never scheduled): TIMED_OUT', async () => {
    const { runId, view } = await h.run(
      spec('times-out', NotifyPolicy.atMostOnce, { runner: { metadata: { annotations: { [SimAnnotations.scheduleDelay]: 'never' } } } }),
    );
    expect(view.run.outcome).toBe(Outcome.TIMED_OUT);
    expect(payloads(runId).map((p) => p.outcome)).toEqual([Outcome.TIMED_OUT]);
    expect(h.leftovers(runId)).toEqual({});
  });

  const TEN_MINUTES = `export const options = { vus: 4, duration: '10m' };\nexport default function () {}\n`;
  const long = (name: string) =>
    spec(name, NotifyPolicy.atMostOnce, { script: { inline: TEN_MINUTES }, timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' } });

  it('aborted mid-run: ABORTED', async () => {
    const runId = newRunId();
    const { view } = await h.run(long('aborted'), {
      name: runId,
      onEvent: (e) => {
        if (e.type === 'StateExited' && e.state?.name === 'Start') void h.runtime.abort(runId, 'carol');
      },
    });
    expect(view.run.outcome).toBe(Outcome.ABORTED);
    expect(payloads(runId).map((p) => p.outcome)).toEqual([Outcome.ABORTED]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('execution stopped hard (the reaper finishes it): ABORTED', async () => {
    const runId = newRunId();
    const execution = h.runtime.startExecution({
      name: runId,
      input: { spec: long('stopped'), source: 'local' },
      onEvent: (e) => {
        if (e.type === 'StateEntered' && e.state?.name === 'Watch') execution.stop();
      },
    });
    const result = await execution.result;
    expect(result.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.ABORTED });
    expect(payloads(runId).map((p) => p.outcome)).toEqual([Outcome.ABORTED]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it('execution stopped hard while the webhook is down: the reaper still cleans up, and delivers once the receiver answers', async () => {
    const runId = newRunId();
    receiver.respondWith(503, { times: 3 });
    const execution = h.runtime.startExecution({
      name: runId,
      input: { spec: long('stopped-webhook-down'), source: 'local' },
      onEvent: (e) => {
        if (e.type === 'StateEntered' && e.state?.name === 'Watch') execution.stop();
      },
    });
    const result = await execution.result;
    expect(result.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.ABORTED });
    expect(h.leftovers(runId)).toEqual({});
    expect(received(runId).length).toBe(4); // three 503s, then the delivery
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook).toMatchObject({ state: 'sent', response: { status: 200 } });
  });
});

describe('no notification is lost', () => {
  it('a run that succeeded but whose Notify gave up fails its execution, and the reaper delivers the message', async () => {
    receiver.respondWith(500, { times: 7 }); // the first attempt and the Task's 6 retries
    const { runId, view, execution } = await h.run(spec('late-notice'));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(execution.status).toBe('FAILED');
    expect(execution.error).toBe('NotificationFailed');
    expect(execution.reaped).toMatchObject({ kind: 'reaped', outcome: Outcome.SUCCEEDED });
    expect(received(runId)).toHaveLength(8);
    expect(payloads(runId).map((p) => p.outcome)).toEqual(Array(8).fill(Outcome.SUCCEEDED));
    expect((await h.runtime.ledger.getRun(runId))!.notifications.webhook?.state).toBe('sent');
  });

  it('a misconfigured channel does not keep the others from sending', async () => {
    const runId = await decidedButNotNotified('two-channels');
    const deps = h.runtime.deps;
    // Secrets Manager has no local implementation: its boundary is stubbed to hand out a broken Slack secret.
    const secrets = {
      get: async (channel: string) => {
        if (channel === 'slack') throw new ChannelSecretInvalid('slack', 'url: must be an http(s) URL');
        return deps.notify.secrets.get(channel);
      },
    };
    // The run's spec names `webhook`; the deployment adds `slack` for every run.
    const record = await notify(
      { ...deps, notify: { ...deps.notify, secrets }, config: { ...deps.config, notify: { ...deps.config.notify, defaultChannels: ['slack'] } } },
      runId,
    );
    expect(record.channels).toEqual({ slack: 'misconfigured', webhook: 'sent' });
    expect(received(runId)).toHaveLength(1);
  });
});
