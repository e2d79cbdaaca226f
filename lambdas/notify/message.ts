/**
 * The run's notification, independent of the channel (architecture §5): what Slack and the JSON webhook
 * both say. buildMessage is pure; the Notify stage maps the run item and Collect's result onto
 * MessageInput, and each channel renders the message its own way.
 */
import { describeStartSkew, type MeasuredStart } from '../core/start-skew';
import type { RunResult } from '../core/aggregate';
import { baselineComparison, type BaselineComparison, type RegressionRecord } from '../core/regression';
import type { FidelityRecord } from '../core/fidelity';
import { messageFidelity, type MessageFidelity } from './message-fidelity';
import type { RunCost } from '../core/run-cost';
import { messageCost, type MessageCost } from './message-cost';
import type { Engine, Outcome } from '../core/status';
import type { RunnerSummary } from '../core/summary';

/**
 * What the message needs of Collect's result. A full RunResult fits; so do the totals kept on the
 * run item (no `runners`), in which case the thresholds are reported as unknown.
 */
export type ResultTotals = Pick<RunResult, 'expectedRunners' | 'missingRunners' | 'requests' | 'failedRequests' | 'errorRate' | 'latency' | 'simulated'> & {
  runners?: Pick<RunnerSummary, 'runner' | 'thresholds'>[];
};

/**
 * The clock of the message's times (startedAt, endedAt, and the webhook's sentAt): `real`, or
 * `simulated` locally on kube-sim, where time runs `timeScale` times faster than the wall clock.
 */
export interface MessageClock {
  kind: 'real' | 'simulated';
  timeScale?: number;
}

export interface MessageLinks {
  /** The Step Functions execution in the AWS console. */
  console?: string;
  report?: string;
}

export interface MessageInput {
  runId: string;
  name: string;
  engine: Engine;
  /** The recorded outcome (Decide), never a new one. */
  outcome: Outcome;
  reason: string;
  /** ISO instants: when the run was created and when its outcome was decided. */
  startedAt: string;
  endedAt: string;
  /** The spec's parallelism. */
  expectedRunners: number;
  /** Absent when the run ended before Collect (a bad script, a timeout while preparing, ...). */
  result?: ResultTotals;
  links?: MessageLinks;
  /** Default: real. */
  clock?: MessageClock;
  /** When each runner was seen to start (start-skew.ts); absent when not measured. */
  startSkew?: MeasuredStart;
  /** The comparison with the spec's baseline (stages/baseline.ts); absent when the spec has none or the run was not compared. */
  baseline?: RegressionRecord;
  /** The load as delivered against the plan (core/fidelity.ts); absent before Collect. */
  fidelity?: FidelityRecord;
  /** What the run cost when Notify read it (message-cost.ts); absent when it could not be read. */
  cost?: RunCost;
}

export interface FailedThreshold {
  metric: string;
  expression: string;
  /** Runner indexes that failed it: k6 judges thresholds per runner, on that runner's share of the load. */
  runners: number[];
}

export interface ThresholdsSummary {
  /** Distinct thresholds (metric + expression) over all runners. */
  total: number;
  failed: FailedThreshold[];
}

export interface MessageMetrics {
  requests: number;
  failedRequests: number;
  /** failedRequests / requests, 0..1. */
  errorRate: number;
  /**
   * Where the run's exact p95 lies (ms): percentiles of separate runners cannot be combined, so the
   * runners' percentile grids bound it (core/percentile-bracket.ts); every rendering shows both ends.
   */
  p95Ms: { lo: number; hi: number };
}

export interface MessageStartSkew {
  /** The latest runner start minus the earliest (ms). */
  skewMs: number;
  /** How precisely each start is known (ms); null when not known. */
  resolutionMs: number | null;
  /** How the starts were seen: `k6-status`, `log`. */
  source: string;
  /** Runners whose start was seen. */
  runnersSeen: number;
  /** `start skew 12 ms across 4 runners (measured to within 3 ms, from k6's status)`. */
  text: string;
}

export interface NotificationMessage {
  runId: string;
  name: string;
  engine: Engine;
  outcome: Outcome;
  reason: string;
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  /** `reported` is absent when no result was collected. */
  runners: { expected: number; reported?: number };
  /** Absent when no result was collected. */
  metrics?: MessageMetrics;
  /** Absent when unknown: no result, or only the totals without per-runner thresholds. */
  thresholds?: ThresholdsSummary;
  /** The numbers are synthetic (kube-sim): every rendering must say so. */
  simulated: boolean;
  /** The measured start skew across the runners; absent when not measured. */
  startSkew?: MessageStartSkew;
  /** The run against its baseline, each limited figure's verdict; absent when not compared. */
  baseline?: BaselineComparison;
  /** The load as delivered against the plan; absent when not collected. */
  fidelity?: MessageFidelity;
  /** What the run cost so far (message-cost.ts); absent when not read. */
  cost?: MessageCost;
  links: MessageLinks;
  /** The clock of startedAt and endedAt (and the webhook's sentAt): every rendering of a simulated one says so. */
  clock: MessageClock;
}

export function buildMessage(input: MessageInput): NotificationMessage {
  const { result } = input;
  const thresholds = result?.runners && summarizeThresholds(result.runners);
  return {
    runId: input.runId,
    name: input.name,
    engine: input.engine,
    outcome: input.outcome,
    reason: input.reason,
    startedAt: input.startedAt,
    endedAt: input.endedAt,
    durationSeconds: secondsBetween(input.startedAt, input.endedAt),
    runners: {
      expected: input.expectedRunners,
      ...(result ? { reported: result.expectedRunners - result.missingRunners.length } : {}),
    },
    ...(result
      ? {
          metrics: {
            requests: result.requests,
            failedRequests: result.failedRequests,
            errorRate: result.errorRate,
            p95Ms: { ...result.latency.p95 },
          },
        }
      : {}),
    ...(thresholds ? { thresholds } : {}),
    simulated: result?.simulated ?? false,
    ...(input.startSkew ? { startSkew: messageStartSkew(input.startSkew) } : {}),
    ...(input.baseline ? { baseline: baselineComparison(input.baseline) } : {}),
    ...(input.fidelity ? { fidelity: messageFidelity(input.fidelity) } : {}),
    ...(input.cost ? { cost: messageCost(input.cost) } : {}),
    links: { ...input.links },
    clock: input.clock ? { ...input.clock } : { kind: 'real' },
  };
}

/** Whole seconds; 0 for unparsable or reversed instants rather than a negative or NaN duration. */
function secondsBetween(startedAt: string, endedAt: string): number {
  const ms = Date.parse(endedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms / 1000) : 0;
}

/** A threshold fails the run when any runner failed it; each is listed once, with the runners that failed it. */
function summarizeThresholds(runners: NonNullable<ResultTotals['runners']>): ThresholdsSummary {
  const byKey = new Map<string, FailedThreshold>();
  for (const runner of runners) {
    for (const t of runner.thresholds) {
      const key = `${t.metric}\u0000${t.expression}`;
      let entry = byKey.get(key);
      if (!entry) byKey.set(key, (entry = { metric: t.metric, expression: t.expression, runners: [] }));
      if (!t.ok && !entry.runners.includes(runner.runner)) entry.runners.push(runner.runner);
    }
  }
  const failed = [...byKey.values()].filter((t) => t.runners.length > 0);
  for (const t of failed) t.runners.sort((a, b) => a - b);
  return { total: byKey.size, failed };
}

function messageStartSkew(m: MeasuredStart): MessageStartSkew {
  return { skewMs: m.skewMs, resolutionMs: m.resolutionMs ?? null, source: m.source, runnersSeen: Object.keys(m.runners).length, text: describeStartSkew(m) };
}
