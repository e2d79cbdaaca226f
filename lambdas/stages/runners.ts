/**
 * The run's runners as the cluster sees them, one entry per index 0..N-1: its Job and its pods
 * (oldest first; a replacement comes last). Two list calls, whatever N is (architecture §3.6). Also the
 * pure rules the poll stages judge a runner by: where it stands before Start, and which exit codes
 * mean its test ran to the end.
 */
import { describeExitCode, exitRanToEnd } from '../core/outcome-rules';
import type { RunnerSummary } from '../core/summary';
import type { EngineAdapter } from '../engines';
import { Role, SIMULATED_OUTPUT_MARKER } from '../core/runner-contract';
import { Engine, RunnerRestartPolicy } from '../core/status';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { isStuck, jobFacts, podFacts, type JobFacts, type PodFacts } from '../cluster/observe';
import { isRetryable } from '../core/errors';
import { listJobs, listPods, type RunContext } from './run-context';
import type { RunCluster } from './run-clusters';
import { hasCoordinator } from '../core/spec';

export interface RunnerView {
  index: number;
  job?: JobFacts;
  pods: PodFacts[];
  /** The newest pod: the one that runs (or ran) the test. */
  latest?: PodFacts;
}

export async function observeRunners(run: RunContext): Promise<RunnerView[]> {
  return (await observeRunPods(run)).runners;
}

/** A cluster of the run whose API server did not answer Watch's lists (after the client's retries). */
export interface LostCluster {
  cluster: RunCluster;
  /** The error, as the client named it (`cluster west: list Pod …: HTTP 503 …`). */
  error: string;
}

/**
 * The runners as far as the clusters answer (onRunnerRestart: restart, architecture §3.6): a cluster
 * whose lists fail with a retryable error is lost for this poll, and its runners are left out (their
 * views have no Job and no pods: the caller must not judge them); any other failure goes up.
 */
export async function observeReachableRunners(run: RunContext): Promise<{ runners: RunnerView[]; lost: LostCluster[] }> {
  const answers = await Promise.allSettled(
    run.clusters.map(async (c) => {
      const [jobs, pods] = await Promise.all([c.client.listByRun('Job', c.namespace, run.runId), c.client.listByRun('Pod', c.namespace, run.runId)]);
      return {
        jobs: jobs.map((o) => jobFacts(o as V1Job)),
        pods: pods.map((o) => podFacts(o as V1Pod)).filter((p) => !p.terminating),
      };
    }),
  );
  const lost: LostCluster[] = [];
  answers.forEach((a, i) => {
    if (a.status === 'fulfilled') return;
    if (!isRetryable(a.reason)) throw a.reason;
    lost.push({ cluster: run.clusters[i]!, error: (a.reason as Error).message });
  });
  const reached = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  return {
    runners: runnerViews(
      run,
      reached.flatMap((r) => r.jobs),
      reached.flatMap((r) => r.pods),
    ),
    lost,
  };
}

/**
 * The runners and, when the run has one (k6 setup() once per run), its coordinator: the same two list
 * calls. The coordinator's view has index -1 (describeCoordinator names it).
 */
export async function observeRunPods(run: RunContext): Promise<{ runners: RunnerView[]; coordinator?: RunnerView }> {
  const [jobs, pods] = await Promise.all([listJobs(run), listPods(run)]);
  const runners = runnerViews(run, jobs, pods);
  if (!hasCoordinator(run.spec)) return { runners };
  const own = pods.filter((p) => p.role === Role.coordinator).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
  return { runners, coordinator: { index: -1, job: jobs.find((j) => j.role === Role.coordinator), pods: own, latest: own[own.length - 1] } };
}

/** `coordinator: Failed, exited 107 (script exception)`, as describeRunner says it of a runner. */
export function describeCoordinator(coordinator: RunnerView, engine: Engine): string {
  return describeRunner(coordinator, engine, 'coordinator');
}

function runnerViews(run: RunContext, jobs: JobFacts[], pods: PodFacts[]): RunnerView[] {
  return Array.from({ length: run.spec.parallelism }, (_, index) => {
    const own = pods.filter((p) => p.role === Role.runner && p.index === index).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    return {
      index,
      job: jobs.find((j) => j.role === Role.runner && j.index === index),
      pods: own,
      latest: own[own.length - 1],
    };
  });
}

/**
 * A runner whose test ran to its end exited 0, or with a code that says "the load ran, a check failed"
 * (k6 99: thresholds failed, 110: the script's exec.test.fail(); Gatling 2: assertions failed; their
 * documented exit codes). Collect and Decide report those; any other code ended its test early.
 */
export function ranToEnd(engine: Engine, pod: PodFacts | undefined): boolean {
  return pod?.exitCode !== undefined && exitRanToEnd(pod.exitCode, engine);
}

export const Readiness = {
  /** Not yet: being scheduled, pulled, started, or (restart) replaced. */
  waiting: 'waiting',
  /** Its newest pod runs and reports ready. */
  ready: 'ready',
  /** Past ready: its pod ran and exited before AwaitReady saw it ready (runners that start themselves only). */
  finished: 'finished',
  /** It can never become ready. */
  broken: 'broken',
} as const;
export type Readiness = (typeof Readiness)[keyof typeof Readiness];

/**
 * Where a runner stands before Start (AwaitReady, architecture §3.4). A Gatling runner starts by itself at
 * the common instant fixed at Launch, so a short simulation, or an AwaitReady poll that comes late
 * (a slow runner keeps it polling, a loaded machine), can find it already exited: it ran, so it is
 * past ready, and Watch judges its exit code. A pod "ran" when its container ended with an exit code
 * and it was neither stuck before starting nor disrupted. A k6 runner waits paused for Start, so one
 * that exited before Start is broken, whatever its code. Under `restart`, an evicted pod is being
 * replaced by its Job: waiting, unless the Job itself failed. A runner whose Job is gone is the
 * caller's to report.
 */
export function readiness(runner: RunnerView, startsItself: boolean, onRunnerRestart: RunnerRestartPolicy): Readiness {
  const pod = runner.latest;
  if (pod?.disrupted && onRunnerRestart === RunnerRestartPolicy.restart && !runner.job?.failed) return Readiness.waiting;
  const ran = pod !== undefined && pod.exitCode !== undefined && !pod.disrupted && !isStuck(pod);
  if (ran) return startsItself ? Readiness.finished : Readiness.broken;
  if (runner.job?.failed || pod?.phase === 'Failed' || (pod && isStuck(pod))) return Readiness.broken;
  return pod?.ready ? Readiness.ready : Readiness.waiting;
}

/** `runner 2: Pending (Unschedulable: 0/3 nodes are available)`, `runner 0: Failed, exited 107 (script exception)`. */
export function describeRunner(runner: RunnerView, engine: Engine, label = `runner ${runner.index}`): string {
  const pod = runner.latest;
  if (!pod) return `${label}: no pod`;
  if (pod.exitCode !== undefined) return `${label}: ${pod.phase}, exited ${pod.exitCode} (${describeExitCode(pod.exitCode, engine)})`;
  const why = pod.reason ? ` (${pod.reason}${pod.message ? `: ${pod.message}` : ''})` : '';
  return `${label}: ${pod.phase}${why}`;
}

/**
 * The runners still running at `at` (epoch ms, the cluster's clock, like the pods' times): those
 * whose newest pod has not exited, or exited at or after `at`. The rule for an abort (architecture §3):
 * it wins only over a test some runner was still running; a request that came after every runner
 * had finished leaves the run to report what the test did. Kubernetes keeps whole seconds, so a pod
 * that finished within the abort's own second counts as still running then: the abort wins a tie.
 * The abort's time is the control plane's clock and a pod's the kubelet's; a runner that finished
 * up to CLOCK_SKEW_TOLERANCE_MS before the abort also counts as running, so a stop Watch itself sent
 * is never read as "finished before the abort" on a node whose clock is slightly behind.
 */
export const CLOCK_SKEW_TOLERANCE_MS = 5_000;

export function runningAt(runners: RunnerView[], at: number): RunnerView[] {
  const since = Math.floor(at / 1000) * 1000 - CLOCK_SKEW_TOLERANCE_MS;
  return runners.filter((r) => {
    const pod = r.latest;
    // No pod to ask (deleted, node lost): it may have been running, so the abort is not overruled.
    if (!pod) return true;
    return pod.exitCode === undefined || pod.finishedAt === undefined || pod.finishedAt >= since;
  });
}

export { runnerList } from '../core/runner-list';

/**
 * An exited runner pod's result from the tail of its log (`engine.resultLogLines` lines), through its
 * engine's adapter, with the facts the log does not say (exit code, duration on the cluster's clock,
 * whether kube-sim simulated it): Collect's reading, and Watch's for a runner that finished early.
 * Undefined when the log holds no result; throws when the result cannot be read.
 */
export function runnerResultFromLog(engine: EngineAdapter, index: number, pod: PodFacts & { exitCode: number }, log: string): RunnerSummary | undefined {
  const durationMs = pod.startedAt !== undefined && pod.finishedAt !== undefined ? pod.finishedAt - pod.startedAt : 0;
  return engine.parseResult(log, { runner: index, exitCode: pod.exitCode, durationMs, simulated: log.includes(SIMULATED_OUTPUT_MARKER) });
}
