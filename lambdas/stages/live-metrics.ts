/**
 * Live samples (core/live-sample.ts, architecture §3.6): Watch's poll, while the test runs, reads every
 * running runner's figures through its engine's adapter (k6: `GET /v1/metrics`; Gatling: its periodic
 * console block) in one batch and records one sample in the ledger; Collect records the `final` one
 * from the runners' results. Samples go only to the ledger (`samples#<runId>`): Watch's and Collect's
 * outputs, which travel through the state machine, do not change.
 *
 * Best effort, all of it: a runner that does not answer within the batch's budget (or at all) is left
 * out of the sums (`answered < runners`, its p95 null); a read or a write that fails is logged and
 * never fails the stage or changes its answer.
 */
import type { RunResult } from '../core/aggregate';
import type { LiveSample } from '../core/live-sample';
import { Stage } from '../core/status';
import type { RunnerSummary } from '../core/summary';
import { engineAdapter, type EngineAdapter, type LiveReading } from '../engines';
import { settledWithin } from '../engines/within-budget';
import type { StageDeps } from './deps';
import { clusterOf, type RunContext } from './run-context';
import { ranToEnd, runnerResultFromLog, type RunnerView } from './runners';
import type { StartRecord } from './start';

/**
 * Real ms the runners' answers are waited for, the whole batch: far below Watch's 60 s Task timeout
 * (its two list calls may take their own retries), and far above what a runner's REST API or a log
 * tail takes through the API server.
 */
export const LIVE_READ_BUDGET_MS = 5_000;

const sum = (readings: readonly (LiveReading | undefined)[], pick: (r: LiveReading) => number): number =>
  readings.reduce((total, r) => total + (r ? pick(r) : 0), 0);

/** The sample of one read: sums over the runners that answered; p95 per runner index. */
export function liveSample(at: number, elapsedMs: number, readings: readonly (LiveReading | undefined)[]): LiveSample {
  return {
    at,
    elapsedMs: Math.max(0, elapsedMs),
    source: 'live',
    answered: readings.filter((r) => r !== undefined).length,
    runners: readings.length,
    requests: sum(readings, (r) => r.requests),
    failed: sum(readings, (r) => r.failed),
    iterations: sum(readings, (r) => r.iterations),
    vus: sum(readings, (r) => r.vus),
    dataReceivedBytes: sum(readings, (r) => r.dataReceivedBytes),
    dataSentBytes: sum(readings, (r) => r.dataSentBytes),
    p95: readings.map((r) => r?.p95 ?? null),
  };
}

/**
 * Reads the running runners (a pod that runs, its container not exited) and records one live sample;
 * none when no runner answered. A runner that already ran to its end (runners end at different times:
 * iteration-based executors, Gatling's injection profiles) has no REST API any more: its figures are
 * its result, read from its log as Collect reads it, so the sums keep covering every runner. Never throws.
 */
export async function recordLiveSample(
  deps: StageDeps,
  run: RunContext,
  runners: readonly RunnerView[],
  started: StartRecord,
  budgetMs = LIVE_READ_BUDGET_MS,
): Promise<void> {
  const log = (message: string, fields: Record<string, unknown> = {}) => deps.log({ runId: run.runId, stage: Stage.Watch, message, ...fields });
  let sample: LiveSample;
  try {
    const engine = engineAdapter(run.spec.engine);
    const running = runners.filter((r) => r.latest?.phase === 'Running' && r.latest.exitCode === undefined && !r.latest.terminating);
    const finished = runners.filter((r) => ranToEnd(run.spec.engine, r.latest));
    const [read, results] = await Promise.all([
      liveMetricsEverywhere(run, engine, running, budgetMs),
      settledWithin(
        finished.map((r) => resultReading(run, engine, r).catch(() => undefined)),
        budgetMs,
        undefined,
      ),
    ]);
    const readings: (LiveReading | undefined)[] = runners.map(() => undefined);
    running.forEach((r, i) => (readings[r.index] = read[i]));
    finished.forEach((r, i) => (readings[r.index] = results[i]));
    const now = deps.now();
    sample = liveSample(now, now - started.startedAt, readings);
  } catch (err) {
    log('live metrics not read', { error: errorName(err) });
    return;
  }
  if (sample.answered < sample.runners) {
    log('live metrics: not every runner answered', { answered: sample.answered, runners: sample.runners });
  }
  if (sample.answered === 0) return;
  await write(deps, run.runId, sample, Stage.Watch);
}

/**
 * The running runners' live figures, one batch per cluster, the batches at once and within the same
 * budget; in the order of `running`.
 */
async function liveMetricsEverywhere(
  run: RunContext,
  engine: EngineAdapter,
  running: readonly RunnerView[],
  budgetMs: number,
): Promise<(LiveReading | undefined)[]> {
  const readings: (LiveReading | undefined)[] = running.map(() => undefined);
  await Promise.all(
    run.clusters.map(async (c) => {
      const here = running.flatMap((r, i) => (clusterOf(run, r.index) === c ? [i] : []));
      if (here.length === 0) return;
      const read = await engine.liveMetrics(
        c.client,
        c.namespace,
        here.map((i) => running[i]!.latest!.name),
        budgetMs,
      );
      here.forEach((i, k) => (readings[i] = read[k]));
    }),
  );
  return readings;
}

/** A finished runner's figures: its result from its log (undefined when it printed none). */
async function resultReading(run: RunContext, engine: EngineAdapter, runner: RunnerView): Promise<LiveReading | undefined> {
  const pod = runner.latest!;
  const at = clusterOf(run, runner.index);
  const log = await at.client.podLogTail(at.namespace, pod.name, engine.resultLogLines);
  const summary = runnerResultFromLog(engine, runner.index, { ...pod, exitCode: pod.exitCode! }, log);
  return summary && readingOf(summary);
}

/** A runner's result as a live reading: its final counters, no VUs running. */
function readingOf(summary: RunnerSummary): LiveReading {
  return {
    requests: summary.requests.count,
    failed: summary.requests.failed,
    iterations: summary.iterations,
    vus: 0,
    dataReceivedBytes: summary.dataReceivedBytes,
    dataSentBytes: summary.dataSentBytes,
    p95: summary.latency.count > 0 ? summary.latency.p95 : null,
  };
}

/**
 * Collect's `final` sample: the sums of the run's result (so they equal Collect's totals), each
 * runner's own p95 from its result (null for a runner without one), VUs 0, at the test's duration as
 * the result says — or just after the newest live sample when a runner was read later than that (k6's
 * teardown, a runner that started late), so the final is always the series' last point. A retried
 * Collect finds its own final there and writes the same sample over it. Never throws.
 */
export async function recordFinalSample(deps: StageDeps, runId: string, result: RunResult): Promise<void> {
  // No runner reported: a sample of zeros would read as the load dropping to nothing.
  if (result.runners.length === 0) return;
  let elapsedMs = result.durationMs;
  try {
    const [newest] = await deps.ledger.listSamples(runId, { newest: 1 });
    if (newest) elapsedMs = newest.source === 'final' ? newest.elapsedMs : Math.max(elapsedMs, newest.elapsedMs + 1);
  } catch (err) {
    deps.log({ runId, stage: Stage.Collect, message: 'samples not read: the final sample goes at the result duration', error: errorName(err) });
  }
  const p95: (number | null)[] = Array.from({ length: result.expectedRunners }, () => null);
  for (const r of result.runners) if (r.latency.count > 0) p95[r.runner] = r.latency.p95;
  const sample: LiveSample = {
    at: deps.now(),
    elapsedMs,
    source: 'final',
    answered: result.runners.length,
    runners: result.expectedRunners,
    requests: result.requests,
    failed: result.failedRequests,
    iterations: result.iterations,
    vus: 0,
    dataReceivedBytes: result.dataReceivedBytes,
    dataSentBytes: result.dataSentBytes,
    p95,
  };
  await write(deps, runId, sample, Stage.Collect);
}

async function write(deps: StageDeps, runId: string, sample: LiveSample, stage: Stage): Promise<void> {
  try {
    await deps.ledger.recordSample(runId, sample);
  } catch (err) {
    deps.log({ runId, stage, message: `${sample.source} sample not recorded`, error: errorName(err) });
  }
}

/** The error's name only: a message may carry an endpoint or a table name, which logs never show. */
function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
