/**
 * The live line under a running test's bar (local/cli/live-line.ts), from the figures liveFigures()
 * makes of real samples (lambdas/core/live-sample.ts): rates between complete samples, a partial
 * sample said as such, figures it cannot give left out rather than shown as 0, and nothing without
 * samples.
 */
import { describe, expect, it } from 'vitest';
import { liveFigures, type LiveSample } from '../../lambdas/core/live-sample';
import { clearBlock, liveLine, shortDuration } from '../../local/cli/live-line';

const START = Date.parse('2030-01-01T00:00:00Z');

/** A sample `seconds` into the test; every runner answered unless said otherwise. */
function sample(seconds: number, figures: Partial<LiveSample> = {}): LiveSample {
  return {
    at: START + seconds * 1000,
    elapsedMs: seconds * 1000,
    source: 'live',
    answered: 4,
    runners: 4,
    requests: 0,
    failed: 0,
    iterations: 0,
    vus: 40,
    dataReceivedBytes: 0,
    dataSentBytes: 0,
    p95: [null, null, null, null],
    ...figures,
  };
}

describe('liveLine', () => {
  it('the rate and error rate between the two newest samples, the VUs, the worst runner\'s p95, against the expected length', () => {
    const figures = liveFigures([
      sample(190, { requests: 20_000, failed: 10, p95: [280, 295, 301, 290] }),
      sample(250, { requests: 29_138, failed: 21, p95: [281, 297, 305, 312.4] }),
    ]);
    // 9,138 requests in 60 s; 11 of them failed.
    expect(liveLine(figures, 600)).toBe('    at 4m10s of ~10m: 152.3 req/s · errors 0.12% · 40 VUs · worst p95 312 ms (runner 3)');
  });

  it('the first sample: the rate since the start; without an expected length, the elapsed time alone', () => {
    const figures = liveFigures([sample(20, { requests: 2_000, vus: 1, p95: [12, null, null, null] })]);
    expect(liveLine(figures)).toBe('    at 20s: 100.0 req/s · errors 0% · 1 VU · worst p95 12 ms (runner 0)');
  });

  it('a partial sample says how many runners answered; its rate is from the complete samples before it', () => {
    const figures = liveFigures([
      sample(60, { requests: 6_000 }),
      sample(120, { requests: 12_000, failed: 60 }),
      sample(180, { answered: 3, requests: 14_000, vus: 30, p95: [200, null, 210, 190] }),
    ]);
    expect(liveLine(figures, 1800)).toBe('    at 3m of ~30m: 100.0 req/s · errors 1.00% · 30 VUs · worst p95 210 ms (runner 2) · 3/4 runners answered');
  });

  it('no complete sample yet: no rate and no error rate (never a 0 that is not one)', () => {
    const figures = liveFigures([sample(10, { answered: 1, requests: 500, vus: 10, p95: [null, 40, null, null] })]);
    expect(liveLine(figures, 30)).toBe('    at 10s of ~30s: 10 VUs · worst p95 40 ms (runner 1) · 1/4 runners answered');
  });

  it('no requests yet: 0 req/s, no error rate, no p95', () => {
    expect(liveLine(liveFigures([sample(2, { vus: 4 })]), 30)).toBe('    at 2s of ~30s: 0.0 req/s · 4 VUs');
  });

  it('no samples: no line', () => {
    expect(liveFigures([])).toBeUndefined();
    expect(liveLine(undefined, 600)).toBeUndefined();
  });

  it('large rates in whole numbers with separators', () => {
    const figures = liveFigures([sample(10, { requests: 123_456 })]);
    expect(liveLine(figures)).toMatch(/^ {4}at 10s: 12,346 req\/s · errors 0% · 40 VUs$/);
  });
});

describe('shortDuration and clearBlock', () => {
  it('durations as a person reads them', () => {
    expect([0, 42, 60, 250, 600, 3599, 3600, 3900, 7199, 86_400].map(shortDuration)).toEqual(['0s', '42s', '1m', '4m10s', '10m', '59m59s', '1h', '1h05m', '2h', '24h']);
  });

  it('clearing a block: its last line, then each line above it', () => {
    expect(clearBlock(1)).toBe('\r\x1b[2K');
    expect(clearBlock(2)).toBe('\r\x1b[2K\x1b[1A\x1b[2K');
  });
});
