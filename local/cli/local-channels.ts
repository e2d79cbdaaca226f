/**
 * The notification channels of the local commands (`run --local`, `start`, `serve`): what Secrets
 * Manager holds on AWS (a channel's URL and signing secret, notify/channel-secrets.ts) comes from a
 * flag or the environment here — `--webhook-url` or LOADPLANE_WEBHOOK_URL (signed with
 * LOADPLANE_WEBHOOK_SECRET when set) for the channel `webhook`, `--slack-webhook-url` or
 * LOADPLANE_SLACK_WEBHOOK_URL for `slack`. The URLs are secrets: never printed, never logged.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { loadLocalChannelSettings } from '../../lambdas/core/config';
import type { ChannelSecret } from '../../lambdas/notify/channel-secrets';

export interface LocalChannelFlags {
  webhookUrl?: string;
  slackWebhookUrl?: string;
}

/** A webhook URL; the message never repeats the URL (it may carry a token). */
export function parseWebhookUrl(value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new InvalidArgumentError('must be an http(s) URL');
  return value;
}

/** `--webhook-url` and `--slack-webhook-url`, described for the command that takes them. */
export function withChannelOptions(command: Command, describe: { webhook: string; slack: string }): Command {
  return command
    .option('--webhook-url <url>', `${describe.webhook} (or LOADPLANE_WEBHOOK_URL; signed with LOADPLANE_WEBHOOK_SECRET if set)`, parseWebhookUrl)
    .option('--slack-webhook-url <url>', `${describe.slack} (or LOADPLANE_SLACK_WEBHOOK_URL)`, parseWebhookUrl);
}

/** The channels' secrets by channel name: flags first, then the environment. */
export function localChannels(flags: LocalChannelFlags, env: NodeJS.ProcessEnv = process.env): Record<string, ChannelSecret> {
  const settings = loadLocalChannelSettings(env);
  const webhookUrl = flags.webhookUrl ?? settings.webhookUrl;
  const slackUrl = flags.slackWebhookUrl ?? settings.slackWebhookUrl;
  return {
    ...(webhookUrl ? { webhook: { url: webhookUrl, ...(settings.webhookSecret ? { signingSecret: settings.webhookSecret } : {}) } } : {}),
    ...(slackUrl ? { slack: { url: slackUrl } } : {}),
  };
}

/** `webhook (signed), slack`: which channels have a URL, never the URL. */
export function describeChannels(channels: Record<string, ChannelSecret>): string {
  return Object.entries(channels)
    .map(([name, secret]) => (secret.signingSecret ? `${name} (signed)` : name))
    .join(', ');
}
