/**
 * Where a channel's webhook URL (and signing secret) come from. On AWS they live in Secrets Manager
 * (secrets-manager-channel-secrets.ts); locally the caller hands them over from CLI flags or the
 * environment (staticChannelSecrets). Both check the same shape and never echo the values in errors.
 */
import * as z from 'zod';
import { ChannelSecretInvalid } from '../core/errors';

export interface ChannelSecret {
  url: string;
  /** Signs generic webhook requests (webhook.ts); Slack webhooks do not use it. */
  signingSecret?: string;
}

export interface ChannelSecrets {
  /** The channel's secret, or undefined when none is configured. */
  get(channel: string): Promise<ChannelSecret | undefined>;
}

const channelSecretSchema = z.object({
  url: z.string().refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol)),
  signingSecret: z.string().min(1).optional(),
});

/**
 * Checks a secret's value (a JSON string or an object). Problems name the field and the rule only:
 * zod's own messages can quote the input, which here is the secret.
 */
export function parseChannelSecret(channel: string, raw: unknown): ChannelSecret {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ChannelSecretInvalid(channel, 'not JSON; expected {"url": "https://...", "signingSecret": "..."}');
    }
  }
  const parsed = channelSecretSchema.safeParse(value);
  if (parsed.success) {
    const { url, signingSecret } = parsed.data;
    return signingSecret === undefined ? { url } : { url, signingSecret };
  }
  const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(root)'))];
  const rules = fields.map((f) =>
    f === 'url' ? 'url must be an http(s) URL' : f === 'signingSecret' ? 'signingSecret must be a non-empty string' : `${f} must be an object`,
  );
  throw new ChannelSecretInvalid(channel, rules.join('; '));
}

/** Secrets given by the caller (local runs). Every entry is checked at once, so a bad flag fails before any run. */
export function staticChannelSecrets(secrets: Record<string, ChannelSecret>): ChannelSecrets {
  const checked = new Map(Object.entries(secrets).map(([channel, raw]) => [channel, parseChannelSecret(channel, raw)]));
  return { get: async (channel) => checked.get(channel) };
}
