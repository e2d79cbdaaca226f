/**
 * What an engine is to loadplane (architecture §7): how its pods are built, when a runner is ready,
 * how the runners are started and stopped, where each runner's result is in its log, and what its
 * exit codes mean. The stages ask the adapter of the run's engine (`engineAdapter`) and never test
 * the engine themselves, so a third engine (Locust, Artillery) is one more entry of ENGINES, and the
 * compiler lists every member it must fill in.
 */
import type { V1ConfigMap, V1Job } from '@kubernetes/client-node';
import type { ClusterClient } from '../cluster/cluster-client';
import type { RunnerPlan } from '../cluster/plan';
import type { RunnerSummary } from '../core/summary';

/** What Collect knows about a runner besides its log. */
export interface RunnerFacts {
  runner: number;
  /** The container's exit code. */
  exitCode: number;
  /** From the container's start to its end (cluster clock); the engine's own figure wins when it has one. */
  durationMs: number;
  /** The log came from kube-sim's simulated engine (SIMULATED_OUTPUT_MARKER). */
  simulated: boolean;
}

/**
 * What a running runner reports of its test so far (Watch's live sample, core/live-sample.ts):
 * counters cumulative since its test started.
 */
export interface LiveReading {
  requests: number;
  failed: number;
  iterations: number;
  /** VUs (Gatling: users) active now. */
  vus: number;
  dataReceivedBytes: number;
  dataSentBytes: number;
  /** Request duration p95 so far (ms); null before the first request, or when the engine reports none live (Gatling). */
  p95: number | null;
}

/** A runner pod AwaitReady found ready. */
export interface ReadyPod {
  index: number;
  name: string;
}

export interface StartContext {
  cluster: ClusterClient;
  namespace: string;
  /** The cluster clock (epoch ms). */
  now(): number;
  /** The instant Launch fixed (engines whose runners start themselves). */
  startAt: string | undefined;
  /** Names of the run's pods whose container has exited (asked only when a runner did not report running). */
  exitedPods(): Promise<Set<string>>;
}

export interface EngineAdapter {
  /** The engine's documented exit codes and what they mean. */
  readonly exitCodes: Readonly<Record<number, string>>;
  /** "The load ran to its end and a check failed" (k6 99, Gatling 2): THRESHOLDS_FAILED, not FAILED. */
  readonly checksFailedExitCode: number;

  /**
   * What of the spec's arguments and env this engine cannot take, each with its path (`['arguments', 3]`,
   * `['env', 'K6_SUMMARY_MODE']`): flags loadplane sets on every runner itself, or ones that would hide
   * the runners' results. Empty when all are fine.
   */
  specProblems(spec: { arguments: readonly string[]; env: Readonly<Record<string, string>> }): { path: (string | number)[]; message: string }[];

  /** Prepare's objects: the script ConfigMap (inline scripts) and, if the engine has one, the initializer Job. */
  prepareManifests(plan: RunnerPlan): (V1ConfigMap | V1Job)[];
  /** True when Prepare started an initializer that AwaitPrepared waits for; false: Launch follows Prepare. */
  readonly inspectsScript: boolean;
  /** Launch's objects: one Job per runner. */
  launchManifests(plan: RunnerPlan): V1Job[];

  /**
   * The common instant (ISO 8601 UTC) the runners start themselves at, fixed at Launch; undefined when
   * Start signals them. Runners that start themselves may have run and exited before AwaitReady saw
   * them ready: they are past ready, not broken.
   */
  startInstant(launchedAt: number, readyTimeoutSeconds: number): string | undefined;
  /** True once a running pod can take the start signal (k6: its REST API answers). */
  answers(cluster: ClusterClient, namespace: string, pod: string): Promise<boolean>;
  /**
   * Starts every ready runner at once and returns the start time (cluster clock). Throws a retryable
   * error when a runner did not start; the retry sends the (idempotent) start again.
   */
  start(ctx: StartContext, pods: ReadyPod[]): Promise<number>;
  /** Starts a replacement runner (onRunnerRestart: restart); true once it runs its test. */
  startReplacement(cluster: ClusterClient, namespace: string, pod: string): Promise<boolean>;
  /** True when a running runner can be told to stop and keep its partial result; false: it is deleted. */
  readonly stopsGracefully: boolean;
  /** Tells a running runner to stop (idempotent). */
  stop(cluster: ClusterClient, namespace: string, pod: string): Promise<void>;

  /**
   * The live figures of running runners, read at once (one request per pod, none after another):
   * one entry per pod, undefined for a runner that did not answer within `budgetMs` (real ms, for the
   * whole batch: within-budget.ts) or could not (not reachable, an error, no figures yet). Never
   * throws for one runner; throws only when the batch cannot be sent at all.
   */
  liveMetrics(cluster: ClusterClient, namespace: string, pods: readonly string[], budgetMs: number): Promise<(LiveReading | undefined)[]>;

  /** How many lines from the end of a runner's log Collect reads to find its whole result. */
  readonly resultLogLines: number;
  /** The runner's result from its log, or undefined when it printed none (it died first). */
  parseResult(log: string, facts: RunnerFacts): RunnerSummary | undefined;
}
