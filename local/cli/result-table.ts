/**
 * The CLI's picture of a finished run: one row per runner, a total row, and the outcome. Percentiles
 * in the total row are the run's brackets [lo, hi] (core/percentile-bracket.ts): the run's exact
 * percentile lies in them; a runner's own percentile is never passed off as the run's.
 */
import { formatBytes as bytes } from '../../lambdas/core/bytes';
import type { RunResult } from '../../lambdas/core/aggregate';
import { checksFailedExitCode, describeExitCode } from '../../lambdas/core/outcome-rules';
import type { RunnerSummary } from '../../lambdas/core/summary';
import type { Outcome } from '../../lambdas/core/status';
import { escapeText } from '../../lambdas/core/excerpt';
import { describeChange, type BaselineComparison } from '../../lambdas/core/regression';

export const SIMULATED_NOTICE = 'simulated metrics (kube-sim): the numbers are synthetic, not measurements';

const HEADER = ['runner', 'exit', 'requests', 'failed', 'mean', 'p95', 'p99', 'thresholds'];

export interface ResultTableExtras {
  /** The measured start line (core/start-skew.ts describeStartSkew), when the start was measured. */
  startSkew?: string;
  /** The load as delivered against the plan, in words (core/fidelity-text.ts fidelitySummary). */
  fidelity?: readonly string[];
  /** The run against its spec's baseline (core/regression.ts baselineComparison), when it was compared. */
  baseline?: BaselineComparison;
}

export function formatResultTable(result: RunResult, outcome: Outcome, reason: string, extras: ResultTableExtras = {}): string {
  const { startSkew, fidelity = [], baseline } = extras;
  const rows = result.runners.map((r) => {
    return [
      String(r.runner),
      `${r.exitCode} ${describeExitCode(r.exitCode, r.engine)}`,
      count(r.requests.count),
      count(r.requests.failed),
      r.latency.count === 0 ? '-' : ms(r.latency.sum / r.latency.count),
      r.latency.count === 0 ? '-' : ms(r.latency.p95),
      r.latency.count === 0 ? '-' : ms(r.latency.p99),
      thresholdsCell(r),
    ];
  });
  for (const index of result.missingRunners) rows.push([String(index), 'no result', '', '', '', '', '', '']);
  rows.sort((a, b) => Number(a[0]) - Number(b[0]));

  const latency = result.latency;
  const noSamples = latency.count === 0;
  const total = [
    'total',
    `${result.runners.length}/${result.expectedRunners} reported`,
    count(result.requests),
    `${count(result.failedRequests)} (${percent(result.errorRate)})`,
    noSamples ? '-' : `${ms(latency.mean)} (weighted)`,
    noSamples ? '-' : bracket(latency.p95),
    noSamples ? '-' : bracket(latency.p99),
    '',
  ];

  const lines = [
    ...columns([HEADER, ...rows, total]),
    '',
    `latency: min ${noSamples ? '-' : ms(latency.min)}, max ${noSamples ? '-' : ms(latency.max)}, ` +
      `p90 ${noSamples ? '-' : bracket(latency.p90)}; the run's percentiles lie in these brackets (from every runner's, never averaged)`,
    `iterations ${count(result.iterations)}, data received ${bytes(result.dataReceivedBytes)}, sent ${bytes(result.dataSentBytes)}, ` +
      `duration ${(result.durationMs / 1000).toFixed(1)} s${result.simulated ? ' (simulated)' : ''}`,
    ...(startSkew !== undefined ? [escapeText(startSkew, 200)] : []),
    ...fidelity.map((line) => escapeText(line, 500)),
    ...(result.duplicateRunners.length > 0 ? [`runners reported twice (last result kept): ${result.duplicateRunners.join(', ')}`] : []),
    ...(result.unexpectedRunners.length > 0 ? [`results from runners never launched (not counted): ${result.unexpectedRunners.join(', ')}`] : []),
    ...(baseline ? ['', ...baselineLines(baseline)] : []),
    ...(result.simulated ? [SIMULATED_NOTICE] : []),
    `outcome: ${outcome} - ${escapeText(reason, 2_000)}`,
  ];
  return lines.join('\n') + '\n';
}

const VERDICT_WORDS = { certain: 'regressed', possible: 'may have regressed', none: 'within the limit', unknown: 'cannot tell' } as const;

/** The run against its baseline: one row per limited figure (both values, the change, the limit, the verdict), or why there was none. */
function baselineLines(b: BaselineComparison): string[] {
  if (b.runId === null) return [`baseline: none (${escapeText(b.none ?? '', 300)})`];
  const value = (figure: string, v: number | { lo: number; hi: number }) =>
    typeof v !== 'number' ? bracket(v) : figure === 'errorRate' ? percent(v) : figure === 'requestRate' ? `${v.toFixed(1)} req/s` : ms(v);
  const limit = (figure: string, l: number) => (figure === 'errorRate' ? `+${l} points` : `${figure === 'requestRate' ? '-' : '+'}${(l * 100).toFixed(1)} %`);
  const rows = b.figures.map((f) => [
    f.figure,
    value(f.figure, f.run),
    value(f.figure, f.baseline),
    f.change ? describeChange(f.figure, f.change) : '-',
    limit(f.figure, f.limit),
    VERDICT_WORDS[f.verdict],
  ]);
  return [
    `against baseline ${escapeText(b.runId, 40)}:`,
    ...columns([['figure', 'run', 'baseline', 'change', 'limit', 'verdict'], ...rows]).map((l) => `  ${l}`),
  ];
}

/**
 * Agrees with the outcome's reason (core/outcome-rules.ts): "none" when the runner defined no
 * threshold (the reason says "no thresholds defined"), never a "-" that reads as "passed".
 */
function thresholdsCell(r: RunnerSummary): string {
  const failed = r.thresholds.filter((t) => !t.ok);
  // Metric names and expressions come from the runners' logs: escaped, and each cut to a readable length.
  if (failed.length > 0) return `failed: ${failed.map((t) => `${escapeText(t.metric, 160)} ${escapeText(t.expression, 60)}`).join(', ')}`;
  // The engine said a check failed without naming it (k6 99, Gatling 2 without a summary entry).
  if (r.exitCode === checksFailedExitCode(r.engine)) return 'failed (not named)';
  if (r.thresholds.length === 0) return 'none';
  return `${r.thresholds.length} passed`;
}

/** Left-aligned columns, two spaces apart, no trailing blanks. */
/** Left-aligned columns, two spaces apart, no trailing blanks; widths in code points (µ, …, ✓ are one each). */
export function columns(rows: string[][]): string[] {
  const length = (cell: string) => [...cell].length;
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => length(row[i] ?? ''))));
  return rows.map((row) =>
    row
      .map((cell, i) => cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - length(cell))))
      .join('  ')
      .trimEnd(),
  );
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function count(n: number): string {
  return integer.format(n);
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(2)} %`;
}

/** "123.4 ms" when exact, "[118.0, 131.2] ms" otherwise. */
function bracket(b: { lo: number; hi: number }): string {
  return ms(b.lo) === ms(b.hi) ? ms(b.hi) : `[${ms(b.lo).replace(/ ms$/, '')}, ${ms(b.hi).replace(/ ms$/, '')}] ms`;
}
