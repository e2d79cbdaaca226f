/**
 * The CLI's picture of a finished run: one row per runner, a total row, and the outcome. Percentiles
 * in the total row are the worst runner's, shown as an upper bound (`≤`), never as a run percentile.
 */
import type { RunResult } from '../../lambdas/core/aggregate';
import { describeExitCode } from '../../lambdas/core/outcome-rules';
import type { Outcome } from '../../lambdas/core/status';

export const SIMULATED_NOTICE = 'simulated metrics (kube-sim): the numbers are synthetic, not measurements';

const HEADER = ['runner', 'exit', 'requests', 'failed', 'mean', 'p95', 'p99', 'thresholds'];

export function formatResultTable(result: RunResult, outcome: Outcome, reason: string): string {
  const rows = result.runners.map((r) => {
    const failedThresholds = r.thresholds.filter((t) => !t.ok);
    return [
      String(r.runner),
      `${r.exitCode} ${describeExitCode(r.exitCode)}`,
      count(r.requests.count),
      count(r.requests.failed),
      r.latency.count === 0 ? '-' : ms(r.latency.sum / r.latency.count),
      r.latency.count === 0 ? '-' : ms(r.latency.p95),
      r.latency.count === 0 ? '-' : ms(r.latency.p99),
      r.thresholds.length === 0
        ? '-'
        : failedThresholds.length === 0
          ? `${r.thresholds.length} passed`
          : `failed: ${failedThresholds.map((t) => `${t.metric} ${t.expression}`).join(', ')}`,
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
    noSamples ? '-' : `≤ ${ms(latency.p95UpperBound)} (worst runner)`,
    noSamples ? '-' : `≤ ${ms(latency.p99UpperBound)} (worst runner)`,
    '',
  ];

  const lines = [
    ...columns([HEADER, ...rows, total]),
    '',
    `latency: min ${noSamples ? '-' : ms(latency.min)}, max ${noSamples ? '-' : ms(latency.max)}, ` +
      `p90 ≤ ${noSamples ? '-' : ms(latency.p90UpperBound)} (worst runner); percentiles are per runner, never averaged`,
    `iterations ${count(result.iterations)}, data received ${bytes(result.dataReceivedBytes)}, sent ${bytes(result.dataSentBytes)}, ` +
      `duration ${(result.durationMs / 1000).toFixed(1)} s`,
    ...(result.duplicateRunners.length > 0 ? [`runners reported twice (last result kept): ${result.duplicateRunners.join(', ')}`] : []),
    ...(result.unexpectedRunners.length > 0 ? [`results from runners never launched (not counted): ${result.unexpectedRunners.join(', ')}`] : []),
    ...(result.simulated ? [SIMULATED_NOTICE] : []),
    `outcome: ${outcome} - ${reason}`,
  ];
  return lines.join('\n') + '\n';
}

/** Left-aligned columns, two spaces apart, no trailing blanks. */
function columns(rows: string[][]): string[] {
  const widths = HEADER.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
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

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
