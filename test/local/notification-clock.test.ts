/**
 * One clock in every message: a local run's webhook payload has startedAt, endedAt and sentAt on the
 * same (simulated) clock, and says which; the signature's timestamp stays on the wall clock, which the
 * receiver checks against its own.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifySignature, type WebhookPayload } from '../../lambdas/notify/webhook';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'whsec_local_clock';
let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // The simulated clock starts in the past, as a run replayed on kube-sim might: no time on it can pass for a wall-clock time.
  h = await startHarness(new VirtualClock(Date.UTC(2030, 0, 1)), { channels: { webhook: { url: `${receiver.url}/hooks/clock`, signingSecret: SECRET } } });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

it('a local run’s webhook payload: sentAt ≥ endedAt ≥ startedAt, all on the simulated clock, and it says so', async () => {
  const wallBefore = Date.now();
  const { runId, view } = await h.run(k6Spec({ name: 'one-clock', parallelism: 2, notify: { channels: ['webhook'] } }));
  expect(view.run.outcome).toBe('SUCCEEDED');
  const request = receiver.requests.find((r) => String(r.headers['idempotency-key']).startsWith(`${runId}:`))!;
  const payload = JSON.parse(request.body.toString()) as WebhookPayload;
  const [startedAt, endedAt, sentAt] = [payload.startedAt, payload.endedAt, payload.sentAt].map(Date.parse) as [number, number, number];
  expect(startedAt).toBeLessThanOrEqual(endedAt);
  expect(endedAt).toBeLessThanOrEqual(sentAt);
  expect(sentAt).toBeLessThanOrEqual(h.clock.now());
  expect(payload).toMatchObject({ clock: 'simulated', timeScale: null });
  // The signature is on the wall clock: the receiver's replay check accepts it.
  const timestamp = String(request.headers['x-loadplane-timestamp']);
  expect(Number(timestamp) * 1000).toBeGreaterThanOrEqual(Math.floor(wallBefore / 1000) * 1000);
  expect(
    verifySignature({ body: request.body, signature: String(request.headers['x-loadplane-signature']), timestamp, secret: SECRET, nowMs: Date.now() }),
  ).toEqual({ ok: true });
});
