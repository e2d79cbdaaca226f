/**
 * What the report page shows, gathered from the ledger's view of a run (getRun) and its live
 * samples (listSamples): the outcome and its reason, the stages with their times, the test's window,
 * Collect's result (totals, each runner's own figures, the thresholds judged per runner) and the
 * spec. Pure: the page's markup is report-html.ts's, its charts' data report-series.ts's.
 */
import { stringify } from 'yaml';
import type { RunResult } from '../core/aggregate';
import type { LiveSample } from '../core/live-sample';
import type { RunCost } from '../core/run-cost';
import { Stage, type StageState } from '../core/status';
import type { RunnerSummary } from '../core/summary';
import type { RunView } from '../ledger/ledger';
import { collectedResult, type CollectRecord } from '../stages/collect';
import type { FidelityRecord } from '../core/fidelity';
import { outputOf } from '../stages/run-context';
import { measuredStartOf, type StartRecord } from '../stages/start';
import type { MeasuredStart } from '../core/start-skew';
import { reportSeries, type ReportSeries } from './report-series';
import { reportBaseline, reportTrend, type ReportBaseline, type ReportTrend } from './report-trend';
import type { RunFigures } from '../ledger/run-figures';

export interface ReportStage {
  /** A stage's name, or `test (runners)` for the test's own row of the timeline (report-html.ts). */
  stage: string;
  state: StageState;
  attempts: number;
  /** Epoch ms (the ledger's clock); `endMs` is the report's `generatedAt` for a stage still in progress. */
  startMs: number;
  endMs: number;
  ended: boolean;
  error?: string;
  /** What the "took" column says when it is not endMs - startMs (the test row: the runners' own duration). */
  tookMs?: number;
}

export interface ReportThreshold {
  metric: string;
  expression: string;
  /** Runners that judged it (k6 judges thresholds per runner, on its share of the load). */
  runners: number[];
  /** The runners that failed it: the threshold fails the run when any did. */
  failedBy: number[];
}

export interface ReportModel {
  runId: string;
  name: string;
  engine: string;
  parallelism: number;
  status: string;
  outcome?: string;
  reason?: string;
  createdAt: string;
  decidedAt?: string;
  /** The test's window on the cluster's clock (epoch ms), once Start recorded it. */
  test?: { startedAt: number; expectedEndAt?: number; startSkew?: MeasuredStart };
  stages: ReportStage[];
  /** Collect's result; absent for a run that ended before it. */
  result?: RunResult;
  /** The load as delivered against the plan (core/fidelity.ts); absent before Collect. */
  fidelity?: FidelityRecord;
  /** Absent without a result; empty when no runner judged any threshold. */
  thresholds?: ReportThreshold[];
  /** The spec as submitted, as YAML (an inline script is left out: it is not read for the report). */
  specText: string;
  samples: number;
  series: ReportSeries;
  /** The last runs of its name with their figures (report-trend.ts); absent when the history was not read. */
  trend?: ReportTrend;
  /** The run against its spec's baseline, with the deltas; absent when it was not compared. */
  baseline?: ReportBaseline;
  /** When the report was made (epoch ms, the API's clock). */
  generatedAt: number;
  /** What the run cost (report-cost.ts); absent when its cost item was not read. */
  cost?: RunCost;
}

const STAGE_ORDER = Object.values(Stage);

/** Stages that poll until something happens: the ledger holds their last poll's start, so their wait counts from the stage before. */
const POLL_STAGES: ReadonlySet<string> = new Set([Stage.AwaitPrepared, Stage.AwaitReady, Stage.Watch]);

function stagesOf(view: RunView, now: number): ReportStage[] {
  let previousEnd = Number.NaN;
  return STAGE_ORDER.flatMap((name) => {
    const s = view.stages[name];
    if (!s) return [];
    const polled = Date.parse(s.startedAt);
    const startMs = POLL_STAGES.has(name) && previousEnd < polled ? previousEnd : polled;
    const endMs = s.endedAt !== undefined ? Date.parse(s.endedAt) : Math.max(startMs, now);
    previousEnd = endMs;
    return [
      {
        stage: s.stage,
        state: s.state,
        attempts: s.attempts,
        startMs,
        endMs,
        ended: s.endedAt !== undefined,
        ...(s.error ? { error: `${s.error.name}: ${s.error.message}` } : {}),
      },
    ];
  });
}

/** Every distinct threshold (metric + expression), with the runners that judged it and those that failed it. */
export function thresholdsOf(runners: readonly RunnerSummary[]): ReportThreshold[] {
  const byKey = new Map<string, ReportThreshold>();
  for (const r of runners) {
    for (const t of r.thresholds) {
      const key = `${t.metric}\u0000${t.expression}`;
      let entry = byKey.get(key);
      if (!entry) byKey.set(key, (entry = { metric: t.metric, expression: t.expression, runners: [], failedBy: [] }));
      if (!entry.runners.includes(r.runner)) entry.runners.push(r.runner);
      if (!t.ok && !entry.failedBy.includes(r.runner)) entry.failedBy.push(r.runner);
    }
  }
  return [...byKey.values()];
}

/** Shown instead of a value the report leaves out. */
export const HIDDEN = '(hidden)';

/**
 * The spec as the report shows it: `env` values and `-e/--env KEY=VALUE` arguments hidden (keys kept),
 * and the credentials of any URL in it (`scheme://user:pass@host` → `scheme://(hidden)@host`, in an
 * argument or any other field). A report is read by more people than the run's owner, and a test's
 * tokens travel in exactly those (`-e TOKEN=…`, `--out influxdb=http://user:pass@…`); everything else
 * is shown as submitted.
 */
export function specShown(spec: Record<string, unknown>): Record<string, unknown> {
  const shown = withoutUrlCredentials(spec) as Record<string, unknown>;
  const env = spec.env;
  if (env && typeof env === 'object' && !Array.isArray(env)) shown.env = Object.fromEntries(Object.keys(env).map((key) => [key, HIDDEN]));
  if (Array.isArray(shown.arguments)) {
    const args = shown.arguments.map(String);
    shown.arguments = args.map((arg, i) => {
      const flagged = /^(-e|--env)$/.test(args[i - 1] ?? '');
      if (flagged) return hideValue(arg);
      const inline = /^(--env=|-e)(.+)$/.exec(arg);
      return inline && arg !== '-e' ? inline[1] + hideValue(inline[2]!) : arg;
    });
  }
  return shown;
}

/** A URL's user information: after `scheme://`, up to the `@` before the host (no `/`, `?`, `#` or space in between). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** `value` with every string's URL credentials hidden, at any depth (objects, arrays); keys and other values as they are. */
function withoutUrlCredentials(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(URL_CREDENTIALS, `$1${HIDDEN}@`);
  if (Array.isArray(value)) return value.map(withoutUrlCredentials);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutUrlCredentials(v)]));
  return value;
}

/** `KEY=VALUE` → `KEY=(hidden)`; anything else whole. */
function hideValue(text: string): string {
  const eq = text.indexOf('=');
  return eq > 0 ? `${text.slice(0, eq)}=${HIDDEN}` : HIDDEN;
}

/** `history`: the newest runs of the run's name (ledger runHistory), for the trend; `cost`: the run's cost (stages/run-cost-of.ts). */
export function reportModel(view: RunView, samples: readonly LiveSample[], now: number, history?: readonly RunFigures[], cost?: RunCost): ReportModel {
  const { run } = view;
  const baseline = reportBaseline(view);
  const spec = run.spec as { name?: unknown; engine?: unknown; parallelism?: unknown };
  const started = outputOf<StartRecord>(view, Stage.Start);
  const measured = measuredStartOf(view);
  const result = collectedResult(view);
  const name = String(run.runName ?? spec.name ?? run.runId);
  const fidelity = outputOf<CollectRecord>(view, Stage.Collect)?.fidelity;
  return {
    runId: run.runId,
    name,
    engine: String(spec.engine ?? ''),
    parallelism: Number(spec.parallelism ?? 0),
    status: run.status,
    ...(run.outcome !== undefined ? { outcome: run.outcome } : {}),
    ...(run.outcomeReason !== undefined ? { reason: run.outcomeReason } : run.statusReason !== undefined ? { reason: run.statusReason } : {}),
    createdAt: run.createdAt,
    ...(run.decidedAt !== undefined ? { decidedAt: run.decidedAt } : {}),
    ...(started
      ? {
          test: {
            startedAt: started.startedAt,
            ...((started.scheduledEndAt ?? started.expectedEndAt) !== undefined ? { expectedEndAt: (started.scheduledEndAt ?? started.expectedEndAt)! } : {}),
            ...(measured ? { startSkew: measured } : {}),
          },
        }
      : {}),
    stages: stagesOf(view, now),
    ...(result ? { result, thresholds: thresholdsOf(result.runners) } : {}),
    ...(fidelity ? { fidelity } : {}),
    specText: stringify(specShown(run.spec), { lineWidth: 0 }),
    samples: samples.length,
    series: reportSeries(samples),
    ...(history ? { trend: reportTrend(name, history, run.runId) } : {}),
    ...(baseline ? { baseline } : {}),
    generatedAt: now,
    ...(cost ? { cost } : {}),
  };
}
