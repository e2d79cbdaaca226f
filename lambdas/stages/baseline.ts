/**
 * Collect's comparison with the run's baseline (the spec's `baseline`, core/regression.ts): which run
 * it is (the newest SUCCEEDED run of the same series created before this one, or the pinned run id:
 * a run a schedule started is of its schedule's series, any other of its name's),
 * each limited figure's verdict, and what that does to the outcome: a **certain** regression of a run
 * whose runners passed makes it REGRESSED; a possible one is said in the reason and changes nothing;
 * no usable baseline is said too. The baseline's figures are the totals Decide kept on its run item.
 */
import type { RunResult } from '../core/aggregate';
import { comparableResult, compareToBaseline, describeLimit, type ComparedResult, type FigureComparison, type RegressionRecord } from '../core/regression';
import { LAST_SUCCEEDED, parseRegressionLimits, type RegressionLimitsText } from '../core/regression-limits';
import type { Bracket } from '../core/percentile-bracket';
import { Outcome, RunStatus } from '../core/status';
import { RUN_RETENTION_DAYS } from '../ledger/table';
import type { StageDeps } from './deps';

/** The spec's `baseline` as validated. */
export interface BaselineSpec {
  run: string;
  limits: RegressionLimitsText;
}

/** Pages of a name's SUCCEEDED runs read to find the newest one before this run (100 runs each). */
const BASELINE_PAGES = 3;

/** The run being compared: `schedule` when a schedule started it (its trigger's). */
export interface ComparedRun {
  runId: string;
  name: string;
  createdAt: string;
  schedule?: string;
}

/** The run as a comparison reads it from its run item. */
export function comparedRun(runId: string, name: string, item: { createdAt: string; trigger: { schedule?: string } }): ComparedRun {
  return { runId, name, createdAt: item.createdAt, ...(item.trigger.schedule !== undefined ? { schedule: item.trigger.schedule } : {}) };
}

/** The run's comparison with its baseline. */
export async function compareWithBaseline(deps: StageDeps, run: ComparedRun, spec: BaselineSpec, result: RunResult): Promise<RegressionRecord> {
  const found = spec.run === LAST_SUCCEEDED ? await newestSucceededBefore(deps, run) : await resultOf(deps, spec.run);
  if ('none' in found) return { figures: [], none: found.none };
  return { baseline: found.runId, figures: compareToBaseline(result, found.result, parseRegressionLimits(spec.limits)) };
}

type Found = { runId: string; result: ComparedResult } | { none: string };

/**
 * The newest SUCCEEDED run of the run's series before it: of its schedule when a schedule started it
 * (a nightly run is measured against the last nightly one, not against a run of the same name started
 * by hand with other load), else of its name, however it was started.
 */
async function newestSucceededBefore(deps: StageDeps, run: ComparedRun): Promise<Found> {
  const ofSeries = (r: { trigger: { schedule?: string } }) => run.schedule === undefined || r.trigger.schedule === run.schedule;
  let nextToken: string | undefined;
  for (let page = 0; page < BASELINE_PAGES; page++) {
    const listed = await deps.ledger.listRuns({ name: run.name, status: RunStatus.SUCCEEDED, limit: 100, ...(nextToken ? { nextToken } : {}) });
    const earlier = listed.runs.find((r) => r.runId !== run.runId && r.createdAt < run.createdAt && ofSeries(r));
    if (earlier) return resultOf(deps, earlier.runId);
    if (!listed.nextToken) break;
    nextToken = listed.nextToken;
  }
  return { none: run.schedule === undefined ? `no earlier SUCCEEDED run named ${run.name}` : `no earlier SUCCEEDED run of schedule ${run.schedule}` };
}

async function resultOf(deps: StageDeps, runId: string): Promise<Found> {
  const view = await deps.ledger.getRun(runId);
  if (!view) return { none: `baseline run ${runId} is not in the ledger (runs are kept ${RUN_RETENTION_DAYS} days)` };
  const totals = comparableResult(view.run.summary);
  if (!totals) return { none: `baseline run ${runId} has no collected result (it ended ${view.run.outcome ?? view.run.status})` };
  return { runId, result: totals };
}

/**
 * The outcome and the reason's notes after the comparison: REGRESSED (naming each certain figure) when
 * the runners' outcome was SUCCEEDED; else the same outcome, with possible regressions and a missing
 * baseline said.
 */
export function afterComparison(decided: { outcome: Outcome; reason: string }, record: RegressionRecord): { outcome: Outcome; reason: string } {
  if (record.none) return { ...decided, reason: `${decided.reason}; no baseline: ${record.none}` };
  const certain = record.figures.filter((f) => f.verdict === 'certain');
  const possible = record.figures.filter((f) => f.verdict === 'possible');
  const said = (f: FigureComparison, verb: string) =>
    `${f.figure} ${verb}: ${formatValue(f.figure, f.run)} against ${formatValue(f.figure, f.baseline)} in baseline ${record.baseline} (limit ${describeLimit(f.figure, f.limit)})`;
  const notes = possible.map((f) => said(f, 'may have regressed (the brackets leave it open)'));
  if (certain.length > 0 && decided.outcome === Outcome.SUCCEEDED) {
    return { outcome: Outcome.REGRESSED, reason: [...certain.map((f) => said(f, 'regressed')), ...notes].join('; ') };
  }
  const also = certain.map((f) => said(f, 'regressed'));
  return { ...decided, reason: [decided.reason, ...also, ...notes].join('; ') };
}

function formatValue(figure: FigureComparison['figure'], value: number | Bracket): string {
  if (typeof value !== 'number') return `[${round(value.lo)}, ${round(value.hi)}] ms`;
  if (figure === 'errorRate') return `${round(value * 100, 2)} %`;
  if (figure === 'requestRate') return `${round(value)} req/s`;
  return `${round(value)} ms`;
}

function round(n: number, digits = 1): number {
  return Math.round(n * 10 ** digits) / 10 ** digits;
}
