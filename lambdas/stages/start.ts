/**
 * Start (architecture §3.5), through the engine's adapter. k6: only when every runner is ready (its VUs
 * initialized), unpause them all concurrently through the pods/proxy subresource, then check each
 * reports running and record when it was seen to (the measured start and skew, start-skew.ts); a runner
 * not ready or not started makes the stage fail with a retryable error, and the retry sends the
 * unpause only to runners that have not taken it (k6 answers a second one with 500). Gatling: the
 * runners start themselves at the common instant fixed at Launch. Either way the started pod UIDs are
 * recorded, so Watch can tell a restarted runner from the one that was started.
 */
import { runDeadline } from '../core/deadlines';
import { clusterSkews, measuredStart, type MeasuredStart } from '../core/start-skew';
import { RunStatus, Stage } from '../core/status';
import { engineAdapter } from '../engines';
import { admission } from './acquire';
import type { PreparedResult } from './await-prepared';
import type { ReadyResult } from './await-ready';
import type { StageDeps } from './deps';
import type { LaunchRecord } from './launch';
import { clusterOf, listPods, loadRun, outputOf, requireOpenRun, requireOutput, type RunContext } from './run-context';
import { runOnce } from './run-once';
import type { RunView } from '../ledger/ledger';
import type { SetupOutcome } from '../engines/engine-adapter';
import { K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../engines/k6/lifecycle-options';

export interface StartRecord {
  /** Cluster clock (epoch ms). */
  startedAt: number;
  runBy: number;
  /** The most the test should take: k6 inspect's totalDuration (gracefulStop included) after the start, if known. Deadlines follow it. */
  expectedEndAt?: number;
  /** When the test's schedule ends (its scenarios' durations, no gracefulStop), if known: what progress shows and polls close in on. */
  scheduledEndAt?: number;
  /** Runner index → UID of the pod that was started. */
  startedPods: Record<number, string>;
  /** When each runner was seen to start and the run's start skew (k6; Gatling's are read from the logs at Collect). */
  measured?: MeasuredStart;
  /** setup() once per run (k6's coordinator): what it came to. `failed`: nothing was started, Watch ends the run FAILED. */
  setup?: SetupOutcome;
}

/**
 * The run's measured start: k6's from Start (its status turning to running), Gatling's from Collect (each
 * runner's "started" log line); undefined before it is known, or for a record older than the measurement.
 */
export function measuredStartOf(view: RunView): MeasuredStart | undefined {
  return outputOf<StartRecord>(view, Stage.Start)?.measured ?? outputOf<{ measuredStart?: MeasuredStart }>(view, Stage.Collect)?.measuredStart;
}

export async function start(deps: StageDeps, runId: string): Promise<StartRecord> {
  return runOnce(deps, runId, Stage.Start, async ({ marks }) => {
    const run = await loadRun(deps, runId);
    requireOpenRun(run.view, Stage.Start);
    const { deadlines } = admission(run.view, Stage.Start);
    const launch = requireOutput<LaunchRecord>(run.view, Stage.Launch, Stage.Start);
    const ready = requireOutput<ReadyResult>(run.view, Stage.AwaitReady, Stage.Start);
    const pods = Object.entries(ready.pods ?? {}).map(([index, pod]) => {
      const at = clusterOf(run, Number(index));
      return { index: Number(index), ...pod, cluster: at.client, namespace: at.namespace };
    });
    const prepared = outputOf<PreparedResult>(run.view, Stage.AwaitPrepared);
    const lifecycle = prepared?.lifecycle;
    const setup = ready.coordinator && {
      cluster: run.home.client,
      namespace: run.home.namespace,
      coordinator: ready.coordinator.name,
      marks,
      functionTimeoutSeconds: lifecycle?.setupTimeoutSeconds ?? K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS,
      ...(lifecycle?.noSetup ? { skip: "the script's options or arguments say noSetup" } : {}),
    };

    const started = await engineAdapter(run.spec.engine).start(
      {
        now: deps.now,
        startAt: launch.startAt,
        exitedPods: async () => new Set((await listPods(run)).filter((p) => p.exitCode !== undefined).map((p) => p.name)),
        ...(setup ? { setup } : {}),
      },
      pods,
    );
    const { startedAt, observed } = started;
    // setup() failed: nothing was started; Watch ends the run with its reason, Cleanup deletes the runners.
    if (started.setup && 'failed' in started.setup) return { startedAt, runBy: startedAt, startedPods: {}, setup: started.setup };

    const measured = observed && withClusterSkews(run, measuredStart(observed.source, run.spec.parallelism, observed.starts));
    const requirements = prepared?.requirements;
    const expected = requirements?.expectedDurationSeconds;
    const scheduled = requirements?.scheduledDurationSeconds;
    await deps.ledger.setStatus(runId, RunStatus.RUNNING);
    return {
      startedAt,
      runBy: runDeadline(startedAt, run.spec.timeouts, expected, deadlines.totalBy),
      ...(expected !== undefined ? { expectedEndAt: startedAt + expected * 1000 } : {}),
      ...(scheduled !== undefined && (expected === undefined || scheduled < expected) ? { scheduledEndAt: startedAt + scheduled * 1000 } : {}),
      startedPods: Object.fromEntries(pods.map((p) => [p.index, p.uid])),
      ...(measured ? { measured } : {}),
      ...(started.setup ? { setup: started.setup } : {}),
    };
  });
}

/** A run across clusters: the measured start with each cluster's own skew beside the run's (start-skew.ts). */
export function withClusterSkews(run: Pick<RunContext, 'clusters'>, measured: MeasuredStart | undefined): MeasuredStart | undefined {
  if (!measured || run.clusters.length < 2) return measured;
  return { ...measured, clusters: clusterSkews(measured, run.clusters) };
}
