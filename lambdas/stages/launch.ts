/**
 * Launch (architecture §3.3): N runner Jobs (k6: paused, with their execution segments), owned by the
 * run's anchor, which they own in turn (architecture §7); fixes the ready deadline and, for an engine
 * whose runners start themselves (Gatling), the common start instant.
 */
import type { V1Job } from '@kubernetes/client-node';
import { launchAdoptions } from '../cluster/manifests';
import { engineAdapter } from '../engines';
import { ENV_START_AT, RUNNER_CONTAINER } from '../core/runner-contract';
import { readyDeadline, runnerJobDeadlineSeconds } from '../core/deadlines';
import { InvalidTransition } from '../core/errors';
import { type Outcome, RunnerRestartPolicy, RunStatus, Stage } from '../core/status';
import { admission } from './acquire';
import type { PreparedResult } from './await-prepared';
import { createForRun } from './create-all';
import type { StageDeps } from './deps';
import { listInEvery, loadRun, requireOpenRun, requireOutput, type RunContext } from './run-context';
import { runOnce } from './run-once';
import { runnerPlan } from './runner-plan';

export interface LaunchRecord {
  /** Cluster clock (epoch ms). */
  launchedAt: number;
  readyBy: number;
  /** Gatling: the common start instant, ISO 8601 UTC. */
  startAt?: string;
}

export async function launch(deps: StageDeps, runId: string): Promise<LaunchRecord> {
  return runOnce(deps, runId, Stage.Launch, async ({ first }) => {
    const run = await loadRun(deps, runId, { script: true });
    requireOpenRun(run.view, Stage.Launch);
    const { deadlines } = admission(run.view, Stage.Launch);
    const engine = engineAdapter(run.spec.engine);
    // The script was checked first: k6's initializer answered (AwaitPrepared), Gatling's ConfigMap exists (Prepare).
    const prepared = requireOutput<PreparedResult>(run.view, engine.inspectsScript ? Stage.AwaitPrepared : Stage.Prepare, Stage.Launch);
    const launchedAt = deps.now();
    const readyBy = readyDeadline(launchedAt, run.spec.timeouts, deadlines.totalBy);
    const instant = engine.startInstant(launchedAt, run.spec.timeouts.ready);
    // A first attempt has no earlier one whose instant it must keep.
    const startAt = instant === undefined ? undefined : ((first ? undefined : await startAtOfEarlierAttempt(run)) ?? instant);
    const timing = {
      runSeconds: runnerJobDeadlineSeconds({
        launchedAt,
        readyBy,
        totalBy: deadlines.totalBy,
        runSeconds: run.spec.timeouts.run,
        expectedSeconds: prepared.requirements?.expectedDurationSeconds,
        restart: run.spec.onRunnerRestart === RunnerRestartPolicy.restart,
      }),
      ...(startAt ? { startAt } : {}),
    };
    // Each cluster its block of runners (and, in the home, k6's coordinator); where Prepare did not run,
    // the adoptions make the anchor and the script ConfigMap there first.
    const parts = run.clusters.map((at) => {
      const plan = runnerPlan(runId, run.spec, timing, at);
      const jobs = engine.launchManifests(plan);
      return { at, objects: jobs, adopted: launchAdoptions(plan, jobs, engine.anchorData?.(plan)) };
    });
    // The status write after creating is also the read that finds a run that ended meanwhile.
    await createForRun(deps, run, Stage.Launch, parts, { first, outcomeAfter: () => moveToLaunching(deps, runId) });
    return { launchedAt, readyBy, ...(startAt ? { startAt } : {}) };
  });
}

/**
 * Moves the run to LAUNCHING; the run's outcome if it has one (an outcome is the last status: the
 * write is refused, and the refusal carries the run as it found it), else undefined.
 */
async function moveToLaunching(deps: StageDeps, runId: string): Promise<Outcome | undefined> {
  try {
    await deps.ledger.setStatus(runId, RunStatus.LAUNCHING);
    return undefined;
  } catch (err) {
    const outcome = err instanceof InvalidTransition ? (err.current as { outcome?: Outcome } | undefined)?.outcome : undefined;
    if (outcome === undefined) throw err;
    return outcome;
  }
}

/**
 * A retried Launch must give the runners the instant the first attempt gave those it created, or
 * they would start apart: the Jobs are immutable, so the instant is read back from one of them.
 */
async function startAtOfEarlierAttempt(run: RunContext): Promise<string | undefined> {
  // Any cluster's: the earlier attempt may have reached some clusters only.
  const jobs = (await listInEvery(run, 'Job')) as V1Job[];
  for (const job of jobs) {
    const env = job.spec?.template.spec?.containers.find((c) => c.name === RUNNER_CONTAINER)?.env;
    const value = env?.find((e) => e.name === ENV_START_AT)?.value;
    if (value) return value;
  }
  return undefined;
}
