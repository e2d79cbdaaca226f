/**
 * AwaitPrepared (architecture §3.2): polls the k6 initializer. Done when it printed the execution
 * requirements (recorded, so every later poll returns the same answer); a bad script, or one that
 * runs longer than the run's timeouts allow, ends the run FAILED with k6's own message or both
 * numbers; so does an initializer that exited 0 with output that cannot be read
 * (engines/k6/inspect-output.ts), naming what could not be read, rather than skipping those checks;
 * and one that cannot start (a missing Secret, ConfigMap or key: the kubelet's message, from the pod's
 * status or its FailedMount event);
 * no answer by the prepare deadline ends it TIMED_OUT.
 */
import { isStuck, type PodFacts } from '../cluster/observe';
import { expectedDurationFromInspect, minimumDurationFromInspect, scheduledDurationFromInspect } from '../core/deadlines';
import { formatDuration } from '../core/duration';
import { describeExitCode } from '../core/outcome-rules';
import { nextPollSeconds } from '../core/polling';
import { escapeText } from '../core/excerpt';
import { Role } from '../core/runner-contract';
import { k6ErrorMessage, readK6InspectOutput } from '../engines/k6/inspect-output';
import { k6LifecycleOptions, k6LifecycleProblem, type K6LifecycleOptions } from '../engines/k6/lifecycle-options';
import { hasCoordinator } from '../core/spec';
import { done, endsRun, StepPhase, waiting, type StepResult } from '../core/step';
import { Outcome, Stage } from '../core/status';
import { admission } from './acquire';
import type { StageDeps } from './deps';
import { abortRequest, listJobs, listPods, loadRun, outputOf, requireOutput, type RunContext } from './run-context';
import { permanentMountFailure } from './mount-failure';
import { runOnce } from './run-once';

/** What the initializer found, kept in the stage's output. */
export interface PreparedResult extends StepResult {
  /**
   * From k6 inspect: `expectedDurationSeconds` is its totalDuration (every gracefulStop included: the
   * most the test may take, what the deadlines are sized from); `scheduledDurationSeconds` when its
   * scenarios' schedule ends (deadlines.ts scheduledDurationFromInspect), when known.
   */
  requirements?: { maxVUs?: number; expectedDurationSeconds?: number; scheduledDurationSeconds?: number };
  /** setup() and teardown() once per run (k6's coordinator): whether k6 skips them and how long each may take. */
  lifecycle?: K6LifecycleOptions;
}

/** Real k6 prints the whole consolidated options object (every scenario, every stage, one line each). */
const LOG_LINES = 5_000;
/** A failed initializer: the lines its error is read from (init-code console.* lines come before it). */
const FAILURE_LOG_LINES = 20;
/** How much of k6's error message a reason carries. */
const FAILURE_MESSAGE_CHARS = 600;

export async function awaitPrepared(deps: StageDeps, runId: string): Promise<PreparedResult> {
  const run = await loadRun(deps, runId);
  const recorded = outputOf<PreparedResult>(run.view, Stage.AwaitPrepared);
  if (recorded) return recorded;
  const { admittedAt, deadlines } = admission(run.view, Stage.AwaitPrepared);
  requireOutput(run.view, Stage.Prepare, Stage.AwaitPrepared);
  const abort = abortRequest(run);
  if (abort) return endsRun(StepPhase.aborted, Outcome.ABORTED, `prepare: aborted by ${abort.by} before the test started`);

  // Both lists at once: every poll makes them, one round trip instead of two.
  const [jobs, pods] = await Promise.all([listJobs(run), listPods(run)]);
  const job = jobs.find((j) => j.role === Role.initializer);
  if (!job) return endsRun(StepPhase.failed, Outcome.FAILED, 'prepare: the k6 initializer Job was deleted before it finished');
  const pod = pods.filter((p) => p.role === Role.initializer).sort((a, b) => b.createdAt - a.createdAt)[0];

  if (job.complete && pod) {
    const reading = readK6InspectOutput(await run.home.client.podLogTail(run.home.namespace, pod.name, LOG_LINES));
    // Never `requirements: {}`: without them the VU and duration checks below would be skipped unseen.
    if (!reading.ok) {
      return endsRun(StepPhase.failed, Outcome.FAILED, `prepare: the k6 initializer exited 0 but its output could not be read: ${reading.problem}`);
    }
    const { requirements } = reading;
    const { maxVUs } = requirements;
    if (maxVUs < run.spec.parallelism) {
      return endsRun(
        StepPhase.failed,
        Outcome.FAILED,
        `prepare: the script asks for at most ${maxVUs} VUs, fewer than parallelism ${run.spec.parallelism}: some runners would have no VU`,
      );
    }
    const expectedDurationSeconds = expectedDurationFromInspect(requirements);
    const scheduledDurationSeconds = scheduledDurationFromInspect(requirements);
    const tooLong = scriptTooLong(run, minimumDurationFromInspect(requirements), deadlines.totalBy, deps.now());
    if (tooLong) return endsRun(StepPhase.failed, Outcome.FAILED, tooLong);
    const lifecycle = hasCoordinator(run.spec) ? k6LifecycleOptions(requirements) : undefined;
    const lifecycleProblem = lifecycle && k6LifecycleProblem(lifecycle);
    if (lifecycleProblem) return endsRun(StepPhase.failed, Outcome.FAILED, lifecycleProblem);
    const result: PreparedResult = {
      ...done(),
      requirements: {
        maxVUs,
        ...(expectedDurationSeconds !== undefined ? { expectedDurationSeconds } : {}),
        ...(scheduledDurationSeconds !== undefined ? { scheduledDurationSeconds } : {}),
      },
      ...(lifecycle ? { lifecycle } : {}),
    };
    return runOnce(deps, runId, Stage.AwaitPrepared, async () => result);
  }
  if (job.failed || pod?.phase === 'Failed') return endsRun(StepPhase.failed, Outcome.FAILED, await initializerFailure(run, job.reason, pod));
  if (pod && isStuck(pod)) {
    return endsRun(StepPhase.failed, Outcome.FAILED, `prepare: the k6 initializer cannot start: ${pod.reason}${pod.message ? ` (${pod.message})` : ''}`);
  }
  const mount = pod && (await permanentMountFailure(run, [pod]));
  if (mount) return endsRun(StepPhase.failed, Outcome.FAILED, `prepare: the k6 initializer cannot start: ContainerCreating (${mount.message})`);
  const now = deps.now();
  if (now >= deadlines.prepareBy) {
    const state = pod ? `pod ${pod.phase}${pod.reason ? ` (${pod.reason})` : ''}` : 'no pod yet';
    return endsRun(
      StepPhase.timed_out,
      Outcome.TIMED_OUT,
      `prepare: the k6 initializer did not finish within ${formatDuration(run.spec.timeouts.prepare)} (${state})`,
    );
  }
  return waiting(nextPollSeconds({ phase: 'prepare', now, phaseStartedAt: admittedAt, deadline: deadlines.prepareBy }));
}

/**
 * A script that cannot end in time is refused now, not run into its deadline: its shortest possible
 * run (minimumDurationFromInspect: the time-bound scenarios' durations; k6's totalDuration is only an
 * upper bound) must fit the run phase's `timeouts.run` (when the spec sets one) and what is left of
 * `timeouts.total` (runDeadline caps the run phase by it). Both bounds are named, so the message says
 * which one to raise. Without readable scenarios nothing is refused: the run deadline still holds.
 */
function scriptTooLong(run: RunContext, minimumSeconds: number | undefined, totalBy: number, now: number): string | undefined {
  if (minimumSeconds === undefined) return undefined;
  const runSeconds = run.spec.timeouts.run;
  const leftSeconds = Math.max(0, Math.floor((totalBy - now) / 1000));
  if (minimumSeconds <= leftSeconds && (runSeconds === undefined || minimumSeconds <= runSeconds)) return undefined;
  const bounds = [
    ...(runSeconds === undefined ? [] : [`timeouts.run ${formatDuration(runSeconds)}`]),
    `what is left of timeouts.total ${formatDuration(leftSeconds)}`,
  ];
  return (
    `prepare: the script runs for at least ${formatDuration(minimumSeconds)}, longer than the run phase allows ` +
    `(${bounds.join(' / ')}): shorten the script or raise the timeout`
  );
}

async function initializerFailure(run: RunContext, jobReason: string | undefined, pod: PodFacts | undefined): Promise<string> {
  const code = pod?.exitCode;
  const how = code === undefined ? (jobReason ?? 'failed') : `exited ${code} (${describeExitCode(code, run.spec.engine)})`;
  const log = pod ? await run.home.client.podLogTail(run.home.namespace, pod.name, FAILURE_LOG_LINES).catch(() => '') : '';
  // k6's own message (its last error record); else the log's last lines as they are.
  const k6Error = k6ErrorMessage(log);
  const said = k6Error !== undefined ? escapeText(k6Error, FAILURE_MESSAGE_CHARS) : log.trim().split('\n').slice(-3).join(' | ').slice(0, 1000);
  return `prepare: the k6 initializer ${how}${said ? `: ${said}` : ''}`;
}
