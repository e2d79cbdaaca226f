import { randomBytes, randomInt } from 'node:crypto';
import { decodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { SpecInvalid } from '../../lambdas/core/errors';
import { isValidRunId, newRunId, runIdForIdempotencyKey, runIdForSchedule } from '../../lambdas/core/run-id';

const SAMPLES = 1000;
/** Step Functions execution names: 1–80 letters, digits, '-' and '_'. */
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** Random text including separators, quotes, non-ASCII and the empty string. */
function randomText(): string {
  const alphabet = ['a', 'Z', '0', ':', '/', '"', '\\', ',', ' ', 'é', '☃', '\n', '-'];
  return Array.from({ length: randomInt(0, 12) }, () => alphabet[randomInt(alphabet.length)]).join('') + randomBytes(2).toString('hex');
}

function expectUsable(id: string): void {
  expect(isValidRunId(id), id).toBe(true);
  expect(id).toMatch(EXECUTION_NAME);
  expect(id).toHaveLength(26);
}

describe('newRunId', () => {
  it('is a lowercase ULID that is a valid run id, and unique', () => {
    const ids = Array.from({ length: SAMPLES }, () => newRunId());
    ids.forEach(expectUsable);
    expect(ids.every((id) => /^[0-7][0-9a-hjkmnp-tv-z]{25}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(SAMPLES);
  });

  it('carries its creation time and sorts by it', () => {
    const start = Date.UTC(2026, 10, 30, 10, 0, 0);
    const times = Array.from({ length: SAMPLES }, (_, i) => start + i * 997);
    const ids = times.map((t) => newRunId(t));
    ids.forEach((id, i) => expect(decodeTime(id.toUpperCase())).toBe(times[i]));
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('runIdForIdempotencyKey', () => {
  it('is deterministic, valid and collision-free over random callers and keys', () => {
    const seen = new Map<string, string>();
    for (let i = 0; i < SAMPLES; i++) {
      const caller = `arn:aws:iam::123456789012:role/${randomText()}`;
      const key = randomText();
      const id = runIdForIdempotencyKey(caller, key);
      expectUsable(id);
      expect(id.startsWith('k')).toBe(true);
      expect(runIdForIdempotencyKey(caller, key)).toBe(id);
      const pair = JSON.stringify([caller, key]);
      expect(seen.get(id) ?? pair, `collision for ${id}`).toBe(pair);
      seen.set(id, pair);
    }
  });

  it.each([
    [
      ['a:b', 'c'],
      ['a', 'b:c'],
    ],
    [
      ['a', 'bc'],
      ['ab', 'c'],
    ],
    [
      ['', 'x'],
      ['x', ''],
    ],
    [
      ['alice', 'k1'],
      ['bob', 'k1'],
    ],
  ])('separates %j from %j', (a, b) => {
    expect(runIdForIdempotencyKey(a[0]!, a[1]!)).not.toBe(runIdForIdempotencyKey(b[0]!, b[1]!));
  });

  it('uses only Crockford base32 after the prefix', () => {
    expect(runIdForIdempotencyKey('caller', 'key').slice(1)).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{25}$/);
  });
});

describe('runIdForSchedule', () => {
  it('is deterministic, valid and collision-free over random schedules and times', () => {
    const ids = new Set<string>();
    for (let i = 0; i < SAMPLES; i++) {
      const time = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
      const id = runIdForSchedule(`nightly-${i % 7}`, time);
      expectUsable(id);
      expect(id.startsWith('s')).toBe(true);
      expect(runIdForSchedule(`nightly-${i % 7}`, time)).toBe(id);
      ids.add(id);
    }
    expect(ids.size).toBe(SAMPLES);
  });

  it('gives the same id for every spelling of the same instant', () => {
    const id = runIdForSchedule('nightly', '2026-11-30T10:00:00Z');
    for (const spelling of ['2026-11-30T10:00:00.000Z', '2026-11-30T10:00Z', '2026-11-30T11:00:00+01:00', '2026-11-30T05:00:00-0500']) {
      expect(runIdForSchedule('nightly', spelling), spelling).toBe(id);
    }
    expect(runIdForSchedule('nightly', '2026-11-30T10:00:01Z')).not.toBe(id);
    expect(runIdForSchedule('weekly', '2026-11-30T10:00:00Z')).not.toBe(id);
  });

  it.each(['', 'tomorrow', '2026-11-30', '2026-11-30T10:00:00', '2026-02-30T10:00:00Z', '2026-11-30T24:00:00Z', 'Mon, 30 Nov 2026 10:00:00 GMT'])(
    'rejects the scheduled time %j with a SpecInvalid problem',
    (time) => {
      let thrown: unknown;
      try {
        runIdForSchedule('nightly', time);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(SpecInvalid);
      expect((thrown as SpecInvalid).problems).toEqual([{ path: 'scheduledTime', message: expect.stringContaining('must be an ISO 8601 time with a zone') }]);
    },
  );
});

describe('isValidRunId', () => {
  it.each([
    ['a', true],
    ['01jdx7k2m9q4r8s6t0v3w5y7z9', true],
    ['run-1', true],
    ['', false],
    ['a'.repeat(27), false],
    ['Run1', false],
    ['-run', false],
    ['run-', false],
    ['run_1', false],
    ['run.1', false],
  ])('%j → %s', (id, valid) => {
    expect(isValidRunId(id)).toBe(valid);
  });
});
