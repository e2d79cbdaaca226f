/**
 * Run ids (architecture §4): lowercase, at most 26 characters, a DNS label (objects are named
 * `lp-<runId>-...`) and a valid Step Functions execution name (execution name = run id).
 * - a new run: a ULID, lowercase (time-ordered; always starts with a digit 0-7);
 * - a run with an idempotency key: `k` + 25 base32 chars of sha256(caller, key), so a retried request
 *   maps to the same run;
 * - a scheduled run: `s` + 25 base32 chars of sha256(schedule, scheduled time), so a double delivery
 *   by the scheduler maps to the same run.
 * The first character tells the three kinds apart, so they can never collide with each other.
 */
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { SpecInvalid } from './errors';

export const MAX_RUN_ID_LENGTH = 26;
const RUN_ID = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** Crockford's base32 alphabet, lowercase (no i, l, o, u). */
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const HASH_CHARS = MAX_RUN_ID_LENGTH - 1;

/**
 * A fresh run id whose time part is `now` (ms). Plain rather than monotonic ULIDs: the time part
 * then always says when the run was created, even under an injected clock; ids of the same
 * millisecond differ in 80 random bits and need no order among themselves.
 */
export function newRunId(now: number = Date.now()): string {
  // A simulated clock may stand between milliseconds (retry jitter); ulid wants a whole one.
  return ulid(Math.floor(now)).toLowerCase();
}

/** The run id for an API request carrying an idempotency key, scoped to the calling principal. */
export function runIdForIdempotencyKey(caller: string, key: string): string {
  return 'k' + hashToBase32(['idempotency-key', caller, key]);
}

/** The run id for one firing of a schedule; equal instants in any ISO 8601 spelling give the same id. */
export function runIdForSchedule(scheduleName: string, scheduledTime: string): string {
  return 's' + hashToBase32(['schedule', scheduleName, normalizeInstant(scheduledTime)]);
}

export function isValidRunId(id: string): boolean {
  return id.length >= 1 && id.length <= MAX_RUN_ID_LENGTH && RUN_ID.test(id);
}

/** JSON-encoding the tuple keeps it unambiguous: ('a:b', 'c') and ('a', 'b:c') hash differently. */
function hashToBase32(parts: string[]): string {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  let bits = 0;
  let buffer = 0;
  let out = '';
  for (const byte of digest) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < HASH_CHARS) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
    if (out.length === HASH_CHARS) break;
  }
  return out;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):?(\d{2}))$/i;

/**
 * An ISO 8601 instant with an explicit zone, re-emitted as UTC with milliseconds. Strict on purpose:
 * Date.parse alone accepts `2026-02-30` (rolling over to March) and zone-less local times.
 */
function normalizeInstant(text: string): string {
  const m = ISO_INSTANT.exec(text);
  const valid =
    m !== null &&
    Number(m[2]) >= 1 &&
    Number(m[2]) <= 12 &&
    Number(m[3]) >= 1 &&
    Number(m[3]) <= daysInMonth(Number(m[1]), Number(m[2])) &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6] ?? 0) <= 59 &&
    Number(m[8] ?? 0) <= 23 &&
    Number(m[9] ?? 0) <= 59;
  const ms = valid ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) {
    throw new SpecInvalid([
      {
        path: 'scheduledTime',
        message: `must be an ISO 8601 time with a zone, like 2026-11-30T10:00:00Z, got ${JSON.stringify(text)}`,
      },
    ]);
  }
  return new Date(ms).toISOString();
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}
