/**
 * The API's answers built from ledger items (resources.ts has their schemas): which fields leave the
 * API, and in what shape. Ledger items never leave it as they are.
 */
import type { LiveFigures } from '../core/live-sample';
import type { RunCost } from '../core/run-cost';
import { Stage } from '../core/status';
import type { RunItem, RunSummary, RunView } from '../ledger/ledger';
import { collectedResult, type CollectRecord } from '../stages/collect';
import { baselineComparison } from '../core/regression';
import { fidelityResource } from './fidelity-resource';
import { outputOf } from '../stages/run-context';
import { measuredStartOf, type StartRecord } from '../stages/start';
import { describeStartSkew, type MeasuredStart } from '../core/start-skew';
import type { RunResource, RunSummaryResource } from './resources';

const STAGE_ORDER = Object.values(Stage);
const iso = (ms: number) => new Date(ms).toISOString();

export function runSummaryResource(run: RunSummary): RunSummaryResource {
  return {
    runId: run.runId,
    ...(run.runName !== undefined ? { name: run.runName } : {}),
    status: run.status,
    ...(run.outcome !== undefined ? { outcome: run.outcome } : {}),
    ...(run.outcomeReason !== undefined ? { reason: run.outcomeReason } : {}),
    trigger: run.trigger,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...(run.decidedAt !== undefined ? { decidedAt: run.decidedAt } : {}),
    ...(run.abortRequestedAt !== undefined ? { abortRequestedAt: run.abortRequestedAt } : {}),
  };
}

export interface RunResourceOptions {
  /** The execution's page in the AWS console (absent locally). */
  consoleUrl?: (executionArn: string) => string;
  /** The cluster's clock (epoch ms), the one the test's times are on. */
  now: () => number;
  /** The test's live figures (liveFigures() of its newest samples), once the runners were read. */
  live?: LiveFigures;
  /** What the run cost so far (cost-resource.ts), when its cost item was read. */
  cost?: RunCost;
}

/** A whole run item as a listing shows it (a 409's `run`): its name from the spec when the item predates `runName`. */
export function runItemSummary(run: RunItem): RunSummaryResource {
  return runSummaryResource({ ...run, runName: run.runName ?? (run.spec as { name?: string }).name });
}

export function runResource(view: RunView, links: RunResourceOptions): RunResource {
  const { run } = view;
  const spec = run.spec as { name?: string; engine?: string; parallelism?: number };
  const started = outputOf<StartRecord>(view, Stage.Start);
  const measured = measuredStartOf(view);
  const results = collectedResult(view);
  const { regression, fidelity } = outputOf<CollectRecord>(view, Stage.Collect) ?? {};
  return {
    ...runItemSummary(run),
    engine: String(spec.engine),
    parallelism: Number(spec.parallelism),
    ...(run.abortRequestedBy !== undefined ? { abortRequestedBy: run.abortRequestedBy } : {}),
    ...(started
      ? {
          test: {
            startedAt: iso(started.startedAt),
            ...(expectedEnd(started) !== undefined ? { expectedEndAt: iso(expectedEnd(started)!) } : {}),
            observedAt: iso(links.now()),
            ...(measured ? { startSkew: startSkewResource(measured) } : {}),
          },
        }
      : {}),
    ...(links.live ? { live: links.live } : {}),
    stages: STAGE_ORDER.flatMap((name) => {
      const s = view.stages[name];
      if (!s) return [];
      return [
        {
          stage: s.stage,
          state: s.state,
          attempts: s.attempts,
          startedAt: s.startedAt,
          ...(s.endedAt ? { endedAt: s.endedAt } : {}),
          ...(s.error ? { error: s.error } : {}),
        },
      ];
    }),
    ...(results ? { results: results as unknown as Record<string, unknown> } : {}),
    ...(regression ? { baseline: baselineComparison(regression) } : {}),
    ...(fidelity ? { fidelity: fidelityResource(fidelity) } : {}),
    ...(links.cost ? { costUsd: links.cost.usd, cost: links.cost } : {}),
    links: {
      self: `/runs/${run.runId}`,
      ...(run.executionArn && links.consoleUrl ? { execution: links.consoleUrl(run.executionArn) } : {}),
    },
  };
}

function startSkewResource(m: MeasuredStart) {
  return {
    skewMs: m.skewMs,
    ...(m.resolutionMs !== undefined ? { resolutionMs: m.resolutionMs } : {}),
    source: m.source,
    runners: Object.fromEntries(Object.entries(m.runners).map(([i, at]) => [i, iso(at)])),
    unseen: m.unseen,
    ...(m.clusters ? { clusters: m.clusters } : {}),
    summary: describeStartSkew(m),
  };
}

/** When the user expects the test to end: its schedule's end, else k6's totalDuration (gracefulStop included). */
function expectedEnd(started: StartRecord): number | undefined {
  return started.scheduledEndAt ?? started.expectedEndAt;
}
