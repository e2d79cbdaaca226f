/**
 * A test that ended early (architecture §3.6): a runner exited with a code that is not "ran to its end"
 * (k6's exec.test.abort() 108, a signal 105, a script exception, OOM-killed, …). The run cannot finish
 * as planned, but what every runner printed is kept: Watch stops the runners still running (k6: through
 * their REST API, so each prints its partial result), waits for them, and hands over to Collect, which
 * reads every runner's result; the outcome follows from why the test ended (the cause), never from
 * the stops loadplane sent itself.
 */
import { describeExitCode, exitMeaning } from '../core/outcome-rules';
import { Outcome, type Engine } from '../core/status';
import { engineAdapter } from '../engines';
import { ExitMeaning } from '../core/exit-meaning';
import { ranToEnd, runnerList, type RunnerView } from './runners';

/** What Watch records when the test ended early; Collect decides the outcome from it. */
export interface EarlyEnd {
  outcome: Outcome;
  /** Why the test ended: the runners that ended it and their exit codes. */
  reason: string;
  /** Runners loadplane stopped because of it (they printed partial results). */
  stopped: number[];
  /** Runners still running when Watch gave up waiting for them (or could not stop them): they are deleted. */
  cutOff: number[];
}

/** Runners whose newest pod exited without running its test to the end (a disrupted pod is Watch's restart rule's). */
export function endedEarly(engine: Engine, runners: readonly RunnerView[]): RunnerView[] {
  return runners.filter((r) => r.latest?.exitCode !== undefined && !r.latest.disrupted && !ranToEnd(engine, r.latest));
}

/**
 * Why the test ended, from the runners that ended early. A runner that exited with its engine's
 * stopped code (k6 103, stopped through its REST API) after another runner had already ended early
 * was stopped by loadplane: not a cause.
 */
export function earlyEnd(engine: Engine, runners: readonly RunnerView[], early: readonly RunnerView[]): EarlyEnd {
  const stopped = engineAdapter(engine).stoppedExitCode;
  const first = Math.min(...early.filter((r) => r.latest!.exitCode !== stopped).map((r) => finishedAt(r)));
  const byLoadplane = (r: RunnerView) => stopped !== undefined && Number.isFinite(first) && r.latest!.exitCode === stopped && finishedAt(r) >= first;
  const causes = early.filter((r) => !byLoadplane(r));
  const stoppedByLoadplane = early.filter(byLoadplane).map((r) => r.index);
  const cutOff = runners.filter((r) => r.latest?.exitCode === undefined).map((r) => r.index);

  const meanings = causes.map((r) => exitMeaning(r.latest!.exitCode!, engine));
  const outcome =
    meanings.includes(ExitMeaning.scriptAborted) && !meanings.includes(ExitMeaning.failed) && !meanings.includes(ExitMeaning.stopped)
      ? Outcome.ABORTED
      : Outcome.FAILED;
  return { outcome, reason: describeCauses(engine, causes), stopped: stoppedByLoadplane, cutOff };
}

/** `aborted by the script on runner 2 (exit 108: test.abort() called by the script)`, `runner 1 exited 137 (…) before its test's end`. */
function describeCauses(engine: Engine, causes: readonly RunnerView[]): string {
  const byCode = new Map<number, number[]>();
  for (const r of causes) byCode.set(r.latest!.exitCode!, [...(byCode.get(r.latest!.exitCode!) ?? []), r.index]);
  return [...byCode]
    .sort(([a], [b]) => a - b)
    .map(([code, indexes]) => {
      const what = `exit ${code}: ${describeExitCode(code, engine)}`;
      switch (exitMeaning(code, engine)) {
        case ExitMeaning.scriptAborted:
          return `aborted by the script on ${runnerList(indexes)} (${what})`;
        case ExitMeaning.stopped:
          return `${runnerList(indexes)} stopped before the test's end (${what})`;
        default:
          return `${runnerList(indexes)} exited ${code} (${describeExitCode(code, engine)}) before the test's end`;
      }
    })
    .join('; ');
}

/** `; runners 0, 2-3 stopped by loadplane (partial results)`, `; runner 1 still running, deleted`. */
export function earlyEndNotes(ended: EarlyEnd): string[] {
  return [
    ...(ended.stopped.length > 0 ? [`${runnerList(ended.stopped)} stopped by loadplane when the test ended early (partial results)`] : []),
    ...(ended.cutOff.length > 0 ? [`${runnerList(ended.cutOff)} still running when the test ended early, deleted without a result`] : []),
  ];
}

function finishedAt(r: RunnerView): number {
  return r.latest!.finishedAt ?? Number.POSITIVE_INFINITY;
}
