/**
 * Channel secrets from AWS Secrets Manager (architecture §5): secret id `<prefix><channel>`, a JSON string
 * `{ "url": "https://hooks.slack.com/services/...", "signingSecret": "..." }`, read through Powertools
 * Parameters' SecretsProvider, whose cache keeps each value per container for `maxAgeSeconds`, so a
 * busy deployment reads each secret a few times an hour and a rotated one is picked up within that.
 *
 * What is cached: a checked secret, and a missing one (as "not configured"). What is not: a failed
 * read and a malformed secret, so a fixed secret is used at once. The provider's read (`_get`) is
 * this module's: it sends GetSecretValue, turns a missing secret into a cacheable marker and checks
 * the value before the provider caches it. Gets of one channel while its read is in flight share
 * that read. No error carries the secret's value (channel-secrets.ts).
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { ChannelSecretInvalid, ChannelSecretUnavailable } from '../core/errors';
import { parseChannelSecret, type ChannelSecret, type ChannelSecrets } from './channel-secrets';

export const DEFAULT_SECRET_MAX_AGE_SECONDS = 5 * 60;

export interface SecretsManagerChannelSecretsOptions {
  client: SecretsManagerClient;
  /** Prepended to the channel name to form the secret id, e.g. `loadplane/notify/`. */
  prefix: string;
  /** How long a value is used before it is read again. */
  maxAgeSeconds?: number;
}

/** What the cache holds for a secret that does not exist: not a checked secret's JSON (that is an object). */
const NOT_CONFIGURED = '';

/** SecretsProvider with loadplane's read: the cache holds checked secrets (as JSON) and NOT_CONFIGURED. */
class ChannelSecretsProvider extends SecretsProvider {
  constructor(
    client: SecretsManagerClient,
    private readonly prefix: string,
  ) {
    super({ awsSdkV3Client: client });
  }

  protected override async _get(secretId: string): Promise<string> {
    const channel = secretId.slice(this.prefix.length);
    let secretString: string | undefined;
    try {
      ({ SecretString: secretString } = await this.client.send(new GetSecretValueCommand({ SecretId: secretId })));
    } catch (err) {
      const name = (err as { name?: unknown }).name;
      if (name === 'ResourceNotFoundException') return NOT_CONFIGURED;
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw new ChannelSecretUnavailable(channel, `GetSecretValue failed: ${String(name)}${status ? ` (HTTP ${status})` : ''}`, { cause: err });
    }
    if (secretString === undefined) throw new ChannelSecretInvalid(channel, 'the secret has no SecretString (a binary secret is not supported)');
    return JSON.stringify(parseChannelSecret(channel, secretString));
  }
}

export function secretsManagerChannelSecrets({
  client,
  prefix,
  maxAgeSeconds = DEFAULT_SECRET_MAX_AGE_SECONDS,
}: SecretsManagerChannelSecretsOptions): ChannelSecrets {
  const provider = new ChannelSecretsProvider(client, prefix);
  const inFlight = new Map<string, Promise<ChannelSecret | undefined>>();

  async function read(channel: string): Promise<ChannelSecret | undefined> {
    let value: unknown;
    try {
      value = await provider.get(prefix + channel, { maxAge: maxAgeSeconds });
    } catch (err) {
      // The provider wraps what `_get` throws (GetParameterError, the cause kept).
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof ChannelSecretInvalid || cause instanceof ChannelSecretUnavailable) throw cause;
      throw new ChannelSecretUnavailable(channel, `the secret could not be read: ${(err as Error)?.name ?? typeof err}`, { cause: err });
    }
    return typeof value === 'string' && value !== NOT_CONFIGURED ? (JSON.parse(value) as ChannelSecret) : undefined;
  }

  return {
    get(channel) {
      let pending = inFlight.get(channel);
      if (!pending) {
        pending = read(channel).finally(() => inFlight.delete(channel));
        inFlight.set(channel, pending);
      }
      return pending;
    },
  };
}
