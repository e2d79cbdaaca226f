/**
 * Start (architecture §3.5). k6: unpause every runner concurrently through the pods/proxy subresource,
 * then check each reports running; a runner that did not start makes the stage fail with a
 * retryable error, and the retry re-sends the (idempotent) PATCH. Gatling: the runners start
 * themselves at the common instant fixed at Launch. Either way the started pod UIDs are recorded,
 * so Watch can tell a restarted runner from the one that was started.
 */
import { ClusterUnavailable } from '../core/errors';
import { runDeadline } from '../core/deadlines';
import { Engine, RunStatus, Stage } from '../core/status';
import type { AdmitRecord } from './admit';
import type { PreparedResult } from './await-prepared';
import type { ReadyResult } from './await-ready';
import type { StageDeps } from './deps';
import { k6Status, patchK6Status } from './k6-api';
import type { LaunchRecord } from './launch';
import { listPods, loadRun, outputOf, requireOpenRun, requireOutput, type RunContext } from './run-context';
import { runOnce } from './run-once';
import { runnerList } from './runners';

export interface StartRecord {
  /** Cluster clock (epoch ms). */
  startedAt: number;
  runBy: number;
  /** When the test should end (k6 inspect's totalDuration after the start), if known. */
  expectedEndAt?: number;
  /** Runner index → UID of the pod that was started. */
  startedPods: Record<number, string>;
}

export async function start(deps: StageDeps, runId: string): Promise<StartRecord> {
  return runOnce(deps, runId, Stage.Start, async () => {
    const run = await loadRun(deps, runId);
    requireOpenRun(run.view, Stage.Start);
    const { deadlines } = requireOutput<AdmitRecord>(run.view, Stage.Admit, Stage.Start);
    const launch = requireOutput<LaunchRecord>(run.view, Stage.Launch, Stage.Start);
    const ready = requireOutput<ReadyResult>(run.view, Stage.AwaitReady, Stage.Start);
    const pods = Object.entries(ready.pods ?? {}).map(([index, pod]) => ({ index: Number(index), ...pod }));

    let startedAt: number;
    if (run.spec.engine === Engine.k6) {
      // All at once, not one after another: start skew must not grow with N (k6-operator's starter does).
      await Promise.all(pods.map((p) => unpause(run, p.name)));
      startedAt = deps.now();
      const statuses = await Promise.all(pods.map((p) => k6Status(run.cluster, run.namespace, p.name)));
      let notStarted = pods.filter((_, i) => statuses[i]?.paused !== false);
      if (notStarted.length > 0) {
        // A runner whose API no longer answers because it already ran and exited was started (by an
        // earlier attempt of this stage): Watch judges its exit code.
        const exited = new Set((await listPods(run)).filter((p) => p.exitCode !== undefined).map((p) => p.name));
        notStarted = notStarted.filter((p) => !exited.has(p.name));
      }
      if (notStarted.length > 0) {
        throw new ClusterUnavailable(`start: ${runnerList(notStarted.map((p) => p.index))} did not report running after the start request`);
      }
    } else {
      startedAt = Date.parse(launch.startAt!);
    }

    const expected = outputOf<PreparedResult>(run.view, Stage.AwaitPrepared)?.requirements?.expectedDurationSeconds;
    await deps.ledger.setStatus(runId, RunStatus.RUNNING);
    return {
      startedAt,
      runBy: runDeadline(startedAt, run.spec.timeouts, expected, deadlines.totalBy),
      ...(expected !== undefined ? { expectedEndAt: startedAt + expected * 1000 } : {}),
      startedPods: Object.fromEntries(pods.map((p) => [p.index, p.uid])),
    };
  });
}

/** The start request; a pod that cannot be reached (503: not running) is left to the check that follows. */
async function unpause(run: RunContext, pod: string): Promise<void> {
  try {
    await patchK6Status(run.cluster, run.namespace, pod, { paused: false });
  } catch (err) {
    if (!(err instanceof ClusterUnavailable && err.status === 503)) throw err;
  }
}
