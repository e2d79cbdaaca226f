/**
 * Gatling's console output → RunnerSummary, on the real-shape fixtures of test/fixtures/gatling-console
 * (README.md there says where each shape was checked). The expected numbers are read off the fixture
 * text by hand: `sum` = printed mean × request count, p90 = the smallest printed percentile ≥ 90.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GATLING_LOG_TAIL_LINES, GATLING_PERCENTILE_RELATIVE_ERROR, runnerSummaryFromGatlingLog } from '../../lambdas/engines/gatling/console-summary';
import type { RunnerFacts } from '../../lambdas/engines/engine-adapter';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'gatling-console');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const facts = (exitCode = 0): RunnerFacts => ({ runner: 3, exitCode, durationMs: 31_000, simulated: false });
const parse = (log: string, exitCode = 0) => runnerSummaryFromGatlingLog(log, facts(exitCode));
const assertion = (expression: string, ok: boolean) => ({ metric: 'assertion', expression, ok });

/** Replaces the one line of `log` that `find` matches. */
function replaceLine(log: string, find: RegExp, replacement: string | null): string {
  const lines = log.split('\n');
  const index = lines.findLastIndex((line) => find.test(line));
  if (index < 0) throw new Error(`no line matches ${find}`);
  if (replacement === null) lines.splice(index, 1);
  else lines[index] = replacement;
  return lines.join('\n');
}

describe('runnerSummaryFromGatlingLog on Gatling 3.10 (80 columns)', () => {
  it('3.10-passed: counts, latency, the done user and both assertions', () => {
    expect(parse(fixture('3.10-passed.log'))).toEqual({
      engine: 'gatling',
      runner: 3,
      exitCode: 0,
      simulated: false,
      // Gatling's own "completed in 30 seconds" wins over the container's run time (the facts' 31 s).
      durationMs: 30_000,
      requests: { count: 30, failed: 0 },
      iterations: 1,
      latency: {
        count: 30,
        sum: 87 * 30,
        min: 12,
        max: 305,
        p90: 240,
        p95: 240,
        p99: 298,
        quantiles: [
          { q: 0.5, value: 71 },
          { q: 0.75, value: 104 },
          { q: 0.95, value: 240 },
          { q: 0.99, value: 298 },
        ],
        // Never 0: the digest's rank convention is not k6's (0.5 ms of 71 ms is less than 2 %)
        relativeError: GATLING_PERCENTILE_RELATIVE_ERROR,
      },
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      thresholds: [
        assertion('Global: max of response time is less than 1000.0', true),
        assertion('Global: percentage of successful events is greater than 99.0', true),
      ],
    });
  });

  it('3.10-assertion-failed: a false assertion and an unresolved path are failed thresholds', () => {
    const summary = parse(fixture('3.10-assertion-failed.log'), 2)!;
    expect(summary.exitCode).toBe(2);
    expect(summary.requests).toEqual({ count: 1200, failed: 0 });
    expect(summary.iterations).toBe(20);
    expect(summary.latency).toEqual({
      count: 1200,
      sum: 171_600,
      min: 8,
      max: 1450,
      p90: 421,
      p95: 421,
      p99: 903,
      quantiles: [
        { q: 0.5, value: 97 },
        { q: 0.75, value: 178 },
        { q: 0.95, value: 421 },
        { q: 0.99, value: 903 },
      ],
      relativeError: GATLING_PERCENTILE_RELATIVE_ERROR,
    });
    expect(summary.thresholds).toEqual([
      assertion('Global: 95th percentile of response time is less than 400.0', false),
      assertion('Global: percentage of failed events is less than 1.0', true),
      assertion('login: max of response time is less than 500.0', false),
    ]);
  });

  it('3.10-ko: failed requests are the KO column; latency is the Total column; wrapped errors are skipped', () => {
    const summary = parse(fixture('3.10-ko.log'))!;
    expect(summary.requests).toEqual({ count: 240, failed: 12 });
    expect(summary.iterations).toBe(4);
    expect(summary.latency).toMatchObject({ count: 240, sum: 212 * 240, min: 3, max: 10_012, p90: 611, p95: 611, p99: 1360 });
    expect(summary.latency.quantiles.map((p) => p.value)).toEqual([121, 203, 611, 1360]);
    expect(summary.thresholds).toEqual([assertion('Global: percentage of failed events is less than 10.0', true)]);
  });

  it('3.10-periodic: the final block wins over twelve periodic ones; iterations sum the scenarios of the last one', () => {
    const summary = parse(fixture('3.10-periodic.log'))!;
    expect(summary.requests).toEqual({ count: 660, failed: 0 });
    // browsers: done 30 (open model), buyers: done 5 (closed model, no waiting count)
    expect(summary.iterations).toBe(35);
    expect(summary.latency).toMatchObject({ count: 660, sum: 108_240, min: 5, max: 2210, p95: 498, p99: 1103 });
    expect(summary.thresholds).toEqual([]);
  });

  it('3.10-no-reports (-nr): no Global Information block, so no result, although the assertions were printed', () => {
    expect(parse(fixture('3.10-no-reports.log'))).toBeUndefined();
  });

  it('3.10-died: periodic blocks only', () => {
    expect(parse(fixture('3.10-died.log'), 137)).toBeUndefined();
  });
});

describe('runnerSummaryFromGatlingLog on Gatling 3.13.4+ (120 columns)', () => {
  it('3.14-passed: thousands separators, "-" in the KO column, Maven lines after the assertions', () => {
    expect(parse(fixture('3.14-passed.log'))).toEqual({
      engine: 'gatling',
      runner: 3,
      exitCode: 0,
      simulated: false,
      durationMs: 120_000,
      requests: { count: 12_345, failed: 0 },
      iterations: 50,
      latency: {
        count: 12_345,
        sum: 212 * 12_345,
        min: 3,
        max: 4210,
        p90: 702,
        p95: 702,
        p99: 1532,
        quantiles: [
          { q: 0.5, value: 141 },
          { q: 0.75, value: 260 },
          { q: 0.95, value: 702 },
          { q: 0.99, value: 1532 },
        ],
        relativeError: GATLING_PERCENTILE_RELATIVE_ERROR,
      },
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      thresholds: [
        assertion('Global: 99th percentile of response time is less than 2000.0', true),
        assertion('Global: percentage of failed events is less than 1.0', true),
      ],
    });
  });

  it('3.13-assertion-failed-ko: KO requests, errors, forAll assertions unfolded per request', () => {
    const summary = parse(fixture('3.13-assertion-failed-ko.log'), 2)!;
    expect(summary.requests).toEqual({ count: 2000, failed: 50 });
    expect(summary.iterations).toBe(10);
    expect(summary.latency).toMatchObject({ count: 2000, sum: 846_000, min: 2, max: 60_004, p90: 611, p95: 611, p99: 2103 });
    expect(summary.thresholds).toEqual([
      assertion('Global: percentage of failed events is less than 1.0', false),
      assertion('home: 99th percentile of response time is less than 1500.0', true),
      assertion('search: 99th percentile of response time is less than 1500.0', false),
    ]);
  });
});

describe('runnerSummaryFromGatlingLog: truncated, malformed and noisy logs', () => {
  const passed = fixture('3.10-passed.log');
  const wide = fixture('3.14-passed.log');

  it('a log cut inside the block (no closing "=" line) has no result', () => {
    const cut = passed.slice(0, passed.indexOf('> response time 95th percentile'));
    expect(parse(cut)).toBeUndefined();
    const cutWide = wide.slice(0, wide.indexOf('---- Response Time Distribution'));
    expect(parse(cutWide)).toBeUndefined();
  });

  it('a log cut inside the distribution rows has no result either', () => {
    expect(parse(passed.slice(0, passed.indexOf('> failed')))).toBeUndefined();
  });

  it('a log cut after the block but before the assertion lines: the result without thresholds', () => {
    const cut = passed.slice(0, passed.indexOf('Reports generated'));
    const summary = parse(cut)!;
    expect(summary.requests.count).toBe(30);
    expect(summary.thresholds).toEqual([]);
  });

  it('a tail that starts inside the block (header cut off) has no result', () => {
    const tail = passed.slice(passed.indexOf('> min response time'));
    expect(parse(tail)).toBeUndefined();
  });

  it('a tail that starts after the periodic blocks still has the result, with iterations 0', () => {
    const tail = passed.slice(passed.indexOf('Simulation loadplane.BasicSimulation completed'));
    const summary = parse(tail)!;
    expect(summary.requests.count).toBe(30);
    expect(summary.iterations).toBe(0);
  });

  it('a stats row that does not parse makes the block unusable', () => {
    expect(
      parse(replaceLine(passed, /^> mean response time/, '> mean response time                                   8x7 (OK=87     KO=-     )')),
    ).toBeUndefined();
    expect(parse(replaceLine(wide, /^> max response time/, '> max response time (ms)   |     4,210 |     4,210'))).toBeUndefined();
  });

  it('a block missing a required row (min) is unusable', () => {
    expect(parse(replaceLine(passed, /^> min response time/, null))).toBeUndefined();
  });

  it('a "-" percentile with requests counted is unusable', () => {
    const log = replaceLine(passed, /^> response time 75th percentile/, '> response time 75th percentile                          - (OK=-      KO=-     )');
    expect(parse(log)).toBeUndefined();
  });

  it('when the last block is unusable an earlier complete one is not taken', () => {
    const cut = passed.slice(0, passed.indexOf('> std deviation'));
    expect(parse(passed + cut)).toBeUndefined();
  });

  it('a stray stderr line inside the block, CRLF line ends and an RFC 3339 timestamp prefix are tolerated', () => {
    const stray = passed.replace('> std deviation', 'OpenJDK 64-Bit Server VM warning: Sharing is only supported for boot loader classes\n> std deviation');
    expect(parse(stray)).toEqual(parse(passed));
    expect(parse(passed.replaceAll('\n', '\r\n'))).toEqual(parse(passed));
    const stamped = passed
      .split('\n')
      .map((line, i) => `2024-01-10T10:42:${String(10 + (i % 40)).padStart(2, '0')}.123456789Z ${line}`)
      .join('\n');
    expect(parse(stamped)).toEqual(parse(passed));
  });

  it('noise before the run and GATLING_LOG_TAIL_LINES of tail: the same result', () => {
    const noise = Array.from({ length: 5000 }, (_, i) => `10:41:${String(i % 60).padStart(2, '0')}.000 [WARN ] noise line ${i}`).join('\n');
    const log = `${noise}\n${passed}`;
    const tail = log.split('\n').slice(-GATLING_LOG_TAIL_LINES).join('\n');
    expect(parse(tail)).toEqual(parse(passed));
  });

  it('lines that merely look like assertions before the block are not thresholds', () => {
    const log = `Global: something is odd : true (actual : 1.0)\n${passed}`;
    expect(parse(log)!.thresholds).toHaveLength(2);
  });

  it('assertion lines of Gatling 3.9 and older (no "(actual : …)") are read too', () => {
    const old = passed.replace(' : true (actual : 305.0)', ' : true').replace(' : true (actual : 100.0)', ' : false');
    expect(parse(old)!.thresholds).toEqual([
      assertion('Global: max of response time is less than 1000.0', true),
      assertion('Global: percentage of successful events is greater than 99.0', false),
    ]);
  });
});

describe('runnerSummaryFromGatlingLog: percentiles gatling.conf changed', () => {
  const passed = fixture('3.10-passed.log');
  const relabel = (log: string, from: string, to: string) => log.replace(`> response time ${from} percentile`, `> response time ${to} percentile`);

  it('a printed 90th percentile is p90 itself', () => {
    const summary = parse(relabel(passed, '75th', '90th'))!;
    expect(summary.latency.quantiles.map((p) => p.q)).toEqual([0.5, 0.9, 0.95, 0.99]);
    expect(summary.latency).toMatchObject({ p90: 104, p95: 240, p99: 298 });
  });

  it('no printed percentile at or above 90, 95 or 99: max, the only honest upper bound', () => {
    let log = relabel(passed, '95th', '80th');
    log = relabel(log, '99th', '85th');
    const summary = parse(log)!;
    expect(summary.latency.quantiles.map((p) => p.q)).toEqual([0.5, 0.75, 0.8, 0.85]);
    expect(summary.latency).toMatchObject({ p90: 305, p95: 305, p99: 305 });
  });

  it('fractional levels (99.9th) are read', () => {
    const summary = parse(relabel(passed, '99th', '99.9th'))!;
    expect(summary.latency.quantiles.at(-1)).toEqual({ q: 0.999, value: 298 });
    expect(summary.latency).toMatchObject({ p95: 240, p99: 298 });
  });
});

describe('relativeError', () => {
  it('never 0 (Gatling’s percentiles are not k6’s interpolation): the digest’s figure, or half a millisecond of the smallest printed value when that is more', () => {
    const passed = fixture('3.10-passed.log');
    const withCount = (n: number) =>
      passed.replace(
        '> request count                                         30 (OK=30     KO=0     )',
        `> request count                                         ${String(n).padStart(2)} (OK=${String(n).padEnd(6)} KO=0     )`,
      );
    const few = parse(withCount(5))!.latency;
    const many = parse(withCount(99))!.latency;
    const smallest = Math.min(...few.quantiles.map((g) => g.value));
    expect(few.relativeError).toBe(Math.max(GATLING_PERCENTILE_RELATIVE_ERROR, 0.5 / smallest));
    expect(many.relativeError).toBe(few.relativeError);
    expect(few.relativeError).toBeGreaterThan(0);
  });
});
