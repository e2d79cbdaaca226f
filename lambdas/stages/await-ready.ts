/**
 * AwaitReady (architecture §3.4): every runner pod Running and ready as its engine's adapter judges
 * (k6: its VUs initialized, status 4 through its REST API on the pods/proxy subresource; an API that
 * answers is not enough, k6 answers while still initializing its VUs). A Gatling runner that already ran and exited (it starts itself at the
 * common instant) is past ready and counts as ready; Watch judges its exit code. A runner that can
 * never start (image pull failure, a missing Secret, ConfigMap or key of its env or a volume, a failed
 * Job, a k6 runner that exited before Start) ends the run FAILED at once; the ready deadline ends it
 * TIMED_OUT, naming the runners still waiting.
 */
import { formatDuration } from '../core/duration';
import { countOf } from '../core/plural';
import { nextPollSeconds } from '../core/polling';
import { done, endsRun, StepPhase, waiting, type StepResult } from '../core/step';
import { Outcome, RunnerRestartPolicy, Stage } from '../core/status';
import { engineAdapter } from '../engines';
import { inBatches } from './in-batches';
import type { StageDeps } from './deps';
import type { LaunchRecord } from './launch';
import { abortRequest, clusterOf, loadRun, outputOf, requireOutput } from './run-context';
import { permanentMountFailure } from './mount-failure';
import { runOnce } from './run-once';
import { describeCoordinator, describeRunner, observeRunPods, readiness, Readiness, runnerList, runningAt, type RunnerView } from './runners';

export interface ReadyResult extends StepResult {
  /** Runner index → the pod that was ready, or (Gatling) had already run (name and UID). */
  pods?: Record<number, { name: string; uid: string }>;
  /** k6's coordinator pod (setup() once per run), ready like a runner. */
  coordinator?: { name: string; uid: string };
}

export async function awaitReady(deps: StageDeps, runId: string): Promise<ReadyResult> {
  const run = await loadRun(deps, runId);
  const recorded = outputOf<ReadyResult>(run.view, Stage.AwaitReady);
  if (recorded) return recorded;
  const { launchedAt, readyBy, startAt } = requireOutput<LaunchRecord>(run.view, Stage.Launch, Stage.AwaitReady);
  const engine = engineAdapter(run.spec.engine);
  // Runners given a common instant at Launch start themselves (Gatling); the others wait for Start.
  const startsItself = startAt !== undefined;
  const abort = abortRequest(run);
  const { runners, coordinator } = await observeRunPods(run);
  // An abort wins unless the test already ran to its end before it was asked for (Gatling runners
  // start on their own instant and may finish before AwaitReady saw them ready): then Watch and
  // Collect report what the test did, noting the late abort (runners.ts, runningAt).
  if (abort && runningAt(runners, abort.at).length > 0) {
    const started = startsItself && runners.some((r) => r.latest?.startedAt !== undefined);
    return endsRun(
      StepPhase.aborted,
      Outcome.ABORTED,
      `ready: aborted by ${abort.by} ${started ? 'while the runners were starting' : 'before the test started'}`,
    );
  }
  const missing = runners.filter((r) => !r.job);
  if (missing.length > 0) {
    return endsRun(StepPhase.failed, Outcome.FAILED, `ready: the Job of ${runnerList(missing.map((r) => r.index))} was deleted`);
  }
  if (coordinator && !coordinator.job) return endsRun(StepPhase.failed, Outcome.FAILED, 'ready: the Job of the coordinator (setup() once per run) was deleted');
  const states = runners.map((r) => readiness(r, startsItself, run.spec.onRunnerRestart));
  const broken = runners.filter((_, i) => states[i] === Readiness.broken);
  if (broken.length > 0) {
    return endsRun(StepPhase.failed, Outcome.FAILED, `ready: runners cannot start: ${broken.map((r) => describeRunner(r, run.spec.engine)).join('; ')}`);
  }
  // The coordinator waits paused like a runner and is never started: one that exited is broken.
  const coordinatorState = coordinator && readiness(coordinator, false, RunnerRestartPolicy.fail);
  if (coordinator && coordinatorState === Readiness.broken) {
    return endsRun(
      StepPhase.failed,
      Outcome.FAILED,
      `ready: the coordinator (setup() once per run) cannot start: ${describeCoordinator(coordinator, run.spec.engine)}`,
    );
  }

  // A volume that cannot mount is said only in the pod's FailedMount events (mount-failure.ts).
  const waitingFor = [
    ...runners.filter((_, i) => states[i] === Readiness.waiting),
    ...(coordinator && coordinatorState === Readiness.waiting ? [coordinator] : []),
  ];
  const mount = await permanentMountFailure(
    run,
    waitingFor.flatMap((r) => (r.latest ? [r.latest] : [])),
  );
  if (mount) {
    const view = waitingFor.find((r) => r.latest === mount.pod)!;
    const who = view === coordinator ? 'the coordinator (setup() once per run)' : `runner ${view.index}`;
    return endsRun(StepPhase.failed, Outcome.FAILED, `ready: runners cannot start: ${who}: Pending (ContainerCreating: ${mount.message})`);
  }

  const running = runners.filter((_, i) => states[i] === Readiness.ready);
  const finished = runners.filter((_, i) => states[i] === Readiness.finished);
  let notReady: string[] = [];
  if (running.length + finished.length === runners.length && waitingFor.length === 0) {
    const asked = [...running, ...(coordinator ? [coordinator] : [])];
    const answering = await inBatches(asked, (r) => {
      const at = clusterOf(run, r.index);
      return engine.readiness(at.client, at.namespace, r.latest!.name);
    });
    notReady = asked.flatMap((r, i) =>
      answering[i]!.ready ? [] : [`${r === coordinator ? 'coordinator' : `runner ${r.index}`}: ${answering[i]!.waitingFor ?? 'not ready'}`],
    );
    if (notReady.length === 0) {
      const pods = Object.fromEntries([...running, ...finished].map((r) => [r.index, { name: r.latest!.name, uid: r.latest!.uid }]));
      const ready = coordinator ? { coordinator: { name: coordinator.latest!.name, uid: coordinator.latest!.uid } } : {};
      return runOnce(deps, runId, Stage.AwaitReady, async () => ({ ...done(), pods, ...ready }));
    }
  }

  const now = deps.now();
  if (now >= readyBy) {
    const within = `within ${formatDuration(run.spec.timeouts.ready)}`;
    const reason =
      waitingFor.length > 0
        ? `ready: ${describeWaiting(waitingFor, runners.length)} not ready ${within} (${waitingFor
            .slice(0, 5)
            .map((r) => (r === coordinator ? describeCoordinator(r, run.spec.engine) : describeRunner(r, run.spec.engine)))
            .join('; ')})`
        : `ready: every runner pod is running, but ${countOf(notReady.length, runners.length, 'runner')} not ready to start ${within} (${notReady.slice(0, 5).join('; ')})`;
    return endsRun(StepPhase.timed_out, Outcome.TIMED_OUT, reason);
  }
  return waiting(nextPollSeconds({ phase: 'ready', now, phaseStartedAt: launchedAt, deadline: readyBy }));
}

/** `2 of 3 runners`, `the coordinator`, `1 of 3 runners and the coordinator`. */
function describeWaiting(waiting: RunnerView[], total: number): string {
  const runners = waiting.filter((r) => r.index >= 0).length;
  const coordinator = waiting.some((r) => r.index < 0);
  if (runners === 0) return 'the coordinator (setup() once per run) is';
  return `${countOf(runners, total, 'runner')}${coordinator ? ' and the coordinator' : ''}`;
}
