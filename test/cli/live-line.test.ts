/**
 * The live line under a running test's bar (local/cli/live-line.ts), from the figures liveFigures()
 * makes of real samples (lambdas/core/live-sample.ts): rates between complete samples and only when
 * liveFigures has them, a partial sample said as such right after the time, figures it cannot give
 * left out rather than shown as 0, and nothing without samples.
 */
import { describe, expect, it } from 'vitest';
import { liveFigures, type LiveSample } from '../../lambdas/core/live-sample';
import { clearBlock, liveLine, shortDuration } from '../../local/cli/live-line';
import { liveSampleAt } from '../support/live-samples';

const START = Date.parse('2030-01-01T00:00:00Z');

/** A sample `seconds` into the test; every runner answered unless said otherwise. */
/** A sample `seconds` into the test; every runner answered unless said otherwise. */
const sample = (seconds: number, figures: Partial<LiveSample> = {}): LiveSample => liveSampleAt(START, seconds, { vus: 40, ...figures });

describe('liveLine', () => {
  it("the rate and error rate between the two newest samples, the VUs, the worst runner's p95, against the expected length", () => {
    const figures = liveFigures([
      sample(190, { requests: 20_000, failed: 10, p95: [280, 295, 301, 290] }),
      sample(250, { requests: 29_138, failed: 21, p95: [281, 297, 305, 312.4] }),
    ]);
    // 9,138 requests in 60 s; 11 of them failed.
    expect(liveLine(figures, 600)).toBe('    at 4m10s of ~10m: 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)');
  });

  it('one complete sample so far: no rate and no error rate (no interval to take them over); without an expected length, the elapsed time alone', () => {
    const figures = liveFigures([sample(20, { requests: 2_000, vus: 1, p95: [12, null, null, null] })]);
    expect(liveLine(figures)).toBe('    at 20s: 1 VU · worst p95 12 ms (runner 0)');
  });

  it('a partial sample says how many runners answered, right after the time; its rate is from the complete samples before it', () => {
    const figures = liveFigures([
      sample(60, { requests: 6_000 }),
      sample(120, { requests: 12_000, failed: 60 }),
      sample(180, { answered: 3, requests: 14_000, vus: 30, p95: [200, null, 210, 190] }),
    ]);
    expect(liveLine(figures, 1800)).toBe('    at 3m of ~30m (3/4 runners answered): 100.0 req/s · errors 1.00% · 30 VUs · worst p95 210 ms (runner 2)');
  });

  it('a partial sample after complete ones that made no requests: a rate of 0 is shown as one (it is known)', () => {
    const figures = liveFigures([sample(10), sample(20), sample(30, { answered: 2, requests: 50, vus: 20 })]);
    expect(liveLine(figures, 60)).toBe('    at 30s of ~1m (2/4 runners answered): 0.0 req/s · 20 VUs');
  });

  it('no complete sample yet: no rate and no error rate (never a 0 that is not one)', () => {
    const figures = liveFigures([sample(10, { answered: 1, requests: 500, vus: 10, p95: [null, 40, null, null] })]);
    expect(liveLine(figures, 30)).toBe('    at 10s of ~30s (1/4 runners answered): 10 VUs · worst p95 40 ms (runner 1)');
  });

  it('no requests yet: 0 req/s, no error rate, no p95', () => {
    expect(liveLine(liveFigures([sample(2, { vus: 4 }), sample(4, { vus: 4 })]), 30)).toBe('    at 4s of ~30s: 0.0 req/s · 4 VUs');
  });

  it('counters that went down (a runner started again): no rate across them, the other figures as they are', () => {
    const figures = liveFigures([sample(10, { requests: 5_000, failed: 5 }), sample(20, { requests: 1_200, failed: 1, p95: [30, null, null, null] })]);
    expect(figures?.requestsPerSecond).toBeUndefined();
    expect(liveLine(figures, 60)).toBe('    at 20s of ~1m: 40 VUs · worst p95 30 ms (runner 0)');
  });

  it('figures given without a rate (the API leaves them out): none shown, never NaN or undefined', () => {
    const line = liveLine({ at: new Date(START).toISOString(), elapsedSeconds: 5, answered: 2, runners: 2, requests: 10, failed: 0, vus: 3 }, 30);
    expect(line).toBe('    at 5s of ~30s: 3 VUs');
  });

  it('no samples: no line', () => {
    expect(liveFigures([])).toBeUndefined();
    expect(liveLine(undefined, 600)).toBeUndefined();
  });

  it('large rates in whole numbers with separators', () => {
    const figures = liveFigures([sample(10, { requests: 1_000 }), sample(20, { requests: 124_456 })]);
    expect(liveLine(figures)).toBe('    at 20s: 12,346 req/s · errors 0% · 40 VUs');
  });
});

describe('shortDuration and clearBlock', () => {
  it('durations as a person reads them', () => {
    expect([0, 42, 60, 250, 600, 3599, 3600, 3900, 7199, 86_400].map(shortDuration)).toEqual([
      '0s',
      '42s',
      '1m',
      '4m10s',
      '10m',
      '59m59s',
      '1h',
      '1h05m',
      '2h',
      '24h',
    ]);
  });

  it('clearing a block: its last line, then each line above it', () => {
    expect(clearBlock(1)).toBe('\r\x1b[2K');
    expect(clearBlock(2)).toBe('\r\x1b[2K\x1b[1A\x1b[2K');
  });
});
