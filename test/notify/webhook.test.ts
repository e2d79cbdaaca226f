import { RUNNER_PRICES } from '../../lambdas/core/runner-cost';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { Outcome } from '../../lambdas/core/status';
import { staticChannelSecrets } from '../../lambdas/notify/channel-secrets';
import { sendNotification } from '../../lambdas/notify/channels';
import type { NotificationMessage } from '../../lambdas/notify/message';
import { verifySignature, webhookPayload, type WebhookPayload } from '../../lambdas/notify/webhook';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver';
import { COST, SECRET_PATH, message, poorFidelity, runner } from './fixtures';

const SIGNING_SECRET = 'whsec_test_3f1c9a';
/** 2026-11-30T12:00:00.500Z */
const NOW_MS = Date.UTC(2026, 10, 30, 12, 0, 0, 500);
const NOW_SECONDS = String(Math.floor(NOW_MS / 1000));

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());
beforeEach(() => receiver.reset());

async function sentAsWebhook(m: NotificationMessage, { signed = true } = {}): Promise<ReceivedRequest> {
  const result = await sendNotification({
    channel: 'webhook-ci',
    secrets: staticChannelSecrets({ 'webhook-ci': { url: receiver.url + SECRET_PATH, ...(signed ? { signingSecret: SIGNING_SECRET } : {}) } }),
    message: m,
    idempotencyKey: `${m.runId}:${m.outcome}`,
    now: () => NOW_MS,
    wallNow: () => NOW_MS,
  });
  expect(result).toEqual({ kind: 'delivered', status: 200 });
  return receiver.requests.at(-1)!;
}

const payloadOf = (r: ReceivedRequest) => JSON.parse(r.body.toString('utf8')) as WebhookPayload;
/** The receiver's check, on what it received. */
const verify = (r: ReceivedRequest, overrides: Partial<Parameters<typeof verifySignature>[0]> = {}) =>
  verifySignature({
    body: r.body,
    signature: r.headers['x-loadplane-signature'] as string | undefined,
    timestamp: r.headers['x-loadplane-timestamp'] as string | undefined,
    secret: SIGNING_SECRET,
    nowMs: NOW_MS + 2_000,
    ...overrides,
  });

describe('the JSON webhook', () => {
  it('sends the documented version 1 payload', async () => {
    const t = { metric: 'http_req_failed', expression: 'rate<0.01', ok: false };
    const result = aggregateResults(2, [runner(0, { thresholds: [t] }), runner(1, { thresholds: [{ ...t, ok: true }] })]);
    const m = message({
      outcome: Outcome.THRESHOLDS_FAILED,
      reason: 'runner 0 exited 99 (thresholds failed)',
      expectedRunners: 2,
      result,
      links: { console: 'https://console.aws.amazon.com/states/exec' },
      startSkew: { source: 'k6-status', runners: { 0: 1_000, 1: 1_012 }, skewMs: 12, resolutionMs: 4, unseen: [] },
    });
    // Two runners with p95 = 200 ms each: the run's p95 lies in [190, 210] ms, bounded by their grids.
    expect(result.latency.p95.lo).toBeCloseTo(190, 9);
    expect(result.latency.p95.hi).toBeCloseTo(210, 9);
    expect(payloadOf(await sentAsWebhook(m))).toEqual({
      type: 'loadplane.run.finished',
      version: 2,
      runId: '01jdm5x3k7q8r9s0t1v2w3x4y5',
      name: 'checkout-peak',
      engine: 'k6',
      outcome: 'THRESHOLDS_FAILED',
      reason: 'runner 0 exited 99 (thresholds failed)',
      startedAt: '2026-11-30T10:00:00.000Z',
      endedAt: '2026-11-30T10:12:05.000Z',
      durationSeconds: 725,
      runners: { expected: 2, reported: 2 },
      metrics: { requests: 2000, failedRequests: 20, errorRate: 0.01, p95Ms: { ...result.latency.p95 } },
      thresholds: { total: 1, failed: [{ metric: 'http_req_failed', expression: 'rate<0.01', runners: [0] }] },
      simulated: false,
      startSkew: { skewMs: 12, resolutionMs: 4, source: 'k6-status', runnersSeen: 2 },
      baseline: null,
      fidelity: null,
      cost: null,
      links: { console: 'https://console.aws.amazon.com/states/exec', report: null },
      sentAt: '2026-11-30T12:00:00.500Z',
      clock: 'real',
      timeScale: null,
    });
  });

  it('a run compared with its baseline: the baseline run, and each limited figure with both values, the limit and the verdict', async () => {
    const m = message({
      outcome: Outcome.REGRESSED,
      reason: 'p95 regressed: [231, 240] ms against [200, 209] ms in baseline 01jdm5x3k7q8r9s0t1v2w3x4y4 (limit +10 %)',
      baseline: {
        baseline: '01jdm5x3k7q8r9s0t1v2w3x4y4',
        figures: [
          { figure: 'p95', verdict: 'certain', run: { lo: 231, hi: 240 }, baseline: { lo: 200, hi: 209 }, limit: 0.1 },
          { figure: 'errorRate', verdict: 'none', run: 0.01, baseline: 0.012, limit: 0.5 },
        ],
      },
    });
    expect(payloadOf(await sentAsWebhook(m)).baseline).toEqual({
      runId: '01jdm5x3k7q8r9s0t1v2w3x4y4',
      none: null,
      figures: [
        // The change in the limit's terms: 231/209 − 1 = 0.10526 … 240/200 − 1 = 0.2; 1 % against 1.2 %: −0.2 points.
        {
          figure: 'p95',
          verdict: 'certain',
          run: { lo: 231, hi: 240 },
          baseline: { lo: 200, hi: 209 },
          change: { lo: expect.closeTo(0.10526, 5), hi: expect.closeTo(0.2, 12) },
          limit: 0.1,
        },
        {
          figure: 'errorRate',
          verdict: 'none',
          run: 0.01,
          baseline: 0.012,
          change: { lo: expect.closeTo(-0.2, 12), hi: expect.closeTo(-0.2, 12) },
          limit: 0.5,
        },
      ],
    });
    const none = message({ baseline: { figures: [], none: 'no earlier SUCCEEDED run named checkout-peak' } });
    expect(payloadOf(await sentAsWebhook(none)).baseline).toEqual({ runId: null, none: 'no earlier SUCCEEDED run named checkout-peak', figures: [] });
  });

  it('a run whose load was not delivered: the figures, only the runners that dropped or starved, the failures and the lines', async () => {
    const m = message({ outcome: Outcome.LOAD_NOT_DELIVERED, fidelity: poorFidelity() });
    expect(payloadOf(await sentAsWebhook(m)).fidelity).toEqual({
      iterations: 1400,
      droppedIterations: 100,
      droppedShare: 100 / 1500,
      plannedVUs: 6,
      vusMax: 6,
      runners: [
        { runner: 1, droppedIterations: 100, droppedShare: 0.2, cpuThrottledShare: 0, starved: false, replaced: 0, lost: false },
        { runner: 2, droppedIterations: 0, droppedShare: 0, cpuThrottledShare: 0.2, starved: true, replaced: 0, lost: false },
      ],
      starved: [2],
      lost: [],
      replaced: [],
      failures: [
        "runner 1 dropped 100 of 500 planned iterations (20.0 %, more than the spec's 5.0 %)",
        'runner 2 was CPU-starved: throttled in 120 of 600 CPU periods (20.0 %; starved from 5.0 %), its latencies are inflated',
      ],
      warnings: [],
      summary: [
        'load: 1,400 of 1,500 planned iterations delivered (100 dropped: 6.7 %; runner 1 dropped 100); VUs 6 of at most 6 planned',
        'CPU: runner 2 starved (throttled in 20.0 % of its periods); the others: throttled in at most 0.0 % of their periods (starved from 5.0 %)',
      ],
    });
  });

  it("a run's cost when Notify read it: the sum, the control plane's, the runners' estimate and their prices' source", async () => {
    const m = message({ cost: COST });
    expect(payloadOf(await sentAsWebhook(m)).cost).toEqual({
      usd: expect.closeTo(0.2032549126, 10),
      controlPlaneUsd: expect.closeTo(0.0057749126, 10),
      runnersUsd: expect.closeTo(0.19748, 10),
      runnerPrices: { source: RUNNER_PRICES.fargate.source, read: '2026-12-03' },
    });
  });

  it('a simulated run: sentAt is on the run’s (simulated) clock and the payload says so; the signed timestamp stays on the wall clock', async () => {
    const simulatedNow = NOW_MS + 3 * 3600_000; // a simulated clock runs ahead of the wall clock
    const m = message({ clock: { kind: 'simulated', timeScale: 10 } });
    await sendNotification({
      channel: 'webhook-ci',
      secrets: staticChannelSecrets({ 'webhook-ci': { url: receiver.url + SECRET_PATH, signingSecret: SIGNING_SECRET } }),
      message: m,
      idempotencyKey: `${m.runId}:${m.outcome}`,
      now: () => simulatedNow,
      wallNow: () => NOW_MS,
    });
    const r = receiver.requests.at(-1)!;
    expect(payloadOf(r)).toMatchObject({ sentAt: new Date(simulatedNow).toISOString(), clock: 'simulated', timeScale: 10 });
    expect(r.headers['x-loadplane-timestamp']).toBe(NOW_SECONDS);
    expect(verify(r)).toEqual({ ok: true }); // the receiver's wall clock accepts it
  });

  it('writes null, never leaves a field out, when no result was collected', () => {
    const payload = webhookPayload(message({ outcome: Outcome.FAILED, result: undefined }), '2026-11-30T12:00:00.000Z');
    expect(payload).toMatchObject({ runners: { expected: 3, reported: null }, metrics: null, thresholds: null, simulated: false });
    expect(payload.links).toEqual({ console: null, report: null });
  });

  it('sends Content-Type, the caller’s Idempotency-Key, and the timestamp it signed', async () => {
    const r = await sentAsWebhook(message({ outcome: Outcome.ABORTED }));
    expect(r.method).toBe('POST');
    expect(r.path).toBe(SECRET_PATH);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['idempotency-key']).toBe('01jdm5x3k7q8r9s0t1v2w3x4y5:ABORTED');
    expect(r.headers['x-loadplane-timestamp']).toBe(NOW_SECONDS);
    expect(r.headers['x-loadplane-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('signs the exact body bytes: the receiver verifies them, non-ASCII text included', async () => {
    const r = await sentAsWebhook(message({ reason: 'Zeitüberschreitung 🙂 < 5 s & "quoted"' }));
    expect(verify(r)).toEqual({ ok: true });
    expect(verify(r, { body: r.body.toString('utf8') })).toEqual({ ok: true });
  });

  it.each([
    { case: 'a wrong secret', change: { secret: 'whsec_other' }, reason: 'mismatch' },
    { case: 'an altered body', change: { alterBody: true }, reason: 'mismatch' },
    { case: 'a timestamp changed after signing', change: { timestamp: String(Number(NOW_SECONDS) + 1) }, reason: 'mismatch' },
    { case: 'an old timestamp (replay)', change: { nowMs: NOW_MS + 301_000 }, reason: 'stale' },
    { case: 'a timestamp from the future', change: { nowMs: NOW_MS - 301_000 }, reason: 'stale' },
    { case: 'no signature header', change: { signature: undefined }, reason: 'missing' },
    { case: 'no timestamp header', change: { timestamp: undefined }, reason: 'missing' },
    { case: 'another scheme', change: { signature: 'sha1=abc' }, reason: 'malformed' },
    { case: 'a short digest', change: { signature: 'sha256=abc' }, reason: 'malformed' },
    { case: 'a non-numeric timestamp', change: { timestamp: '2026-11-30T12:00:00Z' }, reason: 'malformed' },
  ])('verification fails with $case ($reason)', async ({ change, reason }) => {
    const r = await sentAsWebhook(message());
    const { alterBody, ...overrides } = change as { alterBody?: boolean } & Partial<Parameters<typeof verifySignature>[0]>;
    const body = alterBody ? Buffer.from(r.body.toString('utf8').replace('"SUCCEEDED"', '"FAILED"')) : r.body;
    expect(verify(r, { body, ...overrides })).toEqual({ ok: false, reason });
  });

  it('accepts a timestamp within the tolerance either way', async () => {
    const r = await sentAsWebhook(message());
    expect(verify(r, { nowMs: NOW_MS + 299_000 })).toEqual({ ok: true });
    expect(verify(r, { nowMs: NOW_MS - 299_000 })).toEqual({ ok: true });
  });

  it('sends no signature headers for a channel without a signing secret', async () => {
    const r = await sentAsWebhook(message(), { signed: false });
    expect(r.headers).not.toHaveProperty('x-loadplane-signature');
    expect(r.headers).not.toHaveProperty('x-loadplane-timestamp');
    expect(r.headers['idempotency-key']).toBe('01jdm5x3k7q8r9s0t1v2w3x4y5:SUCCEEDED');
    expect(verify(r)).toEqual({ ok: false, reason: 'missing' });
  });
});
