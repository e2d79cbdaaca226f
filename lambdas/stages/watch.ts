/**
 * Watch (architecture §3.6): polls the runners (two list calls) and answers `{ phase, nextPollSeconds }`:
 * `waiting` near the test's end (a Wait in the run's execution), `cruising` while the next poll is at
 * least the cruise interval away (the polls go on in a cruise window, a child execution of their own,
 * so a long test's polls are not the run's history, and no poll is an error: polling.ts).
 * While the test runs, each poll also records a live sample of the runners' figures in the ledger
 * (live-metrics.ts: one batch of reads, best effort, never part of the answer).
 * Done when every runner's test ran to its end (exit 0, or a code that says "a check failed": k6 99
 * and 110, Gatling 2; Collect and Decide report those). A runner that exited with any other code ended
 * the test early: the others are stopped (k6: gracefully, partial results kept) and Collect reads
 * every runner's result (windDown, early-end.ts). A runner evicted or restarted under
 * `onRunnerRestart: fail`, or a runner Job deleted behind our back, ends the run FAILED at once; the
 * run deadline ends it TIMED_OUT.
 *
 * Under `restart` (lambdas/core/restart.ts) a replacement pod re-runs its runner's whole share: Watch
 * starts it as soon as it is ready, polls densely until it runs, and moves the run deadline to what
 * its share needs, never past the run's total deadline. A replacement that is not running within the
 * ready timeout ends the run TIMED_OUT; one that can never start ends it FAILED.
 */
import { isStuck } from '../cluster/observe';
import { formatDuration } from '../core/duration';
import { cruisePollSeconds, startsCruiseWindow } from '../core/polling';
import { countOf } from '../core/plural';
import { runWindow, type Replacement, type RunWindow } from '../core/restart';
import { cruising, done, endsRun, StepPhase, waiting, type StepResult } from '../core/step';
import { Outcome, RunnerRestartPolicy, Stage } from '../core/status';
import { engineAdapter } from '../engines';
import { admission } from './acquire';
import type { StageDeps } from './deps';
import { abortRequest, clusterOf, loadRun, outputOf, requireOutput, type RunContext } from './run-context';
import { runOnce } from './run-once';
import { recordLiveSample } from './live-metrics';
import { earlyEnd, endedEarly, type EarlyEnd } from './early-end';
import { describeRunner, observeReachableRunners, observeRunners, ranToEnd, runnerList, type LostCluster, type RunnerView } from './runners';
import { describeBlock } from '../core/placements';
import type { ReadyResult } from './await-ready';
import type { StartRecord } from './start';

/** A runner told to stop exits within seconds: poll densely meanwhile, for at most ABORT_GRACE_MS. */
const ABORT_POLL_SECONDS = 2;
/** Cluster clock, like the abort request's time (run-context.ts, abortRequest). */
const ABORT_GRACE_MS = 2 * 60_000;

/** Watch's answer once the test is over; `endedEarly` when a runner ended it early (early-end.ts). */
export interface WatchRecord extends StepResult {
  endedEarly?: EarlyEnd;
}

export async function watch(deps: StageDeps, runId: string): Promise<StepResult> {
  const run = await loadRun(deps, runId);
  const recorded = outputOf<StepResult>(run.view, Stage.Watch);
  if (recorded) return recorded;
  const started = requireOutput<StartRecord>(run.view, Stage.Start, Stage.Watch);
  // setup() once per run failed at Start: no runner was started; the run ends with k6's message.
  if (started.setup && 'failed' in started.setup) return endsRun(StepPhase.failed, Outcome.FAILED, started.setup.failed);
  const { deadlines } = admission(run.view, Stage.Watch);
  const restart = run.spec.onRunnerRestart === RunnerRestartPolicy.restart;
  // Under `fail` a cluster that does not answer fails the poll (its retries, then the run, naming it);
  // under `restart` its runners may come back, so the run waits for it (waitForLostClusters).
  const { runners, lost } = restart ? await observeReachableRunners(run) : { runners: await observeRunners(run), lost: [] };
  const abort = abortRequest(run);
  if (lost.length > 0) return waitForLostClusters(run, runners, lost, started, deps.now(), abort);
  if (abort) return stopForAbort(deps, run, runners, started, abort);

  const failure = runnerFailure(run, runners, started);
  if (failure) return endsRun(StepPhase.failed, Outcome.FAILED, `run: ${failure}`);
  const early = endedEarly(run.spec.engine, runners);
  if (early.length > 0) return windDown(deps, run, runners, started, early);

  const replacements = run.spec.onRunnerRestart === RunnerRestartPolicy.restart ? await startReplacements(run, runners, started, deps.now()) : [];

  const finished = runners.filter((r) => ranToEnd(run.spec.engine, r.latest));
  if (finished.length === runners.length) return runOnce(deps, runId, Stage.Watch, async () => done());
  // The test runs: one live sample in the ledger (live-metrics.ts), whatever this poll answers.
  await recordLiveSample(deps, run, runners, started);

  const now = deps.now();
  const window = runWindow({
    now,
    startedAt: started.startedAt,
    runBy: started.runBy,
    ...(started.expectedEndAt !== undefined ? { expectedEndAt: started.expectedEndAt } : {}),
    ...(started.scheduledEndAt !== undefined ? { scheduledEndAt: started.scheduledEndAt } : {}),
    totalBy: deadlines.totalBy,
    timeouts: run.spec.timeouts,
    replacements,
  });
  if (window.overdue.length > 0) {
    const late = runners.filter((r) => window.overdue.includes(r.index));
    return endsRun(
      StepPhase.timed_out,
      Outcome.TIMED_OUT,
      `run: ${replacementsOf(window.overdue, 'pod was', 'pods were')} not running within ${formatDuration(run.spec.timeouts.ready)} of ${late.length > 1 ? 'their' : 'its'} creation (${late.map((r) => describeRunner(r, run.spec.engine)).join('; ')})`,
    );
  }
  if (now >= window.runBy) {
    const still = runners.length - finished.length;
    return endsRun(
      StepPhase.timed_out,
      Outcome.TIMED_OUT,
      `run: ${countOf(still, runners.length, 'runner')} still running at the run deadline (${formatDuration(Math.round((window.runBy - started.startedAt) / 1000))} after start${extension(window)})`,
    );
  }
  // Far from the end: the next polls are a cruise window's, every cruise interval; the first poll of each
  // window is a Wait of the run's own, which ends the window before (polling.ts, CRUISE_WINDOW_POLLS).
  const cruise = cruisePollSeconds(deps.config);
  if (window.nextPollSeconds < cruise) return waiting(window.nextPollSeconds);
  if (startsCruiseWindow(now - started.startedAt, cruise)) return waiting(cruise);
  return cruising(cruise);
}

/** How often Watch looks again for a cluster it lost (onRunnerRestart: restart). */
const LOST_CLUSTER_POLL_SECONDS = 15;

/**
 * `onRunnerRestart: restart` and a cluster whose API server does not answer: its runners may be
 * running on, or be replaced once it is back (Watch then starts the replacements as for an evicted
 * pod), so Watch polls until the cluster answers, up to the run deadline, which ends the run
 * TIMED_OUT naming the cluster. No live sample meanwhile: the run's figures would be short of its
 * runners there.
 */
function waitForLostClusters(
  run: RunContext,
  runners: RunnerView[],
  lost: LostCluster[],
  started: StartRecord,
  now: number,
  abort: { by: string } | undefined,
): StepResult {
  const clusters = lost.map((l) => `${describeBlock(l.cluster)}: ${l.error}`).join('; ');
  // Its runners cannot be told to stop: the abort ends the run now, and Cleanup (or the sweeper, once the cluster answers) deletes them.
  if (abort) return endsRun(StepPhase.aborted, Outcome.ABORTED, `run: aborted by ${abort.by}; a cluster of the run is unreachable (${clusters})`);
  if (now < started.runBy) return waiting(LOST_CLUSTER_POLL_SECONDS);
  const missing = lost.flatMap((l) => runners.filter((r) => clusterOf(run, r.index) === l.cluster).map((r) => r.index));
  return endsRun(
    StepPhase.timed_out,
    Outcome.TIMED_OUT,
    `run: ${countOf(missing.length, runners.length, 'runner')} not seen at the run deadline, their cluster unreachable (${clusters}); onRunnerRestart is restart, so the run waited for it`,
  );
}

/** "; extended for runner 1's replacement, up to the run's total deadline" when replacements moved the deadline. */
function extension(window: RunWindow): string {
  if (window.extendedFor.length === 0) return '';
  return `; extended for ${replacementsOf(window.extendedFor, '', '')}${window.cappedByTotal ? ", up to the run's total deadline" : ''}`;
}

/** "runner 1's replacement <one>" / "the replacements of runners 1 and 3 <many>". */
function replacementsOf(indexes: number[], one: string, many: string): string {
  const text =
    indexes.length === 1 ? `runner ${indexes[0]}'s replacement ${one}` : `the replacements of ${runnerList([...indexes].sort((a, b) => a - b))} ${many}`;
  return text.trimEnd();
}

/**
 * Abort, the graceful way (architecture §3): every k6 runner still running is told to stop (`stopped: true`,
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
  // Nothing left to stop: Collect reports what the test did, or ABORTED if a runner was still
  // running when the abort was asked for (runners.ts, runningAt).
  if (running.length === 0) return runOnce(deps, run.runId, Stage.Watch, async () => done());
  const givenUp = deps.now() - abort.at > ABORT_GRACE_MS || deps.now() >= started.runBy;
  const engine = engineAdapter(run.spec.engine);
  if (!engine.stopsGracefully || givenUp) {
    return endsRun(
      StepPhase.aborted,
      Outcome.ABORTED,
      `run: aborted by ${abort.by}; ${countOf(running.length, runners.length, 'runner')} did not stop and ${running.length === 1 ? 'is' : 'are'} deleted`,
    );
  }
  await stopRunners(run, running);
  return waiting(ABORT_POLL_SECONDS);
}

/** Tells every ready runner of `running` to stop, in its own cluster, all at once. */
async function stopRunners(run: RunContext, running: RunnerView[]): Promise<void> {
  const engine = engineAdapter(run.spec.engine);
  await Promise.all(
    running
      .filter((r) => r.latest!.ready)
      .map((r) => {
        const at = clusterOf(run, r.index);
        return engine.stop(at.client, at.namespace, r.latest!.name);
      }),
  );
}

/**
 * A runner ended the test early (early-end.ts): every runner still running is told to stop (k6:
 * `stopped: true`, so it prints its partial result; engines that cannot stop gracefully are left to
 * Cleanup), Watch polls densely until all have exited or ABORT_GRACE_MS passed since the first early
 * exit (or the run deadline came), then hands over to Collect with why the test ended.
 */
async function windDown(deps: StageDeps, run: RunContext, runners: RunnerView[], started: StartRecord, early: RunnerView[]): Promise<StepResult> {
  const running = runners.filter((r) => r.latest && r.latest.exitCode === undefined);
  const engine = engineAdapter(run.spec.engine);
  const since = Math.min(...early.map((r) => r.latest!.finishedAt ?? deps.now()));
  const givenUp = deps.now() - since > ABORT_GRACE_MS || deps.now() >= started.runBy;
  if (running.length === 0 || !engine.stopsGracefully || givenUp) {
    const ended = earlyEnd(run.spec.engine, runners, early);
    return runOnce(deps, run.runId, Stage.Watch, async (): Promise<WatchRecord> => ({ ...done(), endedEarly: ended }));
  }
  await stopRunners(run, running);
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
    // A pod that exited (not disrupted) ended its test, well or early (windDown): its Job's failure is that exit.
    const exited = pod?.exitCode !== undefined && !pod.disrupted;
    if (runner.job?.failed && !exited) {
      return `runner ${runner.index}'s Job failed (${runner.job.reason ?? 'no reason given'}${runner.job.message ? `: ${runner.job.message}` : ''})`;
    }
    if (replaced && pod && isStuck(pod)) return `runner ${runner.index}'s replacement cannot start: ${describeRunner(runner, run.spec.engine)}`;
  }
  return undefined;
}

/**
 * `onRunnerRestart: restart`: every runner whose started pod is gone, with its replacement's facts.
 * A k6 replacement comes back paused: once its REST API answers it is unpaused (only when it reports
 * paused, since k6 refuses to resume a test that runs). A Gatling replacement starts by itself, its
 * start instant being past. A replacement counts as started from its container's start.
 */
async function startReplacements(run: RunContext, runners: RunnerView[], started: StartRecord, now: number): Promise<Replacement[]> {
  const replaced = runners.filter((r) => r.latest && (r.latest.disrupted || r.latest.uid !== started.startedPods[r.index]));
  return Promise.all(
    replaced.map(async (r): Promise<Replacement> => {
      const pod = r.latest!;
      // Its Job has not made the replacement yet (quota, admission, a slow controller): the ready
      // timeout counts from when the evicted pod stopped, so a replacement never made is overdue too.
      if (pod.disrupted) return { index: r.index, createdAt: pod.finishedAt ?? pod.createdAt };
      const facts = { index: r.index, createdAt: pod.createdAt };
      const since = pod.startedAt ?? now;
      if (pod.exitCode !== undefined) return { ...facts, startedAt: since };
      if (!pod.ready) return facts;
      const setupFrom = started.setup?.ran ? outputOf<ReadyResult>(run.view, Stage.AwaitReady)?.coordinator?.name : undefined;
      const at = clusterOf(run, r.index);
      if (await engineAdapter(run.spec.engine).startReplacement(at.client, at.namespace, pod.name, setupFrom)) return { ...facts, startedAt: since };
      return facts;
    }),
  );
}
