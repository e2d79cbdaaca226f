/**
 * teardown() once per run (k6 setupTeardown perRun, engines/k6/coordinator.ts), the first thing Cleanup
 * does, on every path the run can end by: once its outcome is decided, when the test was started (or
 * setup() ran), never when setup() failed (k6 itself skips teardown() then). Runners still running (a
 * run that timed out, failed or was aborted) are stopped first when Cleanup deletes them, so teardown()
 * follows every runner; when the spec keeps them, they run on as before and may overlap it. The
 * coordinator is stopped afterwards, whatever the cleanup policy, so it holds nothing open.
 * teardown()'s own result does not change the run's outcome (it is decided and notified by then): it is
 * recorded in Cleanup's output and logged.
 */
import { SetupMark, TeardownMark, type StageMarks } from '../core/stage-marks';
import { hasCoordinator } from '../core/spec';
import { Role } from '../core/runner-contract';
import { Stage } from '../core/status';
import { engineAdapter, type TeardownOutcome } from '../engines';
import { K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../engines/k6/lifecycle-options';
import type { PreparedResult } from './await-prepared';
import type { ReadyResult } from './await-ready';
import type { StageDeps } from './deps';
import { clusterOfPod, listReachablePods, outputOf, type RunContext } from './run-context';
import type { StartRecord } from './start';

/** Whether teardown() is due: the test was started with setup() not failed, or setup() ran and Start was cut off after it. */
function teardownDue(run: RunContext): boolean {
  const start = outputOf<StartRecord>(run.view, Stage.Start);
  if (start) return !(start.setup && 'failed' in start.setup);
  // Start was cut off after setup() returned (not after it threw: then k6 itself skips teardown()).
  return run.view.stages[Stage.Start]?.marks?.includes(SetupMark.done) ?? false;
}

/** Runs teardown() once when due; undefined when the run has no coordinator or it is not due. */
export async function teardownOnRun(deps: StageDeps, run: RunContext, marks: StageMarks, deleting: boolean): Promise<TeardownOutcome | undefined> {
  const engine = engineAdapter(run.spec.engine);
  if (!hasCoordinator(run.spec) || !engine.teardown) return undefined;
  const coordinator = outputOf<ReadyResult>(run.view, Stage.AwaitReady)?.coordinator;
  if (!coordinator || !teardownDue(run)) return undefined;
  const lifecycle = outputOf<PreparedResult>(run.view, Stage.AwaitPrepared)?.lifecycle;
  const pods = await listReachablePods(run);
  const live = (role: string) => pods.filter((p) => p.role === role && p.phase === 'Running' && p.exitCode === undefined);
  const outcome = await (async (): Promise<TeardownOutcome> => {
    if (lifecycle?.noTeardown) return { ran: false, skipped: "the script's options or arguments say noTeardown" };
    // An earlier attempt of Cleanup sent it (and may have stopped the coordinator since): its marks say what became of it.
    const sentBefore = Object.values(TeardownMark).some((m) => marks.has(m));
    if (!sentBefore && !live(Role.coordinator).some((p) => p.name === coordinator.name)) return { ran: false, skipped: 'the coordinator no longer runs' };
    if (!sentBefore && deleting && engine.stopsGracefully) {
      await Promise.all(
        live(Role.runner).map((p) => {
          const at = clusterOfPod(run, p);
          return engine.stop(at.client, at.namespace, p.name).catch(() => undefined);
        }),
      );
    }
    return engine.teardown!({
      cluster: run.home.client,
      namespace: run.home.namespace,
      coordinator: coordinator.name,
      marks,
      functionTimeoutSeconds: lifecycle?.teardownTimeoutSeconds ?? K6_DEFAULT_FUNCTION_TIMEOUT_SECONDS,
    });
  })();
  deps.log({ runId: run.runId, stage: Stage.Cleanup, message: teardownMessage(outcome) });
  // The coordinator is never unpaused: stopped now (k6 exits 103, no export), or deleted with the run.
  if (!deleting) await engine.stop(run.home.client, run.home.namespace, coordinator.name).catch(() => undefined);
  return outcome;
}

function teardownMessage(outcome: TeardownOutcome): string {
  if (!outcome.ran) return `teardown() not run on the coordinator: ${outcome.skipped}`;
  return outcome.failed ? `teardown() failed on the coordinator: ${outcome.failed}` : 'teardown() ran once on the coordinator';
}
