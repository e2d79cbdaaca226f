/**
 * kube-sim's Gatling console output (local/kube-sim/programs/gatling-console.ts) against the real-shape
 * fixtures of test/fixtures/gatling-console, and parsed back by Collect's parser
 * (lambdas/engines/gatling/console-summary.ts) to the numbers it was rendered from.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runnerSummaryFromGatlingLog } from '../../lambdas/engines/gatling/console-summary';
import {
  decimalFormat,
  gatlingConsoleOutput,
  gatlingExitCode,
  gatlingPeriodicBlock,
  javaFixed2,
  scalaDouble,
  type GatlingConsoleLayout,
  type SimulatedGatlingRun,
  type SimulatedLatency,
} from '../../local/kube-sim/programs/gatling-console';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'gatling-console');
const fixtureLines = (name: string) => readFileSync(join(FIXTURES, name), 'utf8').split('\n');
const linesOf = (text: string) => {
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
};

/** A latency whose percentile function goes linearly through (p, ms) points. */
function latency(points: [number, number][], mean: number, std: number): SimulatedLatency {
  return {
    min: points[0]![1],
    max: points.at(-1)![1],
    mean,
    std,
    percentile(p) {
      for (let i = 1; i < points.length; i++) {
        const [p1, v1] = points[i]!;
        const [p0, v0] = points[i - 1]!;
        if (p <= p1) return p1 === p0 ? v1 : v0 + ((v1 - v0) * (p - p0)) / (p1 - p0);
      }
      return points.at(-1)![1];
    },
  };
}

/** From the blank line before the last periodic block to the last assertion line. */
function endOfRun(lines: string[]): string[] {
  const header = lines.findLastIndex((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d GMT +\d+s elapsed$/.test(line));
  const last = lines.findLastIndex((line) => / : (true|false)( \(.*\))?$/.test(line));
  return lines.slice(header - 2, last + 1);
}

/** Fixture 3.10-passed.log's numbers. */
const RUN_310: SimulatedGatlingRun = {
  simulationClass: 'loadplane.BasicSimulation',
  startTime: Date.UTC(2024, 0, 10, 10, 42, 11, 342),
  durationMs: 30_400,
  ok: 30,
  ko: 0,
  latency: latency(
    [
      [0, 12],
      [50, 71],
      [75, 104],
      [95, 240],
      [99, 298],
      [100, 305],
    ],
    87.2,
    60.9,
  ),
  requests: [
    { name: 'home', ok: 15, ko: 0 },
    { name: 'search', ok: 15, ko: 0 },
  ],
  scenarios: [{ name: 'BasicSimulation', users: 1 }],
  assertions: [
    { message: 'Global: max of response time is less than 1000.0', ok: true, actual: 305 },
    { message: 'Global: percentage of successful events is greater than 99.0', ok: true, actual: 100 },
  ],
};

/** Fixture 3.14-passed.log's numbers: 11,900 OK requests under 800 ms, 12,210 under 1,200 ms. */
const RUN_314: SimulatedGatlingRun = {
  simulationClass: 'loadplane.ShopSimulation',
  startTime: Date.UTC(2025, 5, 2, 9, 13, 9, 881),
  durationMs: 120_000,
  ok: 12_345,
  ko: 0,
  latency: latency(
    [
      [0, 3],
      [50, 141],
      [75, 260],
      [95, 702],
      [(100 * 11_900) / 12_345, 800],
      [(100 * 12_210) / 12_345, 1200],
      [99, 1532],
      [100, 4210],
    ],
    211.6,
    301.3,
  ),
  requests: [
    { name: 'home', ok: 6200, ko: 0 },
    { name: 'product', ok: 6145, ko: 0 },
  ],
  scenarios: [{ name: 'shop', users: 50 }],
  assertions: [
    { message: 'Global: 99th percentile of response time is less than 2000.0', ok: true, actual: 1532 },
    { message: 'Global: percentage of failed events is less than 1.0', ok: true, actual: 0 },
  ],
  layout: '3.14',
};

describe('gatlingConsoleOutput reproduces the fixtures line by line', () => {
  it('3.10 (the reference, gatling.sh 3.10.5): the end of 3.10-passed.log, exactly', () => {
    expect(linesOf(gatlingConsoleOutput(RUN_310))).toEqual(endOfRun(fixtureLines('3.10-passed.log')));
    expect(gatlingExitCode(RUN_310)).toBe(0);
  });

  it('3.14: the end of 3.14-passed.log, exactly (without the Maven lines)', () => {
    expect(linesOf(gatlingConsoleOutput(RUN_314))).toEqual(endOfRun(fixtureLines('3.14-passed.log')));
  });

  it('periodic blocks: the 5 s block of 3.10-passed.log and the 115 s block of 3.14-passed.log', () => {
    const block310 = gatlingPeriodicBlock({
      at: Date.UTC(2024, 0, 10, 10, 42, 16, 400),
      elapsedSeconds: 5,
      requests: [
        { name: 'home', ok: 3, ko: 0 },
        { name: 'search', ok: 2, ko: 0 },
      ],
      scenarios: [{ name: 'BasicSimulation', users: 1, active: 1, done: 0 }],
    });
    expect(linesOf(block310)).toEqual(fixtureLines('3.10-passed.log').slice(3, 16));
    const block314 = gatlingPeriodicBlock({
      at: Date.UTC(2025, 5, 2, 9, 15, 4, 881),
      elapsedSeconds: 115,
      requests: [
        { name: 'home', ok: 5950, ko: 0 },
        { name: 'product', ok: 5890, ko: 0 },
      ],
      scenarios: [{ name: 'shop', users: 50, active: 3, done: 47 }],
      layout: '3.14',
    });
    expect(linesOf(block314)).toEqual(fixtureLines('3.14-passed.log').slice(2, 15));
  });

  it('a 3.10 periodic block with errors, a wrapped one included (3.10-ko.log)', () => {
    const block = gatlingPeriodicBlock({
      at: Date.UTC(2024, 0, 10, 12, 0, 33),
      elapsedSeconds: 60,
      requests: [
        { name: 'home', ok: 120, ko: 4 },
        { name: 'search', ok: 108, ko: 8 },
      ],
      errors: [
        { message: 'j.n.ConnectException: Connection refused', count: 3 },
        { message: 'status.find.in([200, 209], 304), found 503', count: 8 },
        { message: 'i.n.h.s.SslHandshakeTimeoutException: handshake timed out after 10000ms', count: 1 },
      ],
      scenarios: [{ name: 'flaky', users: 4, active: 0, done: 4 }],
    });
    expect(linesOf(block)).toEqual(fixtureLines('3.10-ko.log').slice(2, 20));
  });
});

/** Where the columns of a stats or distribution row are: the positions of its fixed markers. */
function columns(line: string): string {
  if (/^> .*\(OK=/.test(line)) return `old-row ${line.indexOf(' (OK=')} ${line.indexOf(' KO=')} ${line.length}`;
  if (/^> .* \| /.test(line)) return `new-row ${[...line.matchAll(/\|/g)].map((m) => m.index).join(' ')} ${line.length}`;
  const range = /^(> .*?\s)(\d[\d,]*)(\s+\(\s*[\d.]+%\))$/.exec(line);
  // the count is right-aligned; 3.10 pads the percentage inside the parentheses, 3.13.4+ outside
  if (range) return `range ${range[1]!.length + range[2]!.length} ${line.length}`;
  return `other ${line.length}`;
}

describe('column positions match the fixtures for runs with other numbers', () => {
  const koRun = (layout: GatlingConsoleLayout): SimulatedGatlingRun => ({
    simulationClass: 'loadplane.FlakySimulation',
    startTime: Date.UTC(2024, 0, 10, 11, 59, 33),
    durationMs: 60_000,
    ok: 228,
    ko: 12,
    latency: latency(
      [
        [0, 3],
        [50, 121],
        [75, 203],
        [95, 611],
        [99, 1360],
        [100, 10_012],
      ],
      212,
      642,
    ),
    errors: [
      { message: 'status.find.in([200, 209], 304), found 503', count: 8 },
      { message: 'j.n.ConnectException: Connection refused', count: 4 },
    ],
    assertions: [{ message: 'Global: percentage of failed events is less than 10.0', ok: true, actual: 5 }],
    layout,
  });

  it.each([
    ['3.10' as const, '3.10-ko.log'],
    ['3.14' as const, '3.13-assertion-failed-ko.log'],
  ])('layout %s against %s: every stats and distribution row', (layout, name) => {
    const rendered = linesOf(gatlingConsoleOutput(koRun(layout)));
    const fixture = fixtureLines(name);
    const rowsOf = (lines: string[]) => {
      const start = lines.findIndex((line) => line.startsWith('---- Global Information'));
      const end = lines.findIndex((line, i) => i > start && line.startsWith('---- Errors'));
      return lines.slice(start, end);
    };
    const ours = rowsOf(rendered);
    const theirs = rowsOf(fixture);
    expect(ours).toHaveLength(theirs.length);
    ours.forEach((line, i) => {
      expect(columns(line), line).toBe(columns(theirs[i]!));
      // same labels, in the same order
      expect(line.replace(/\s+[\d,.(|-].*$/, ''), line).toBe(theirs[i]!.replace(/\s+[\d,.(|-].*$/, ''));
    });
  });

  it("the fixtures' rows sit where Gatling's own tests put them", () => {
    // gatling-charts ConsoleTemplateSpec at v3.10.5 …
    const row310 = '> numberOfRequestsStatistics                            20 (OK=19     KO=1     )';
    const range310 = '> t < 42 ms                                             90 ( 42%)';
    // … and at v3.13.4+ (commit 750471097)
    const row313 = '> numberOfRequestsStatistics                                                         |        20 |        19 |         1';
    const range313 = '> t < 42 ms                                                                                                  90    (42%)';
    const fixture310 = fixtureLines('3.10-ko.log');
    const fixture313 = fixtureLines('3.13-assertion-failed-ko.log');
    expect(columns(fixture310.find((l) => l.startsWith('> request count'))!)).toBe(columns(row310));
    expect(columns(fixture310.find((l) => l.startsWith('> t < 800 ms'))!)).toBe(columns(range310));
    expect(columns(fixture313.find((l) => l.startsWith('> request count'))!)).toBe(columns(row313));
    expect(columns(fixture313.find((l) => l.startsWith('> OK: t < 800 ms'))!)).toBe(columns(range313));
  });
});

describe('kube-sim output parses back to the numbers it was rendered from', () => {
  const base = (layout: GatlingConsoleLayout, over: Partial<SimulatedGatlingRun> = {}): SimulatedGatlingRun => ({
    simulationClass: 'loadplane.Sim',
    startTime: Date.UTC(2025, 0, 1),
    durationMs: 45_250,
    ok: 1234,
    ko: 56,
    latency: latency(
      [
        [0, 4.2],
        [50, 88.4],
        [75, 133.6],
        [95, 401.5],
        [99, 1333.3],
        [100, 2999.9],
      ],
      121.49,
      150.2,
    ),
    scenarios: [
      { name: 'browse', users: 40 },
      { name: 'buy', users: 7 },
    ],
    assertions: [
      { message: 'Global: 95th percentile of response time is less than 500.0', ok: true, actual: 402 },
      { message: 'Global: percentage of failed events is less than 1.0', ok: false, actual: (56 / 1290) * 100 },
      { message: 'cart: max of response time is less than 100.0', error: 'Could not find stats matching assertion path List(cart)' },
    ],
    layout,
    ...over,
  });

  it.each(['3.10' as const, '3.14' as const])('layout %s', (layout) => {
    const run = base(layout);
    const summary = runnerSummaryFromGatlingLog(gatlingConsoleOutput(run), { runner: 1, exitCode: gatlingExitCode(run), durationMs: 45_250, simulated: true });
    expect(summary).toEqual({
      engine: 'gatling',
      runner: 1,
      exitCode: 2,
      simulated: true,
      // "completed in 45 seconds": Gatling's whole seconds win over the facts' 45.25 s.
      durationMs: 45_000,
      requests: { count: 1290, failed: 56 },
      iterations: 47,
      latency: {
        count: 1290,
        sum: 121 * 1290,
        min: 4,
        max: 3000,
        p90: 402,
        p95: 402,
        p99: 1333,
        quantiles: [
          { q: 0.5, value: 88 },
          { q: 0.75, value: 134 },
          { q: 0.95, value: 402 },
          { q: 0.99, value: 1333 },
        ],
        relativeError: 0.02,
      },
      dataReceivedBytes: 0,
      dataSentBytes: 0,
      thresholds: [
        { metric: 'assertion', expression: 'Global: 95th percentile of response time is less than 500.0', ok: true },
        { metric: 'assertion', expression: 'Global: percentage of failed events is less than 1.0', ok: false },
        { metric: 'assertion', expression: 'cart: max of response time is less than 100.0', ok: false },
      ],
    });
  });

  it('many assertions and errors still fit in GATLING_LOG_TAIL_LINES', async () => {
    const { GATLING_LOG_TAIL_LINES } = await import('../../lambdas/engines/gatling/console-summary');
    const run = base('3.10', {
      errors: Array.from({ length: 150 }, (_, i) => ({
        message: `jsonPath($.items[${i}].id).find.exists, found nothing in a response that is long enough to wrap`,
        count: 1,
      })),
      assertions: Array.from({ length: 200 }, (_, i) => ({ message: `request_${i}: max of response time is less than 1000.0`, ok: true, actual: 12 })),
    });
    const lines = linesOf(gatlingConsoleOutput(run));
    expect(lines.length).toBeLessThan(GATLING_LOG_TAIL_LINES);
    const summary = runnerSummaryFromGatlingLog(lines.join('\n'), { runner: 0, exitCode: 0, durationMs: 1, simulated: true })!;
    expect(summary.thresholds).toHaveLength(200);
    expect(summary.iterations).toBe(47);
  });

  it('-nr: no block, so no result; the assertions are printed all the same', () => {
    const run = base('3.10', { noReports: true });
    const text = gatlingConsoleOutput(run);
    expect(text).not.toContain('Global Information');
    expect(text).toContain('Parsing log file(s) done in 0s.\nGlobal: 95th percentile');
    expect(runnerSummaryFromGatlingLog(text, { runner: 0, exitCode: 2, durationMs: 1, simulated: true })).toBeUndefined();
  });

  it('no request at all with reports on: the report generator throws, exit 1, no result', () => {
    const run = base('3.10', { ok: 0, ko: 0, requests: [] });
    expect(gatlingExitCode(run)).toBe(1);
    const text = gatlingConsoleOutput(run);
    expect(text).toContain('java.lang.UnsupportedOperationException: There were no requests sent during the simulation');
    expect(text).not.toMatch(/ : (true|false)/);
    expect(runnerSummaryFromGatlingLog(text, { runner: 0, exitCode: 1, durationMs: 1, simulated: true })).toBeUndefined();
  });
});

describe('Java number formatting (outputs of JDK 17, checked with javac)', () => {
  it('DecimalFormat("###.###") and ("#,###.##"), ENGLISH, half-even on the exact double', () => {
    expect(decimalFormat(888.8888, 3, false)).toBe('888.889');
    expect(decimalFormat(1142.857142, 3, false)).toBe('1142.857');
    expect(decimalFormat(0.5, 3, false)).toBe('0.5');
    expect(decimalFormat(1, 3, false)).toBe('1');
    expect(decimalFormat(0, 3, false)).toBe('0');
    expect(decimalFormat(0.0015, 3, false)).toBe('0.002');
    expect(decimalFormat(123_456, 2, true)).toBe('123,456');
    expect(decimalFormat(8275.678, 2, true)).toBe('8,275.68');
    expect(decimalFormat(0.125, 2, true)).toBe('0.12');
    expect(decimalFormat(0.135, 2, true)).toBe('0.14');
    expect(decimalFormat(99.995, 2, true)).toBe('100');
    expect(decimalFormat(102.875, 2, true)).toBe('102.88');
    expect(decimalFormat(1_234_567.891, 2, true)).toBe('1,234,567.89');
  });

  it('%3.2f (half-up) and Double.toString', () => {
    expect(javaFixed2(66.666666)).toBe('66.67');
    expect(javaFixed2(5)).toBe('5.00');
    expect(javaFixed2(0.125)).toBe('0.13');
    expect(scalaDouble(305)).toBe('305.0');
    expect(scalaDouble(2.5)).toBe('2.5');
    expect(scalaDouble(0)).toBe('0.0');
    expect(scalaDouble(1e7)).toBe('1.0E7');
    expect(scalaDouble(1e-5)).toBe('1.0E-5');
    expect(scalaDouble(12_345_678.9)).toBe('1.23456789E7');
  });
});
