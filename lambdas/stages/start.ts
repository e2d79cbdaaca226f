/**
 * Start (architecture §3.5), through the engine's adapter. k6: unpause every runner concurrently through
 * the pods/proxy subresource, then check each reports running; a runner that did not start makes the
 * stage fail with a retryable error, and the retry re-sends the (idempotent) PATCH. Gatling: the
 * runners start themselves at the common instant fixed at Launch. Either way the started pod UIDs are
 * recorded, so Watch can tell a restarted runner from the one that was started.
 */
import { runDeadline } from '../core/deadlines';
import { RunStatus, Stage } from '../core/status';
import { engineAdapter } from '../engines';
import { admission } from './acquire';
import type { PreparedResult } from './await-prepared';
import type { ReadyResult } from './await-ready';
import type { StageDeps } from './deps';
import type { LaunchRecord } from './launch';
import { listPods, loadRun, outputOf, requireOpenRun, requireOutput } from './run-context';
import { runOnce } from './run-once';

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
    const { deadlines } = admission(run.view, Stage.Start);
    const launch = requireOutput<LaunchRecord>(run.view, Stage.Launch, Stage.Start);
    const ready = requireOutput<ReadyResult>(run.view, Stage.AwaitReady, Stage.Start);
    const pods = Object.entries(ready.pods ?? {}).map(([index, pod]) => ({ index: Number(index), ...pod }));

    const startedAt = await engineAdapter(run.spec.engine).start(
      {
        cluster: run.cluster,
        namespace: run.namespace,
        now: deps.now,
        startAt: launch.startAt,
        exitedPods: async () => new Set((await listPods(run)).filter((p) => p.exitCode !== undefined).map((p) => p.name)),
      },
      pods,
    );

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
