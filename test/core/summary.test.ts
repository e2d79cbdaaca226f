import { describe, expect, it } from 'vitest';
import { formatSummaryLine, parseSummaryFromLog, type RunnerSummary } from '../../lambdas/core/summary';

const summary: RunnerSummary = {
  engine: 'k6',
  runner: 2,
  exitCode: 99,
  simulated: false,
  durationMs: 30_000,
  requests: { count: 1200, failed: 3 },
  iterations: 600,
  latency: { count: 1200, sum: 144_000, min: 12, max: 980, p90: 210, p95: 340, p99: 720 },
  dataReceivedBytes: 1_000_000,
  dataSentBytes: 90_000,
  thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<300', ok: false }],
};

describe('runner summary line', () => {
  it('round-trips through a log with other output around it', () => {
    const log = ['running (0m30.0s), 10/10 VUs', formatSummaryLine(summary), ''].join('\n');
    expect(parseSummaryFromLog(log)).toEqual(summary);
  });

  it('takes the last valid line and skips malformed ones', () => {
    const first = { ...summary, exitCode: 0 };
    const log = [formatSummaryLine(first), formatSummaryLine(summary), 'LOADPLANE_SUMMARY {not json'].join('\n');
    expect(parseSummaryFromLog(log)?.exitCode).toBe(99);
  });

  it('returns undefined when the runner printed no summary (it died before the wrapper could)', () => {
    expect(parseSummaryFromLog('k6 killed\n')).toBeUndefined();
    expect(parseSummaryFromLog('LOADPLANE_SUMMARY {"engine":"k6"}')).toBeUndefined();
  });
});
