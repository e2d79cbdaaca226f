/**
 * The `Idempotency-Key` header of `POST /runs` and what its value may be: checked by the API
 * (submit-run.ts) and by the CLI before it sends one (local/cli/commands/run.ts). A module of its own,
 * without zod: the CLI's start-up imports it.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Keys are opaque to the API: 1–256 printable ASCII characters (a UUID, a CI job id, a commit hash). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;
export const IDEMPOTENCY_KEY_RULE = `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces`;

export function isValidIdempotencyKey(key: string): boolean {
  return key.length >= 1 && key.length <= MAX_IDEMPOTENCY_KEY_LENGTH && /^[\x21-\x7e]+$/.test(key);
}
