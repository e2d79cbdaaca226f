/**
 * Prepare (architecture §3.2): the run's anchor (architecture §7: it owns every other object of the
 * run), the script ConfigMap (inline scripts) and, for an engine that inspects the script (k6), the
 * initializer Job, whose answer AwaitPrepared waits for. Gatling has nothing to inspect, so it goes
 * straight on.
 */
import { prepareObjects } from '../cluster/manifests';
import { engineAdapter } from '../engines';
import { jobDeadlineSeconds } from '../core/deadlines';
import { done, waiting, type StepResult } from '../core/step';
import { Stage } from '../core/status';
import { admission } from './acquire';
import type { StageDeps } from './deps';
import { createForRun } from './create-all';
import { loadRun, requireOpenRun } from './run-context';
import { runOnce } from './run-once';
import { runnerPlan } from './runner-plan';

/** The initializer needs a few seconds to schedule and inspect; the first poll comes soon after. */
const FIRST_POLL_SECONDS = 2;

export async function prepare(deps: StageDeps, runId: string): Promise<StepResult> {
  return runOnce(deps, runId, Stage.Prepare, async ({ first }) => {
    const run = await loadRun(deps, runId, { script: true });
    requireOpenRun(run.view, Stage.Prepare);
    const { deadlines } = admission(run.view, Stage.Prepare);
    const now = deps.now();
    const plan = runnerPlan(runId, run.spec, { prepareSeconds: jobDeadlineSeconds(now, deadlines.prepareBy) });
    const engine = engineAdapter(run.spec.engine);
    // The home cluster only: the initializer inspects the script once; Launch brings the script to the others.
    await createForRun(deps, run, Stage.Prepare, [{ at: run.home, objects: prepareObjects(plan, engine.prepareManifests(plan), engine.anchorData?.(plan)) }], {
      first,
    });
    return engine.inspectsScript ? waiting(FIRST_POLL_SECONDS) : done();
  });
}
