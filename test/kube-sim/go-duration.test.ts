import { describe, expect, it } from 'vitest';
import { formatGoDuration, parseDuration } from '../../local/kube-sim/go-duration';

describe('durations', () => {
  it.each([
    ['30s', 30_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['1d', undefined], // not a Go duration: k6 would refuse it too
    ['1.5s', 1500],
    ['45', 45_000],
    ['', undefined],
    ['soon', undefined],
    ['5x', undefined],
  ])('parseDuration(%j) = %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    [500, '500ms'],
    [30_000, '30s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [1500, '1.5s'],
  ])('formatGoDuration(%i) = %s (Go time.Duration.String)', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
  });
});
