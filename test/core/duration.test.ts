import { describe, expect, it } from 'vitest';
import { DURATION_FORMAT, formatDuration, parseDuration } from '../../lambdas/core/duration';

describe('parseDuration', () => {
  it.each([
    ['1s', 1],
    ['90s', 90],
    ['10m', 600],
    ['90m', 5400],
    ['1h30m', 5400],
    ['2h', 7200],
    ['1h1m1s', 3661],
    ['24h', 86_400],
    [1, 1],
    [3600, 3600],
  ])('%j is %i seconds', (written, seconds) => {
    expect(parseDuration(written)).toEqual({ ok: true, seconds });
  });

  it.each(['10x', '-5m', '1.5h', 'm', '', '1m1h', '10 m', '1h 30m', '500ms', ' 1s', '90', 1.5, Number.NaN, Infinity, null, true, {}])(
    'rejects %j naming the format',
    (written) => {
      const result = parseDuration(written);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toContain(DURATION_FORMAT);
    },
  );

  it.each(['0s', '0h0m0s', 0, -1])('rejects %j as not greater than zero', (written) => {
    const result = parseDuration(written);
    expect(!result.ok && result.message).toMatch(/^must be greater than zero \(a duration like/);
  });

  it('rejects a duration beyond safe integers', () => {
    expect(parseDuration(`${'9'.repeat(20)}h`)).toEqual({ ok: false, message: expect.stringContaining('too large') });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [45, '45s'],
    [90, '1m30s'],
    [600, '10m'],
    [5400, '1h30m'],
    [86_400, '24h'],
    [3661, '1h1m1s'],
  ])('%i seconds is %s, which parses back', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
    if (seconds > 0) expect(parseDuration(text)).toEqual({ ok: true, seconds });
  });
});
