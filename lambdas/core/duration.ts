/**
 * Durations as run specs write them: `90s`, `10m`, `1h30m`, `2h` (hours, minutes, seconds, in that
 * order), or a whole number of seconds. Seconds are the finest unit on purpose: deadlines are kept in
 * seconds and Step Functions waits in whole seconds, so `ms` or fractions would only pretend precision.
 */
import { excerpt } from './excerpt';

/** The accepted format, named in every problem message about a duration. */
export const DURATION_FORMAT = 'a duration like 90s, 10m, 1h30m or a whole number of seconds';

const PATTERN = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

export type DurationResult = { ok: true; seconds: number } | { ok: false; message: string };

/** Parses a positive duration; zero, negative and malformed values are rejected with the format named. */
export function parseDuration(value: unknown): DurationResult {
  const seconds = toSeconds(value);
  if (seconds === undefined) return { ok: false, message: `must be ${DURATION_FORMAT}, got ${show(value)}` };
  if (seconds <= 0) return { ok: false, message: `must be greater than zero (${DURATION_FORMAT}), got ${show(value)}` };
  if (!Number.isSafeInteger(seconds)) return { ok: false, message: `is too large, got ${show(value)}` };
  return { ok: true, seconds };
}

function toSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value !== 'string' || value === '') return undefined;
  const match = PATTERN.exec(value);
  if (!match) return undefined;
  const [, h = '0', m = '0', s = '0'] = match;
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

/** What was written, as a short escaped excerpt (a duration field may hold anything). */
function show(value: unknown): string {
  return excerpt(value);
}

/** Seconds back into the spec's notation, for messages: 5400 → `1h30m`, 90 → `1m30s`, 0 → `0s`. */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
  return text || '0s';
}
