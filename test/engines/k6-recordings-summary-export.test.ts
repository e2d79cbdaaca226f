/**
 * Replay: every `--summary-export` file real k6 1.3.0 wrote in the corpus (test/fixtures/real-k6,
 * runner cases and segments-4-runners/runner-*) through Collect's k6 path (summary-export.ts): the
 * export printed as the runner script prints it (`LOADPLANE_RESULT ` + the file with CR/LF removed)
 * after the recorded output, then parseK6ResultLine and runnerSummaryFromK6Export.
 */
import { describe, expect, it } from 'vitest';
import { RESULT_LINE_PREFIX } from '../../lambdas/core/runner-contract';
import { parseK6ResultLine, runnerSummaryFromK6Export, trendStatPercentile } from '../../lambdas/engines/k6/summary-export';
import { recordedCases, type RecordedCase } from './k6-recordings-support';

const withExport = recordedCases().filter((c) => c.read('summary-export.json') !== undefined);

/** The runner pod's log: k6's output, then the runner script's newline, result line and newline (pod-scripts.ts RUNNER_SCRIPT). */
function runnerLog(c: RecordedCase): string {
  const exported = c.read('summary-export.json')!;
  return `${c.podLog()}\n${RESULT_LINE_PREFIX}${exported.replace(/[\r\n]/g, '')}\n`;
}

type Metric = Partial<Record<string, number>> & { thresholds?: Record<string, boolean> };
const facts = (c: RecordedCase) => ({ runner: 0, exitCode: c.meta.exitCode, durationMs: 12_345, simulated: false });

describe('real k6 summary exports', () => {
  it('the corpus has them: runner cases, the 4 segment runners, and the 349-byte one of setup-throws', () => {
    expect(withExport.length).toBeGreaterThanOrEqual(25);
    expect(withExport.filter((c) => c.name.startsWith('segments-4-runners/runner-'))).toHaveLength(4);
    expect(Buffer.byteLength(withExport.find((c) => c.name === 'setup-throws')!.read('summary-export.json')!)).toBe(349);
  });

  it.each(withExport.map((c) => [c.name, c] as const))(
    '%s: the result line reads back as the export; counts, percentiles and thresholds equal its values',
    (_name, c) => {
      const exported = JSON.parse(c.read('summary-export.json')!) as { metrics: Record<string, Metric> };
      const line = parseK6ResultLine(runnerLog(c));
      expect(line).toEqual(exported);
      const summary = runnerSummaryFromK6Export(line, facts(c));
      const m = exported.metrics;
      expect(summary.requests).toEqual({ count: m.http_reqs?.count ?? 0, failed: m.http_req_failed?.passes ?? 0 });
      expect(summary.iterations).toBe(m.iterations?.count ?? 0);
      expect(summary.dataReceivedBytes).toBe(m.data_received?.count ?? 0);
      expect(summary.dataSentBytes).toBe(m.data_sent?.count ?? 0);
      // Never NaN, whatever metrics the export lacks.
      expect(Number.isFinite(summary.durationMs)).toBe(true);
      expect(JSON.stringify(summary)).not.toMatch(/null|NaN/);
      const trend = m.http_req_duration;
      const count = trend?.count ?? 0;
      if (trend && count > 0) {
        expect(summary.latency).toMatchObject({ count, min: trend.min, max: trend.max, p90: trend['p(90)'], p95: trend['p(95)'], p99: trend['p(99)'] });
        expect(summary.latency.sum).toBeCloseTo(trend.avg! * count, 6);
        const levels = Object.keys(trend).filter((k) => trendStatPercentile(k) !== undefined);
        expect(summary.latency.quantiles).toHaveLength(levels.length);
        for (const key of levels) expect(summary.latency.quantiles).toContainEqual({ q: trendStatPercentile(key)! / 100, value: trend[key] });
      } else {
        expect(summary.latency).toMatchObject({ count: 0, sum: 0, min: 0, max: 0, quantiles: [] });
      }
      const thresholds = Object.entries(m).flatMap(([metric, v]) =>
        Object.entries(v.thresholds ?? {}).map(([expression, failed]) => ({ metric, expression, ok: !failed })),
      );
      expect(summary.thresholds).toHaveLength(thresholds.length);
      for (const t of thresholds) expect(summary.thresholds).toContainEqual(t);
    },
  );

  it('exit-threshold-failed: the failed thresholds, a submetric’s included, read as failed', () => {
    const c = withExport.find((x) => x.name === 'exit-threshold-failed')!;
    const summary = runnerSummaryFromK6Export(parseK6ResultLine(runnerLog(c)), facts(c));
    expect(summary.thresholds).toEqual([
      { metric: 'http_req_duration', expression: 'avg<1000', ok: true },
      { metric: 'http_req_duration', expression: 'p(95)<5', ok: false },
      { metric: 'http_req_duration{status:200}', expression: 'max<5', ok: false },
      { metric: 'http_req_failed', expression: 'rate<0.01', ok: true },
    ]);
  });

  it('setup-throws (only data_sent/data_received, all 0): a clear empty result, the pod’s own duration, no NaN', () => {
    const c = withExport.find((x) => x.name === 'setup-throws')!;
    const summary = runnerSummaryFromK6Export(parseK6ResultLine(runnerLog(c)), facts(c));
    expect(summary).toMatchObject({
      exitCode: 107,
      durationMs: 12_345, // no counter with a rate to recover k6's duration from: the container's
      requests: { count: 0, failed: 0 },
      iterations: 0,
      latency: { count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [] },
      thresholds: [],
    });
  });

  it('an export without http_reqs (a script without HTTP): k6’s own duration from the counters it has, no latency', () => {
    const c = withExport.find((x) => x.name === 'exit-normal')!;
    const exported = JSON.parse(c.read('summary-export.json')!) as { metrics: Record<string, unknown> };
    for (const name of Object.keys(exported.metrics)) if (name.startsWith('http_')) delete exported.metrics[name];
    const summary = runnerSummaryFromK6Export(exported, facts(c));
    expect(summary.requests).toEqual({ count: 0, failed: 0 });
    expect(summary.latency).toEqual({ count: 0, sum: 0, min: 0, max: 0, p90: 0, p95: 0, p99: 0, quantiles: [], relativeError: 0 });
    // The recording's counters: iterations 288 at 95.92772613257719/s, data_sent 22176 at
    // 7386.434912208444/s, data_received 49248 at 16403.6411686707/s. The largest, data_received:
    // 49248 / 16403.6411686707 = 3.00226 s, so 3002 ms (the pod's 12_345 ms is not used; k6 itself ran
    // for 3378 ms, start-up and the summary included).
    expect(summary.durationMs).toBe(3002);
    expect(summary.iterations).toBe(288);
  });

  it('an export with only iterations (a script without HTTP or data): its count / rate', () => {
    const c = withExport.find((x) => x.name === 'exit-normal')!;
    const exported = JSON.parse(c.read('summary-export.json')!) as { metrics: Record<string, unknown> };
    for (const name of Object.keys(exported.metrics)) if (name !== 'iterations' && name !== 'vus_max') delete exported.metrics[name];
    // 288 / 95.92772613257719 per s = 3.00226 s
    expect(runnerSummaryFromK6Export(exported, facts(c))).toMatchObject({
      durationMs: 3002,
      iterations: 288,
      vusMax: 2,
      dataReceivedBytes: 0,
      dataSentBytes: 0,
    });
  });
});
