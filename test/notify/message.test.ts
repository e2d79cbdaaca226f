import { describe, expect, it } from 'vitest';
import { aggregateResults } from '../../lambdas/core/aggregate';
import { Outcome } from '../../lambdas/core/status';
import { buildMessage } from '../../lambdas/notify/message';
import { input, latency, runner } from './fixtures';

describe('buildMessage', () => {
  it('carries the run, the recorded outcome and the key numbers of a collected result', () => {
    const m = buildMessage(input({ outcome: Outcome.THRESHOLDS_FAILED, reason: 'runner 1 exited 99', links: { console: 'https://console/x' } }));
    expect(m).toMatchObject({
      runId: '01jdm5x3k7q8r9s0t1v2w3x4y5',
      name: 'checkout-peak',
      engine: 'k6',
      outcome: 'THRESHOLDS_FAILED',
      reason: 'runner 1 exited 99',
      startedAt: '2026-11-30T10:00:00.000Z',
      endedAt: '2026-11-30T10:12:05.000Z',
      durationSeconds: 725,
      runners: { expected: 3, reported: 3 },
      metrics: { requests: 3000, failedRequests: 30, errorRate: 0.01 },
      simulated: false,
      links: { console: 'https://console/x' },
    });
  });

  it('reports where the run’s p95 lies, [lo, hi] from every runner’s percentiles, never an average nor one runner’s', () => {
    const i = input();
    const m = buildMessage(i);
    expect(m.metrics!.p95Ms).toEqual(i.result!.latency.p95);
    expect(m.metrics!.p95Ms.lo).toBe(200);
    expect(m.metrics!.p95Ms.hi).toBeCloseTo(325.1875, 9);
    expect(m.metrics).not.toHaveProperty('p95UpperBoundMs');
    // A copy: the message never shares the result's objects.
    expect(m.metrics!.p95Ms).not.toBe(i.result!.latency.p95);
  });

  it('one runner: its own p95, both ends the same', () => {
    const result = aggregateResults(1, [runner(0, { latency: latency(187.5) })]);
    expect(buildMessage(input({ expectedRunners: 1, result })).metrics!.p95Ms).toEqual({ lo: 187.5, hi: 187.5 });
  });

  it('a run without a sample: [0, 0], not NaN', () => {
    const idle = runner(0, {
      requests: { count: 0, failed: 0 },
      latency: { ...latency(), count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [] },
    });
    expect(buildMessage(input({ expectedRunners: 1, result: aggregateResults(1, [idle]) })).metrics).toMatchObject({ p95Ms: { lo: 0, hi: 0 }, errorRate: 0 });
  });

  it('counts runners that reported, not the ones expected', () => {
    const result = aggregateResults(4, [runner(0), runner(2), runner(3)]);
    expect(buildMessage(input({ expectedRunners: 4, result })).runners).toEqual({ expected: 4, reported: 3 });
  });

  it('names each failed threshold once, with every runner that failed it', () => {
    const p95 = { metric: 'http_req_duration', expression: 'p(95)<300', ok: true };
    const failedRate = { metric: 'http_req_failed', expression: 'rate<0.01', ok: false };
    const result = aggregateResults(3, [
      runner(0, { thresholds: [p95, failedRate] }),
      runner(1, {
        thresholds: [
          { ...p95, ok: false },
          { ...failedRate, ok: true },
        ],
      }),
      runner(2, { thresholds: [{ ...p95, ok: false }, failedRate] }),
    ]);
    expect(buildMessage(input({ result })).thresholds).toEqual({
      total: 2,
      failed: [
        { metric: 'http_req_duration', expression: 'p(95)<300', runners: [1, 2] },
        { metric: 'http_req_failed', expression: 'rate<0.01', runners: [0, 2] },
      ],
    });
  });

  it('reports no thresholds defined as zero, not as unknown', () => {
    expect(buildMessage(input()).thresholds).toEqual({ total: 0, failed: [] });
  });

  it('leaves metrics, reported runners and thresholds out when no result was collected', () => {
    const m = buildMessage(input({ outcome: Outcome.FAILED, result: undefined }));
    expect(m.runners).toEqual({ expected: 3 });
    expect(m).not.toHaveProperty('metrics');
    expect(m).not.toHaveProperty('thresholds');
    expect(m.simulated).toBe(false);
    expect(m.links).toEqual({});
  });

  it('keeps the totals but calls thresholds unknown when only the run item totals are at hand', () => {
    const { runners: _runners, ...totals } = aggregateResults(2, [runner(0), runner(1)]);
    const m = buildMessage(input({ expectedRunners: 2, result: totals }));
    expect(m.metrics).toMatchObject({ requests: 2000, failedRequests: 20 });
    expect(m.runners).toEqual({ expected: 2, reported: 2 });
    expect(m).not.toHaveProperty('thresholds');
  });

  it('marks the message simulated when any runner numbers are synthetic', () => {
    const result = aggregateResults(2, [runner(0), runner(1, { simulated: true })]);
    expect(buildMessage(input({ expectedRunners: 2, result })).simulated).toBe(true);
  });

  it.each([
    { startedAt: '2026-11-30T10:00:00.000Z', endedAt: '2026-11-30T11:30:00.000Z', seconds: 5400 },
    { startedAt: '2026-11-30T10:00:00.000Z', endedAt: '2026-11-30T10:00:01.600Z', seconds: 2 },
    { startedAt: '2026-11-30T10:00:00.000Z', endedAt: '2026-11-30T10:00:00.000Z', seconds: 0 },
    { startedAt: '2026-11-30T10:00:05.000Z', endedAt: '2026-11-30T10:00:00.000Z', seconds: 0 },
    { startedAt: 'not a time', endedAt: '2026-11-30T10:00:00.000Z', seconds: 0 },
  ])('duration from $startedAt to $endedAt is $seconds s', ({ startedAt, endedAt, seconds }) => {
    expect(buildMessage(input({ startedAt, endedAt })).durationSeconds).toBe(seconds);
  });
});
