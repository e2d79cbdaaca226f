/**
 * Channel secrets from AWS Secrets Manager (architecture §5): secret id `<prefix><channel>`, a JSON string
 * `{ "url": "https://hooks.slack.com/services/...", "signingSecret": "..." }`. Values are cached per
 * container for a TTL, so a busy deployment reads each secret a few times an hour and a rotated one
 * is picked up within the TTL. Failures are not cached; a missing secret is (as "not configured").
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ChannelSecretInvalid, ChannelSecretUnavailable } from '../core/errors';
import { parseChannelSecret, type ChannelSecret, type ChannelSecrets } from './channel-secrets';

export const DEFAULT_SECRET_TTL_MS = 5 * 60 * 1000;

export interface SecretsManagerChannelSecretsOptions {
  client: SecretsManagerClient;
  /** Prepended to the channel name to form the secret id, e.g. `loadplane/notify/`. */
  prefix: string;
  ttlMs?: number;
  /** Epoch ms clock. */
  now?: () => number;
}

export function secretsManagerChannelSecrets({
  client,
  prefix,
  ttlMs = DEFAULT_SECRET_TTL_MS,
  now = Date.now,
}: SecretsManagerChannelSecretsOptions): ChannelSecrets {
  const cache = new Map<string, { until: number; value: Promise<ChannelSecret | undefined> }>();

  async function read(channel: string): Promise<ChannelSecret | undefined> {
    let secretString: string | undefined;
    try {
      ({ SecretString: secretString } = await client.send(new GetSecretValueCommand({ SecretId: prefix + channel })));
    } catch (err) {
      const name = (err as { name?: unknown }).name;
      if (name === 'ResourceNotFoundException') return undefined;
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw new ChannelSecretUnavailable(channel, `GetSecretValue failed: ${String(name)}${status ? ` (HTTP ${status})` : ''}`, { cause: err });
    }
    if (secretString === undefined) throw new ChannelSecretInvalid(channel, 'the secret has no SecretString (a binary secret is not supported)');
    return parseChannelSecret(channel, secretString);
  }

  return {
    get(channel) {
      const nowMs = now();
      const cached = cache.get(channel);
      if (cached && nowMs < cached.until) return cached.value;
      const entry = { until: nowMs + ttlMs, value: read(channel) };
      cache.set(channel, entry);
      entry.value.catch(() => {
        if (cache.get(channel) === entry) cache.delete(channel);
      });
      return entry.value;
    },
  };
}
