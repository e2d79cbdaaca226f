import { describe, expect, it } from 'vitest';
import { runnerSummarySchema, type RunnerSummary } from '../../lambdas/core/summary';

const summary: RunnerSummary = {
  engine: 'k6',
  runner: 2,
  exitCode: 99,
  simulated: false,
  durationMs: 30_000,
  requests: { count: 1200, failed: 3 },
  iterations: 600,
  latency: {
    count: 1200,
    sum: 144_000,
    min: 12,
    max: 980,
    p90: 210,
    p95: 340,
    p99: 720,
    quantiles: [
      { q: 0.5, value: 95 },
      { q: 0.9, value: 210 },
      { q: 0.95, value: 340 },
      { q: 0.99, value: 720 },
      { q: 0.999, value: 955.5 },
    ],
    relativeError: 0,
  },
  dataReceivedBytes: 1_000_000,
  dataSentBytes: 90_000,
  thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<300', ok: false }],
};

describe('runnerSummarySchema', () => {
  const { quantiles: _quantiles, relativeError: _relativeError, ...withoutGrid } = summary.latency;
  const input = (latency: Record<string, unknown>) => ({ ...summary, latency });

  it('accepts a summary with its percentile grid and keeps it as given', () => {
    expect(runnerSummarySchema.parse(summary)).toEqual(summary);
    expect(runnerSummarySchema.parse(input({ ...summary.latency, relativeError: 0.01 })).latency.relativeError).toBe(0.01);
  });

  it('defaults a latency without a grid to no quantiles and relativeError 0 (results recorded before the grid existed)', () => {
    const parsed = runnerSummarySchema.parse(input(withoutGrid));
    expect(parsed.latency).toEqual({ ...withoutGrid, quantiles: [], relativeError: 0 });
  });

  it.each([
    ['a level above 1', { quantiles: [{ q: 95, value: 340 }] }],
    ['a negative level', { quantiles: [{ q: -0.5, value: 340 }] }],
    ['a negative value', { quantiles: [{ q: 0.95, value: -1 }] }],
    ['a value that is not a number', { quantiles: [{ q: 0.95, value: '340' }] }],
    ['an entry without its level', { quantiles: [{ value: 340 }] }],
    ['a negative relativeError', { relativeError: -0.01 }],
  ])('rejects %s', (_, latency) => {
    expect(runnerSummarySchema.safeParse(input({ ...summary.latency, ...latency })).success).toBe(false);
  });

  it('accepts the ends of the level range, 0 and 1', () => {
    const ends = [
      { q: 0, value: 12 },
      { q: 1, value: 980 },
    ];
    expect(runnerSummarySchema.parse(input({ ...summary.latency, quantiles: ends })).latency.quantiles).toEqual(ends);
  });
});
