/**
 * Collect (architecture §3.7): reads each runner's result from the end of its log, as its engine's
 * adapter finds it (k6: the summary export the runner script prints; Gatling: its console summary),
 * and aggregates: counts summed, min/max exact, means weighted, percentiles kept per runner and the
 * run's bracketed from them (percentile-bracket.ts), never averaged, and records the run's `final` live
 * sample from them (live-metrics.ts). The full result stays in the ledger; the state machine gets only
 * the verdict, so the execution's payload stays small whatever N is. A replaced runner
 * (`onRunnerRestart: restart`) reports what its newest pod, the replacement, ran: its whole share;
 * the reason says which runners were replaced.
 */
import { aggregateResults, storedRunResult, type RunResult } from '../core/aggregate';
import type { RunView } from '../ledger/ledger';
import { isRetryable } from '../core/errors';
import { measuredStart, StartSource, type MeasuredStart, type ObservedStart } from '../core/start-skew';
import { escapeText } from '../core/excerpt';
import { exitRanToEnd, outcomeFromRunners } from '../core/outcome-rules';
import { countOf, every } from '../core/plural';
import { replacementNote } from '../core/restart';
import { done, type StepResult } from '../core/step';
import type { RunnerSummary } from '../core/summary';
import { engineAdapter } from '../engines';
import { Outcome, RunStatus, Stage } from '../core/status';
import { inBatches } from './in-batches';
import { recordFinalSample } from './live-metrics';
import type { StageDeps } from './deps';
import { abortRequest, clusterOf, loadRun, outputOf, requireOpenRun, requireOutput, type RunContext } from './run-context';
import { runOnceReading } from './run-once';
import { observeRunners, runnerResultFromLog, runningAt, type RunnerView } from './runners';
import { withClusterSkews, type StartRecord } from './start';
import type { EngineAdapter } from '../engines';
import type { RegressionRecord } from '../core/regression';
import { afterComparison, compareWithBaseline, comparedRun } from './baseline';
import { earlyEndNotes, type EarlyEnd } from './early-end';
import type { CpuThrottling } from '../core/cpu-throttling';
import { afterFidelity, type FidelityRecord } from '../core/fidelity';
import { runFidelity, runnerCpuFromLog } from './fidelity';
import type { WatchRecord } from './watch';

/** How much of a parser's message a reason carries per runner (at most three runners are named). */
const UNREADABLE_MESSAGE_CHARS = 200;

export interface CollectRecord extends StepResult {
  result: RunResult;
  /** Engines whose runners start themselves (Gatling): each runner's start as its log shows it (measuredStartOf reads it). */
  measuredStart?: MeasuredStart;
  /** The spec's `baseline`: the comparison with it (baseline.ts). */
  regression?: RegressionRecord;
  /** The load as delivered against the plan, per runner and for the run (fidelity.ts); absent in records older than it. */
  fidelity?: FidelityRecord;
}

/** The run's collected result, as recorded (an older record's shape read as today's), or undefined before Collect. */
export function collectedResult(view: RunView): RunResult | undefined {
  const result = outputOf<CollectRecord>(view, Stage.Collect)?.result;
  return result && storedRunResult(result);
}

export async function collect(deps: StageDeps, runId: string): Promise<StepResult> {
  const {
    result: _result,
    measuredStart: _measured,
    regression: _regression,
    fidelity: _fidelity,
    ...verdict
  } = await runOnceReading<CollectRecord, RunContext>(
    deps,
    runId,
    Stage.Collect,
    () => loadRun(deps, runId),
    async (_attempt, run) => {
      requireOpenRun(run.view, Stage.Collect);
      // Only once every runner has finished (or was told to stop): a result read mid-test would be recorded for good.
      requireOutput(run.view, Stage.Watch, Stage.Collect);
      // The status and the runners' state are independent: one round trip for both.
      const [, runners] = await Promise.all([deps.ledger.setStatus(runId, RunStatus.COLLECTING), observeRunners(run)]);
      const engine = engineAdapter(run.spec.engine);
      // The newest pod only: an evicted pod's log has no result, and its replacement re-ran the share.
      // A runner whose log holds a result that cannot be read (an unexpected shape) says why, in the reason.
      const unreadable: { runner: number; note: string }[] = [];
      // A runner whose log holds no result but says why (k6: an export it could not write).
      const noResult = new Map<number, string>();
      // Each runner's CPU over its test, from the runner script's cpu.stat line in the same log tail (fidelity.ts).
      const cpu = new Map<number, CpuThrottling>();
      // The runners' starts from their logs, read alongside the results (startsFromLogs, below).
      const startsRead = startsFromLogs(run, engine, runners);
      startsRead.catch(() => undefined); // awaited below, unless the results' read fails first
      const summaries = await inBatches(runners, async (r): Promise<RunnerSummary | undefined> => {
        const pod = r.latest;
        if (pod?.exitCode === undefined) return undefined;
        let log: string;
        try {
          const at = clusterOf(run, r.index);
          log = await at.client.podLogTail(at.namespace, pod.name, engine.resultLogLines);
        } catch (err) {
          // A log that is gone (pod deleted, node lost) is a runner without a result, reported as such.
          if (isRetryable(err)) throw err;
          return undefined;
        }
        const throttling = runnerCpuFromLog(log);
        if (throttling) cpu.set(r.index, throttling);
        try {
          const summary = runnerResultFromLog(engine, r.index, { ...pod, exitCode: pod.exitCode }, log);
          // No result: the engine's own words for why, for the reason (engine-adapter.ts missingResultReason).
          const why = summary === undefined ? engine.missingResultReason?.(log) : undefined;
          if (why !== undefined) noResult.set(r.index, why);
          return summary;
        } catch (err) {
          unreadable.push({
            runner: r.index,
            note: `runner ${r.index}'s result could not be read (${escapeText((err as Error).message, UNREADABLE_MESSAGE_CHARS)})`,
          });
          return undefined;
        }
      });
      const measured = await startsRead;
      const result = aggregateResults(
        run.spec.parallelism,
        summaries.filter((s): s is RunnerSummary => s !== undefined),
      );
      // Best effort, and the same sample again on a retry (recordFinalSample: at the result's duration,
      // or just after the newest live sample; a retry finds its own final there).
      await recordFinalSample(deps, runId, result);
      // An abort wins only over a test still running when it was asked for (runners.ts, runningAt):
      // one that came after every runner had finished changes nothing of what the test did.
      const abort = abortRequest(run);
      const stopped = abort !== undefined && runningAt(runners, abort.at).length > 0;
      // A runner ended the test early (Watch's record, early-end.ts): the outcome is why it ended.
      const ended = outputOf<WatchRecord>(run.view, Stage.Watch)?.endedEarly;
      const decided = stopped
        ? { outcome: Outcome.ABORTED, reason: `aborted by ${abort.by}; partial results from ${countOf(result.runners.length, run.spec.parallelism, 'runner')}` }
        : ended
          ? earlyEndDecision(ended, result, noResult, run.spec.parallelism)
          : withLateAbort(outcomeFromRunners(result, noResult), abort);
      // A run with a baseline whose test ran to its end (SUCCEEDED or THRESHOLDS_FAILED): compared
      // figure by figure (baseline.ts); a failed, aborted or cut-short run is no measure of speed.
      const baseline = run.spec.baseline;
      const testRanToEnd = decided.outcome === Outcome.SUCCEEDED || decided.outcome === Outcome.THRESHOLDS_FAILED;
      const regression =
        baseline && testRanToEnd && result.runners.length > 0
          ? await compareWithBaseline(deps, comparedRun(runId, run.spec.name, run.view.run), baseline, result)
          : undefined;
      // The load as delivered against the plan; the spec's fidelity rule may fail a run whose runners passed.
      const fidelity = runFidelity(run, runners, result, cpu, measured);
      const { outcome, reason } = afterFidelity(regression ? afterComparison(decided, regression) : decided, fidelity);
      const replaced = replacementNote(
        runners.map((r) => ({ index: r.index, times: Math.max(0, r.pods.length - 1), completed: result.runners.some((s) => s.runner === r.index) })),
      );
      // By runner index (the logs are read concurrently), three at most, then how many more.
      const unread = unreadable.sort((a, b) => a.runner - b.runner).map((u) => u.note);
      const notes = [
        ...(replaced ? [replaced] : []),
        ...unread.slice(0, 3),
        ...(unread.length > 3 ? [`and ${unread.length - 3} more unreadable results`] : []),
      ];
      return {
        ...done(),
        outcome,
        reason: [reason, ...notes].join('; '),
        result,
        ...(measured ? { measuredStart: measured } : {}),
        ...(regression ? { regression } : {}),
        fidelity,
      };
    },
  );
  return verdict;
}

// --- Measured start from the runners' logs (engines with startFromLog) ---

/** How much of a runner's log head is read for its start line: it comes within the first few lines. */
const START_LOG_HEAD_BYTES = 16 * 1024;

/**
 * The run's measured start from each runner's log head (timestamped), for an engine whose runners
 * start themselves (EngineAdapter.startFromLog) when Start measured none: a runner is seen to have
 * started at its start line's timestamp, and not before the line before it nor the start instant.
 * The pod read is the one Start recorded as started (a replacement's later start is not the run's
 * start skew; an original that is gone leaves its runner unseen), else the newest. Best effort: a head
 * that cannot be read, or holds no start line, leaves its runner unseen; only a retryable error fails
 * Collect (as the result read's does). Undefined when nothing was seen.
 */
async function startsFromLogs(run: RunContext, engine: EngineAdapter, runners: RunnerView[]): Promise<MeasuredStart | undefined> {
  const startRecord = outputOf<StartRecord>(run.view, Stage.Start);
  if (!engine.startFromLog || startRecord?.measured) return undefined;
  const startInstant = startRecord?.startedAt;
  const observed = await inBatches(runners, async (r): Promise<ObservedStart | undefined> => {
    const startedUid = startRecord?.startedPods[r.index];
    const pod = startedUid === undefined ? r.latest : r.pods.find((p) => p.uid === startedUid);
    if (pod === undefined) return undefined;
    let head: string;
    try {
      const at = clusterOf(run, r.index);
      head = await at.client.podLogHead(at.namespace, pod.name, START_LOG_HEAD_BYTES, { timestamps: true });
    } catch (err) {
      if (isRetryable(err)) throw err;
      return undefined;
    }
    const start = engine.startFromLog!(head);
    if (!start) return undefined;
    const bounds = [start.after, startInstant].filter((t): t is number => t !== undefined && t <= start.at);
    return { runner: r.index, seenAt: start.at, ...(bounds.length > 0 ? { notBefore: Math.max(...bounds) } : {}) };
  });
  return withClusterSkews(
    run,
    measuredStart(
      StartSource.log,
      run.spec.parallelism,
      observed.filter((o): o is ObservedStart => o !== undefined),
    ),
  );
}

// --- end of the measured start ---

/**
 * The test ended early: the cause's outcome and reason, then who loadplane stopped or cut off, how many
 * runners reported, and what the results of the runners that ran to their end say (failed thresholds,
 * runners without a result, besides those cut off).
 */
function earlyEndDecision(ended: EarlyEnd, result: RunResult, noResult: ReadonlyMap<number, string>, runners: number): { outcome: Outcome; reason: string } {
  const ranToEnd = result.runners.filter((r) => exitRanToEnd(r.exitCode, r.engine));
  const missing = result.missingRunners.filter((i) => !ended.cutOff.includes(i));
  const rest = ranToEnd.length + missing.length > 0 ? outcomeFromRunners({ ...result, runners: ranToEnd, missingRunners: missing }, noResult) : undefined;
  const also = rest && rest.outcome !== Outcome.SUCCEEDED ? [`also ${rest.reason}`] : [];
  return {
    outcome: ended.outcome,
    reason: [
      `run: ${ended.reason}`,
      ...earlyEndNotes(ended),
      `results from ${result.runners.length === runners ? every(runners, 'runner') : countOf(result.runners.length, runners, 'runner')}`,
      ...also,
    ].join('; '),
  };
}

function withLateAbort(decision: { outcome: Outcome; reason: string }, abort: { by: string } | undefined): { outcome: Outcome; reason: string } {
  return abort ? { ...decision, reason: `${decision.reason}; abort requested by ${abort.by} after the test had ended` } : decision;
}
