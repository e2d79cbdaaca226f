/**
 * The loggers' last line of defence against leaking a secret: every string value of a log line has
 * its URLs replaced by `<url>`. A channel's webhook URL is its secret (a Slack incoming-webhook URL
 * is the credential), a presigned URL carries a signature, and an error message from a library may
 * quote the URL it failed on. The code is written never to log them; this makes a slip harmless.
 */

/** A scheme, `://` and everything up to whitespace, a quote or a bracket. */
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()[\]{}]+/gi;

export const REDACTED_URL = '<url>';

/** The URLs in a string replaced; other text as it is. */
export function redactUrls(text: string): string {
  return text.replace(URL_PATTERN, REDACTED_URL);
}

/** A JSON.stringify replacer: string values with their URLs replaced (keys are the code's own, never redacted). */
export function redactingReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? redactUrls(value) : value;
}
