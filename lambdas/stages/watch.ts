/**
 * Watch (DESIGN §3.6): polls the runners (two list calls) and answers `{ phase, nextPollSeconds }`.
 * Done when every runner exited 0 or 99 (99 is k6's "thresholds failed": the test ran, Collect and
 * Decide report it). Any other exit code, a runner evicted or restarted under `onRunnerRestart: fail`,
 * or a runner Job deleted behind our back ends the run FAILED at once; the run deadline ends it
 * TIMED_OUT. Under `restart`, a replacement pod is started as soon as it is ready.
 */
import { formatDuration } from '../core/duration';
import { describeExitCode, THRESHOLDS_FAILED_EXIT_CODE } from '../core/outcome-rules';
import { nextPollSeconds } from '../core/polling';
import { done, endsRun, StepPhase, waiting, type StepResult } from '../core/step';
import { Engine, Outcome, RunnerRestartPolicy, Stage } from '../core/status';
import type { StageDeps } from './deps';
import { patchK6Status } from './k6-api';
import { abortRequest, loadRun, outputOf, requireOutput, type RunContext } from './run-context';
import { runOnce } from './run-once';
import { observeRunners, runnerList, type RunnerView } from './runners';
import type { StartRecord } from './start';

const FINISHED_EXIT_CODES = new Set([0, THRESHOLDS_FAILED_EXIT_CODE]);
/** A runner told to stop exits within seconds: poll densely meanwhile, for at most ABORT_GRACE_MS. */
const ABORT_POLL_SECONDS = 2;
/** Ledger clock, like the abort request's time. */
const ABORT_GRACE_MS = 2 * 60_000;

export async function watch(deps: StageDeps, runId: string): Promise<StepResult> {
  const run = await loadRun(deps, runId);
  const recorded = outputOf<StepResult>(run.view, Stage.Watch);
  if (recorded) return recorded;
  const started = requireOutput<StartRecord>(run.view, Stage.Start, Stage.Watch);
  const runners = await observeRunners(run);
  const abort = abortRequest(run);
  if (abort) return stopForAbort(deps, run, runners, started, abort);

  const failure = runnerFailure(run, runners, started);
  if (failure) return endsRun(StepPhase.failed, Outcome.FAILED, `run: ${failure}`);

  if (run.spec.onRunnerRestart === RunnerRestartPolicy.restart) await startReplacements(run, runners, started);

  const finished = runners.filter((r) => r.latest?.exitCode !== undefined && FINISHED_EXIT_CODES.has(r.latest.exitCode));
  if (finished.length === runners.length) return runOnce(deps, runId, Stage.Watch, async () => done());

  const now = deps.now();
  if (now >= started.runBy) {
    const still = runners.length - finished.length;
    return endsRun(
      StepPhase.timed_out,
      Outcome.TIMED_OUT,
      `run: ${still} of ${runners.length} runners still running at the run deadline (${formatDuration(Math.round((started.runBy - started.startedAt) / 1000))} after start)`,
    );
  }
  return waiting(
    nextPollSeconds({
      phase: 'run',
      now,
      phaseStartedAt: started.startedAt,
      deadline: started.runBy,
      ...(started.expectedEndAt !== undefined ? { expectedEndAt: started.expectedEndAt } : {}),
    }),
  );
}

/**
 * Abort, the graceful way (DESIGN §3): every k6 runner still running is told to stop (`stopped: true`,
 * idempotent), and Watch keeps polling until all have exited, so Collect reads their partial results
 * and the run ends ABORTED. Runners that do not stop by the run deadline are left to Cleanup.
 */
async function stopForAbort(
  deps: StageDeps,
  run: RunContext,
  runners: RunnerView[],
  started: StartRecord,
  abort: { by: string; at: number },
): Promise<StepResult> {
  const running = runners.filter((r) => r.latest && r.latest.exitCode === undefined);
  if (running.length === 0) return runOnce(deps, run.runId, Stage.Watch, async () => done());
  const givenUp = deps.ledger.now() - abort.at > ABORT_GRACE_MS || deps.now() >= started.runBy;
  if (run.spec.engine !== Engine.k6 || givenUp) {
    return endsRun(StepPhase.aborted, Outcome.ABORTED, `run: aborted by ${abort.by}; ${running.length} of ${runners.length} runners did not stop and are deleted`);
  }
  await Promise.all(running.filter((r) => r.latest!.ready).map((r) => patchK6Status(run.cluster, run.namespace, r.latest!.name, { stopped: true })));
  return waiting(ABORT_POLL_SECONDS);
}

/** Why the run cannot succeed any more, or undefined. */
function runnerFailure(run: RunContext, runners: RunnerView[], started: StartRecord): string | undefined {
  const deleted = runners.filter((r) => !r.job);
  if (deleted.length > 0) return `the Job of ${runnerList(deleted.map((r) => r.index))} was deleted while the test ran`;

  const failFast = run.spec.onRunnerRestart === RunnerRestartPolicy.fail;
  for (const runner of runners) {
    const pod = runner.latest;
    const replaced = pod !== undefined && pod.uid !== started.startedPods[runner.index];
    if (failFast && (replaced || runner.pods.some((p) => p.disrupted))) {
      return `runner ${runner.index} was evicted or restarted (its pod changed); onRunnerRestart is fail, so the run stops rather than finish short-handed`;
    }
    if (pod?.disrupted) continue; // restart: the Job replaces the pod; its replacement is started below
    if (pod?.exitCode !== undefined && !FINISHED_EXIT_CODES.has(pod.exitCode)) {
      return `runner ${runner.index} exited ${pod.exitCode} (${describeExitCode(pod.exitCode)})`;
    }
    if (runner.job?.failed && (pod?.exitCode === undefined || !FINISHED_EXIT_CODES.has(pod.exitCode))) {
      return `runner ${runner.index}'s Job failed (${runner.job.reason ?? 'no reason given'}${runner.job.message ? `: ${runner.job.message}` : ''})`;
    }
  }
  return undefined;
}

/** `onRunnerRestart: restart`: a ready replacement pod comes back paused; unpausing is idempotent. */
async function startReplacements(run: RunContext, runners: RunnerView[], started: StartRecord): Promise<void> {
  if (run.spec.engine !== Engine.k6) return;
  const replacements = runners.filter((r) => r.latest?.ready && r.latest.uid !== started.startedPods[r.index]);
  await Promise.all(replacements.map((r) => patchK6Status(run.cluster, run.namespace, r.latest!.name, { paused: false })));
}
