/**
 * One notification to one channel: the channel's kind (from its name, as spec.ts allows them:
 * `slack`, `slack-<suffix>`, `webhook`, `webhook-<suffix>`) picks the body, its secret gives the URL,
 * and deliver() says what became of it. Claiming and marking in the ledger is the Notify stage's job.
 */
import { ChannelNotConfigured } from '../core/errors';
import type { ChannelSecrets } from './channel-secrets';
import { deliver, type DeliveryResult } from './deliver';
import type { NotificationMessage } from './message';
import { slackBody } from './slack';
import { IDEMPOTENCY_KEY_HEADER, webhookRequest } from './webhook';

export const ChannelKind = { slack: 'slack', webhook: 'webhook' } as const;
export type ChannelKind = (typeof ChannelKind)[keyof typeof ChannelKind];

const CHANNEL_NAME = /^(slack|webhook)(-[a-z0-9]+)*$/;

export function channelKind(channel: string): ChannelKind {
  const kind = CHANNEL_NAME.exec(channel)?.[1];
  if (kind === ChannelKind.slack || kind === ChannelKind.webhook) return kind;
  throw new ChannelNotConfigured(channel, 'not a channel name (slack, webhook, slack-<suffix> or webhook-<suffix>)');
}

export interface SendNotificationInput {
  channel: string;
  secrets: ChannelSecrets;
  message: NotificationMessage;
  /** `<runId>:<outcome>` from the ledger claim: the same on every attempt. */
  idempotencyKey: string;
  timeoutMs?: number;
  /** Epoch ms on the message's clock (the run's; simulated locally): the webhook's sentAt. */
  now?: () => number;
  /** Epoch ms on the wall clock: the signature's timestamp, which the receiver checks against its own clock. */
  wallNow?: () => number;
}

/**
 * Throws (ChannelNotConfigured, ChannelSecretInvalid, ChannelSecretUnavailable) only when nothing was
 * sent; every outcome of an actual send is a DeliveryResult.
 */
export async function sendNotification({
  channel,
  secrets,
  message,
  idempotencyKey,
  timeoutMs,
  now = Date.now,
  wallNow = Date.now,
}: SendNotificationInput): Promise<DeliveryResult> {
  const kind = channelKind(channel);
  const secret = await secrets.get(channel);
  if (!secret) throw new ChannelNotConfigured(channel, 'no webhook URL is configured for it');
  const { headers, body } =
    kind === ChannelKind.slack
      ? { headers: { 'Content-Type': 'application/json', [IDEMPOTENCY_KEY_HEADER]: idempotencyKey }, body: JSON.stringify(slackBody(message)) }
      : webhookRequest({ message, idempotencyKey, signingSecret: secret.signingSecret, sentAtMs: now(), signedAtMs: wallNow() });
  return deliver({ url: secret.url, headers, body, receiver: channel, timeoutMs });
}
