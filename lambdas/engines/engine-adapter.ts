/**
 * What an engine is to loadplane (architecture §7): how its pods are built, when a runner is ready,
 * how the runners are started and stopped, where each runner's result is in its log, and what its
 * exit codes mean (its pure rules, core/engine-rules.ts). The stages ask the adapter of the run's engine (`engineAdapter`) and never test
 * the engine themselves, so a third engine (Locust, Artillery) is one more entry of ENGINES, and the
 * compiler lists every member it must fill in.
 */
import type { V1ConfigMap, V1Job } from '@kubernetes/client-node';
import type { ClusterClient } from '../cluster/cluster-client';
import type { RunnerPlan } from '../cluster/plan';
import type { EngineRules } from '../core/engine-rules';
import type { StageMarks } from '../core/stage-marks';
import type { ObservedStart, StartSource } from '../core/start-skew';
import type { RunnerSummary } from '../core/summary';
import type { PodRef } from './pod-requests';

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

/** A runner pod AwaitReady found ready, in its cluster (a run may span several: core/placements.ts). */
export interface ReadyPod extends PodRef {
  index: number;
}

export interface StartContext {
  /** The cluster clock (epoch ms). */
  now(): number;
  /** The instant Launch fixed (engines whose runners start themselves). */
  startAt: string | undefined;
  /** Names of the run's pods whose container has exited (asked only when a runner did not report running). */
  exitedPods(): Promise<Set<string>>;
  /**
   * setup() once per run (k6 setupTeardown perRun): run on the coordinator, its data handed to the
   * runners, before they are started; absent when each runner runs its own (or the engine has none).
   */
  setup?: CoordinatorCall & { skip?: string };
}

/** A call to the run's coordinator (k6 perRun: engines/k6/coordinator.ts), in the run's home cluster. */
export interface CoordinatorCall {
  cluster: ClusterClient;
  namespace: string;
  /** The coordinator pod's name. */
  coordinator: string;
  /** The calling stage's marks (what its earlier attempts sent). */
  marks: StageMarks;
  /** How long the script's function may take (k6's setupTimeout / teardownTimeout), in seconds. */
  functionTimeoutSeconds: number;
}

/** What setup() once per run came to (Start records it). */
export type SetupOutcome =
  /** setup() ran on the coordinator; `data`: it returned data, which every runner was given. */
  | { ran: true; data: boolean }
  /** Not run: the script's options or arguments say so (k6's noSetup). */
  | { ran: false; skipped: string }
  /** setup() threw (k6's message), or could not be known to have run once: nothing was started. */
  | { ran: false; failed: string };

/** What teardown() once per run came to (Cleanup records it); `failed`: it threw (k6's message). */
export type TeardownOutcome = { ran: true; failed?: string } | { ran: false; skipped: string };

/** Whether a running pod can take the start signal, and if not, what it is waiting for (for reasons). */
export interface RunnerReadiness {
  ready: boolean;
  /** `k6 status 1 (initializing VUs: 132 ready)`: why it is not ready yet. */
  waitingFor?: string;
}

/** What Start did. */
export interface StartResult {
  /** The test's start (cluster clock): when the start requests went out (k6), or the common instant (Gatling). */
  startedAt: number;
  /** Each runner's start as the engine let Start see it (k6: its status turning to running); absent when Start cannot see it. */
  observed?: { source: StartSource; starts: ObservedStart[] };
  /** setup() once per run (StartContext.setup): what it came to. When it failed, no runner was started. */
  setup?: SetupOutcome;
}

/** The engine's pure rules (exit codes, spec problems, pod mount paths: core/engine-rules.ts), and what it does on the cluster. */
export interface EngineAdapter extends EngineRules {
  /**
   * Prepare's objects: the script ConfigMap (inline scripts) and, if the engine has one, the initializer
   * Job; each owned by the run's anchor, which the stage adds (cluster/manifests/index.ts).
   */
  prepareManifests(plan: RunnerPlan): (V1ConfigMap | V1Job)[];
  /** True when Prepare started an initializer that AwaitPrepared waits for; false: Launch follows Prepare. */
  readonly inspectsScript: boolean;
  /** Launch's objects: one Job per runner (k6: and the coordinator), each owned by the run's anchor. */
  launchManifests(plan: RunnerPlan): V1Job[];
  /** What the run's anchor ConfigMap holds for the pods to read (cluster/manifests/anchor.ts); the same for every stage and cluster. */
  anchorData?(plan: RunnerPlan): Record<string, string>;

  /**
   * The common instant (ISO 8601 UTC) the runners start themselves at, fixed at Launch; undefined when
   * Start signals them. Runners that start themselves may have run and exited before AwaitReady saw
   * them ready: they are past ready, not broken.
   */
  startInstant(launchedAt: number, readyTimeoutSeconds: number): string | undefined;
  /** Whether a running pod can take the start signal (k6: its VUs are initialized, status 4, not only its REST API answering). */
  readiness(cluster: ClusterClient, namespace: string, pod: string): Promise<RunnerReadiness>;
  /**
   * Starts every ready runner at once, then verifies each one really runs. Throws a retryable error
   * when a runner is not ready (then nothing is sent to any) or did not start; the retry sends the
   * start only to runners that have not taken it.
   */
  start(ctx: StartContext, pods: ReadyPod[]): Promise<StartResult>;
  /**
   * Starts a replacement runner (onRunnerRestart: restart); true once it runs its test. `setupFrom`:
   * the coordinator pod whose setup data it gets first (setup() once per run).
   */
  startReplacement(cluster: ClusterClient, namespace: string, pod: string, setupFrom?: string): Promise<boolean>;
  /** Runs teardown() once on the coordinator (setup() once per run); absent for an engine without one. */
  teardown?(call: CoordinatorCall): Promise<TeardownOutcome>;
  /** True when a running runner can be told to stop and keep its partial result; false: it is deleted. */
  readonly stopsGracefully: boolean;
  /** The exit code of a runner that `stop` ended (k6 103: stopped through its REST API); absent when stopping deletes it. */
  readonly stoppedExitCode?: number;
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
  /**
   * Why a runner's log holds no result (parseResult gave undefined), in the engine's own words and
   * short (k6: `k6: failed to handle the end-of-test summary: could not open '/x': no such file or
   * directory`), or undefined when the log does not say. Collect adds it to the run's reason
   * (`runner 2 produced no result (k6: …)`). Optional: without it the reason says "produced no result".
   */
  missingResultReason?(log: string): string | undefined;

  /**
   * When the runner's load began, read from the head of its log as the kubelet serves it with
   * `timestamps=true` (each line `<RFC 3339 time> <text>`; the head may end inside a line): `at`, the
   * timestamp of the engine's line that shows the load began (epoch ms), and `after`, the previous
   * line's (the load had not begun then), if there is one; undefined when the head has no such line.
   * Optional: for engines whose runners start themselves (Gatling: its `Simulation <class> started...`
   * line), Collect reads each runner's log head for it and records the run's measured start; without
   * it (k6, whose starts Start measures) Collect reads no head.
   */
  startFromLog?(timestampedLogHead: string): LogStart | undefined;
}

/** A runner's start as its log shows it (EngineAdapter.startFromLog): cluster clock (the kubelet's), epoch ms. */
export interface LogStart {
  /** The line that shows the load began was written then. */
  at: number;
  /** The line before it was written then: the load had not begun yet. */
  after?: number;
}
