/**
 * The generic JSON webhook: one POST per run, with a documented, versioned payload.
 *
 * Request:
 *   POST <url>
 *   Content-Type: application/json
 *   Idempotency-Key: <runId>:<outcome>     same on every attempt for the run: dedupe on it
 *   X-Loadplane-Timestamp: <unix seconds>  when the request was signed: always the wall clock (replay protection)
 *   X-Loadplane-Signature: sha256=<hex>    HMAC-SHA256 of `<timestamp>.<raw body>` with the channel's signingSecret
 *
 * The two X-Loadplane-* headers are sent when the channel has a signingSecret. A receiver verifies
 * (as with Stripe's and Slack's signatures; `verifySignature` does exactly this):
 *   1. Take the raw body bytes as received, before any JSON parsing (re-serializing changes them).
 *   2. Reject a timestamp more than 5 minutes from its own clock: a captured request cannot be replayed later.
 *   3. Compute HMAC-SHA256(secret, `<timestamp>.` + raw body) as lowercase hex and compare it with the
 *      header's value after `sha256=` in constant time.
 *   4. Answer 2xx once the event is stored; dedupe on Idempotency-Key (a retry after an unanswered
 *      attempt carries the same key). 429/5xx/408 answers mean "not taken, send again"; other 4xx
 *      mean "refused, do not send again". Redirects are not followed.
 *
 * Two clocks, named apart: the payload's times (startedAt, endedAt, sentAt) are on the run's clock,
 * which the payload names — `clock: "real"`, or `"simulated"` for a local run on kube-sim, with its
 * `timeScale` (simulated seconds per real second). X-Loadplane-Timestamp is always the wall clock,
 * since the receiver checks it against its own: a simulated time would look stale (or from the future).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Engine, Outcome } from '../core/status';
import type { BaselineComparison } from '../core/regression';
import type { MessageFidelity } from './message-fidelity';
import type { NotificationMessage, ThresholdsSummary } from './message';
import type { MessageCost } from './message-cost';

export const WEBHOOK_EVENT_TYPE = 'loadplane.run.finished';
/** 2: `metrics.p95Ms` ({ lo, hi }, where the run's p95 lies) replaced version 1's `metrics.p95UpperBoundMs`. */
export const WEBHOOK_PAYLOAD_VERSION = 2;
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const SIGNATURE_HEADER = 'X-Loadplane-Signature';
export const TIMESTAMP_HEADER = 'X-Loadplane-Timestamp';
const SIGNATURE_SCHEME = 'sha256=';
/** How far a signed timestamp may be from the receiver's clock, either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Version 1 of the payload. Fields without a value are `null`, never left out. */
export interface WebhookPayload {
  type: typeof WEBHOOK_EVENT_TYPE;
  version: typeof WEBHOOK_PAYLOAD_VERSION;
  runId: string;
  name: string;
  engine: Engine;
  outcome: Outcome;
  reason: string;
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  /** `reported` is null when no result was collected. */
  runners: { expected: number; reported: number | null };
  /**
   * null when the run ended before its result was collected. `p95Ms` is where the run's exact p95
   * lies, [lo, hi], bounded from every runner's percentiles (never an average of them).
   */
  metrics: { requests: number; failedRequests: number; errorRate: number; p95Ms: { lo: number; hi: number } } | null;
  /** null when unknown. `failed` names each failed threshold once, with the runners that failed it. */
  thresholds: ThresholdsSummary | null;
  /** True when the numbers are synthetic (kube-sim), not measured. */
  simulated: boolean;
  /** The runners' measured start skew (ms, with its resolution); null when not measured. */
  startSkew: { skewMs: number; resolutionMs: number | null; source: string; runnersSeen: number } | null;
  /**
   * The run against its spec's baseline; null when the spec has none or the run was not compared.
   * `runId` is null when no baseline was usable (`none` says why); each figure: the run's value and
   * the baseline's (a bracket [lo, hi] for a percentile), the limit, and `certain`, `possible`, `none`
   * or `unknown`.
   */
  baseline: BaselineComparison | null;
  /**
   * The load as delivered against the plan (docs/run-spec.md, Fidelity); null when not collected. The
   * runners listed are those that dropped iterations, were CPU-starved, lost or replaced.
   */
  fidelity: MessageFidelity | null;
  /**
   * What the run cost when Notify read it (before Cleanup): `usd` the sum of the control plane's
   * recorded cost (AWS list prices) and the runners' estimate (the deployment's prices); null when
   * it could not be read.
   */
  cost: Omit<MessageCost, 'text'> | null;
  links: { console: string | null; report: string | null };
  /** On the payload's `clock`, like startedAt and endedAt: sentAt ≥ endedAt ≥ startedAt. */
  sentAt: string;
  /** Which clock startedAt, endedAt and sentAt are on. */
  clock: 'real' | 'simulated';
  /** Simulated seconds per real second when `clock` is simulated and the rate is fixed; else null. */
  timeScale: number | null;
}

export function webhookPayload(message: NotificationMessage, sentAt: string): WebhookPayload {
  return {
    type: WEBHOOK_EVENT_TYPE,
    version: WEBHOOK_PAYLOAD_VERSION,
    runId: message.runId,
    name: message.name,
    engine: message.engine,
    outcome: message.outcome,
    reason: message.reason,
    startedAt: message.startedAt,
    endedAt: message.endedAt,
    durationSeconds: message.durationSeconds,
    runners: { expected: message.runners.expected, reported: message.runners.reported ?? null },
    metrics: message.metrics ? { ...message.metrics } : null,
    thresholds: message.thresholds ?? null,
    simulated: message.simulated,
    startSkew: message.startSkew
      ? {
          skewMs: message.startSkew.skewMs,
          resolutionMs: message.startSkew.resolutionMs,
          source: message.startSkew.source,
          runnersSeen: message.startSkew.runnersSeen,
        }
      : null,
    baseline: message.baseline ?? null,
    fidelity: message.fidelity ?? null,
    cost: message.cost
      ? { usd: message.cost.usd, controlPlaneUsd: message.cost.controlPlaneUsd, runnersUsd: message.cost.runnersUsd, runnerPrices: message.cost.runnerPrices }
      : null,
    links: { console: message.links.console ?? null, report: message.links.report ?? null },
    sentAt,
    clock: message.clock.kind,
    timeScale: message.clock.kind === 'simulated' ? (message.clock.timeScale ?? null) : null,
  };
}

export interface WebhookRequestInput {
  message: NotificationMessage;
  idempotencyKey: string;
  signingSecret?: string;
  /** Epoch ms on the message's clock: the payload's sentAt. */
  sentAtMs: number;
  /** Epoch ms on the wall clock: the signed X-Loadplane-Timestamp. */
  signedAtMs: number;
}

export function webhookRequest({ message, idempotencyKey, signingSecret, sentAtMs, signedAtMs }: WebhookRequestInput): {
  headers: Record<string, string>;
  body: string;
} {
  const body = JSON.stringify(webhookPayload(message, new Date(sentAtMs).toISOString()));
  const headers: Record<string, string> = { 'Content-Type': 'application/json', [IDEMPOTENCY_KEY_HEADER]: idempotencyKey };
  if (signingSecret) {
    const timestamp = String(Math.floor(signedAtMs / 1000));
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = SIGNATURE_SCHEME + hmacHex(signingSecret, timestamp, body);
  }
  return { headers, body };
}

export interface SignedRequest {
  /** The raw body bytes as received (a string is taken as its UTF-8 bytes). */
  body: Uint8Array | string;
  /** The X-Loadplane-Signature and X-Loadplane-Timestamp header values. */
  signature: string | undefined;
  timestamp: string | undefined;
  secret: string;
  /** The receiver's clock, epoch ms. */
  nowMs: number;
  toleranceSeconds?: number;
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/** The receiver's side: steps 1–3 of the module comment. */
export function verifySignature({ body, signature, timestamp, secret, nowMs, toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS }: SignedRequest): SignatureCheck {
  if (!signature || !timestamp) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestamp) || !signature.startsWith(SIGNATURE_SCHEME)) return { ok: false, reason: 'malformed' };
  const given = signature.slice(SIGNATURE_SCHEME.length);
  if (!/^[0-9a-f]{64}$/.test(given)) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  return timingSafeEqual(expected, Buffer.from(given, 'hex')) ? { ok: true } : { ok: false, reason: 'mismatch' };
}

function hmacHex(secret: string, timestamp: string, body: Uint8Array | string): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}
