/**
 * The live figures' arithmetic (lambdas/core/live-sample.ts): rates only between complete samples at
 * least a second apart, none across a counter that went down (a replaced runner starts again from 0),
 * none from a single sample; the worst runner's p95 is one runner's, never an average.
 */
import { describe, expect, it } from 'vitest';
import { intervalBetween, liveFigures, MIN_RATE_INTERVAL_MS, type LiveSample } from '../../lambdas/core/live-sample';

const sample = (elapsedMs: number, requests: number, failed: number, over: Partial<LiveSample> = {}): LiveSample => ({
  at: 1_700_000_000_000 + elapsedMs,
  elapsedMs,
  source: 'live',
  answered: 2,
  runners: 2,
  requests,
  failed,
  iterations: requests,
  vus: 10,
  dataReceivedBytes: 0,
  dataSentBytes: 0,
  p95: [120, 180],
  ...over,
});

describe('intervalBetween', () => {
  it('gives requests per second and the failed share over the interval', () => {
    expect(intervalBetween(sample(10_000, 100, 0), sample(20_000, 600, 5))).toEqual({ kind: 'rate', requestsPerSecond: 50, errorRate: 0.01 });
    expect(intervalBetween({ elapsedMs: 0, requests: 0, failed: 0 }, sample(4_000, 40, 0))).toEqual({ kind: 'rate', requestsPerSecond: 10, errorRate: 0 });
  });

  it('no error rate without requests; nothing over less than a second; a reset when a counter went down or more failed than were made', () => {
    expect(intervalBetween(sample(0, 100, 1), sample(60_000, 100, 1))).toEqual({ kind: 'rate', requestsPerSecond: 0 });
    expect(intervalBetween(sample(10_000, 100, 0), sample(10_000 + MIN_RATE_INTERVAL_MS - 1, 900, 0))).toEqual({ kind: 'short' });
    expect(intervalBetween(sample(10_000, 1_000, 0), sample(20_000, 960, 0))).toEqual({ kind: 'reset' });
    expect(intervalBetween(sample(10_000, 1_000, 50), sample(20_000, 1_010, 40))).toEqual({ kind: 'reset' });
    expect(intervalBetween(sample(10_000, 1_000, 0), sample(20_000, 1_010, 20))).toEqual({ kind: 'reset' });
  });
});

describe('liveFigures', () => {
  it('takes the rate between the newest complete sample and the newest complete one a second or more before it', () => {
    const figures = liveFigures([
      sample(0, 0, 0),
      sample(60_000, 600, 6),
      sample(120_000, 1_800, 12, { answered: 1 }), // partial: skipped for rates
      sample(180_000, 3_000, 30),
      { ...sample(180_001, 3_010, 30), source: 'final' }, // 1 ms later: too short to pair with
    ]);
    expect(figures).toMatchObject({ elapsedSeconds: 180.001, requests: 3_010, answered: 2, runners: 2 });
    // (3,010 − 600) / 120.001 s; (30 − 6) / 2,410
    expect(figures!.requestsPerSecond).toBeCloseTo(2_410 / 120.001, 6);
    expect(figures!.errorRate).toBeCloseTo(24 / 2_410, 9);
  });

  it('no rate from one complete sample, across a reset, or without samples; the worst p95 is one runner’s own', () => {
    expect(liveFigures([])).toBeUndefined();
    const one = liveFigures([sample(30_000, 300, 0, { p95: [null, 240] })])!;
    expect(one.requestsPerSecond).toBeUndefined();
    expect(one.errorRate).toBeUndefined();
    expect(one.worstP95).toEqual({ runner: 1, ms: 240 });
    const reset = liveFigures([sample(60_000, 1_000, 50), sample(120_000, 960, 5, { p95: [300, null] })])!;
    expect(reset.requestsPerSecond).toBeUndefined();
    expect(reset.worstP95).toEqual({ runner: 0, ms: 300 });
    expect(liveFigures([sample(60_000, 100, 0), sample(120_000, 100, 0)])).toMatchObject({ requestsPerSecond: 0 });
    expect(liveFigures([sample(60_000, 100, 0), sample(120_000, 100, 0)])!.errorRate).toBeUndefined();
  });
});
