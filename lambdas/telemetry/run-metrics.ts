/**
 * The control plane's metrics (architecture §8 Telemetry), derived from what an invocation did, never passed through
 * the stages: the stages it completed and began (stage-activity.ts), how long it took and how it
 * ended. Names and dimensions (namespace `loadplane`, dimension `service` always):
 *
 * - RunsStarted (Count): Admit completed, once per run.
 * - RunsEnded (Count) by Outcome: Decide completed, once per run, whoever decided (execution or reaper).
 * - Notifications (Count) by Result: each channel's result when Notify completed (sent, already-sent,
 *   suppressed, not-configured, misconfigured, rejected, unknown…, lambdas/stages/notify.ts).
 * - StageRetries (Count) by Stage: a stage begun on an attempt after its first (a Task retry, a
 *   timed-out invocation's successor, a lease taken over).
 * - StageDuration (Milliseconds) by Stage: every invocation of a known stage (the reaper and the
 *   sweeper as Stage `Reaper` and `Sweeper`); a payload naming no stage gets none (its name is input).
 * - CruisePolls (Count): Watch answered `cruising`, the normal path of a long test (architecture §3.6).
 * - ColdStart (Count) by function_name: the first invocation of a container (invocation.ts). The
 *   same metric as Powertools' captureColdStartMetric() (name, unit, dimension), but published here
 *   with the others: Powertools' publishes it at once as a single metric, a document without the run
 *   id and stage every other line carries (and its cold-start flag is not public).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { StepPhase } from '../core/step';
import { OUTCOMES, Stage } from '../core/status';
import type { MetricPoint } from './metric-points';
import type { StageActivity } from './stage-activity';

const STAGES = new Set<string>(Object.values(Stage));
const KNOWN_OUTCOMES = new Set<string>(OUTCOMES);

const count = (name: string, dimensions: Record<string, string> = {}, value = 1): MetricPoint => ({ name, unit: MetricUnit.Count, value, dimensions });

/** The run metrics of the stages an invocation began and completed. */
export function activityMetrics(activity: StageActivity): MetricPoint[] {
  const points: MetricPoint[] = [];
  for (const begin of activity.begun) if (begin.attempt > 1 || begin.tookOver) points.push(count('StageRetries', { Stage: begin.stage }));
  for (const { stage, output } of activity.completed) {
    if (stage === Stage.Admit) points.push(count('RunsStarted'));
    if (stage === Stage.Decide) {
      const outcome = (output as { outcome?: unknown } | null)?.outcome;
      if (typeof outcome === 'string' && KNOWN_OUTCOMES.has(outcome)) points.push(count('RunsEnded', { Outcome: outcome }));
    }
    if (stage === Stage.Notify) points.push(...notificationPoints(output));
  }
  return points;
}

/** One point per result, counting its channels. */
function notificationPoints(output: unknown): MetricPoint[] {
  const channels = (output as { channels?: Record<string, unknown> } | null)?.channels ?? {};
  const byResult = new Map<string, number>();
  for (const result of Object.values(channels)) if (typeof result === 'string') byResult.set(result, (byResult.get(result) ?? 0) + 1);
  return [...byResult].map(([result, n]) => count('Notifications', { Result: result }, n));
}

/** A container's first invocation; `function_name` as Powertools names it, where the context names the function. */
export function coldStartMetric(functionName: string | undefined): MetricPoint {
  return count('ColdStart', functionName ? { function_name: functionName } : {});
}

/**
 * What the invocation itself adds: its duration by Stage (`stage` must be a known stage or the
 * reaper's or sweeper's own name) and a cruise poll.
 */
export function invocationMetrics(stage: string | undefined, durationMs: number, answer: unknown): MetricPoint[] {
  const points: MetricPoint[] = [];
  if (stage !== undefined && (STAGES.has(stage) || stage === 'Reaper' || stage === 'Sweeper')) {
    points.push({ name: 'StageDuration', unit: MetricUnit.Milliseconds, value: Math.round(durationMs), dimensions: { Stage: stage } });
  }
  if ((answer as { phase?: unknown } | undefined)?.phase === StepPhase.cruising) points.push(count('CruisePolls'));
  return points;
}
