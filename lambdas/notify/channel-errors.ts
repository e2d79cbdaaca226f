/**
 * Why a channel could not be used at all. Nothing was sent in any of these cases, so a claim taken
 * for the send can be released. Messages name the channel, never the secret's content or the URL.
 */
import { LoadplaneError } from '../core/errors';

/** No webhook is configured for the channel (no secret, no local entry), or the name is not a channel. */
export class ChannelNotConfigured extends LoadplaneError {
  override readonly name = 'ChannelNotConfigured' as const;
  readonly retryable = false;
  constructor(readonly channel: string, detail: string) {
    super(`notification channel ${channel}: ${detail}`);
  }
}

/** The channel's configuration exists but is not `{ "url": "http(s)://...", "signingSecret"?: "..." }`. */
export class ChannelSecretInvalid extends LoadplaneError {
  override readonly name = 'ChannelSecretInvalid' as const;
  readonly retryable = false;
  constructor(readonly channel: string, problem: string) {
    super(`notification channel ${channel}: its configuration is invalid: ${problem}`);
  }
}

/** The secret store failed (throttling, network, access): a retry may succeed. */
export class ChannelSecretUnavailable extends LoadplaneError {
  override readonly name = 'ChannelSecretUnavailable' as const;
  readonly retryable = true;
  constructor(readonly channel: string, detail: string, options?: { cause?: unknown }) {
    super(`notification channel ${channel}: its secret could not be read: ${detail}`, options);
  }
}
