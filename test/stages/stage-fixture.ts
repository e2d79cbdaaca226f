/**
 * Shared setup of the per-stage contract tests (architecture §11): a run driven stage by stage, without the
 * state machine, by calling the stage functions the way the Tasks of run.asl.json do — each with the
 * real local runtime's StageDeps (dynalite ledger, kube-sim over HTTP) on the harness's virtual clock.
 * Poll stages are called again after `nextPollSeconds` of simulated time, as the Wait states would.
 */
import { newRunId } from '../../lambdas/core/run-id';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { StepPhase, type StepResult } from '../../lambdas/core/step';
import { Stage, type Outcome } from '../../lambdas/core/status';
import type { RunView } from '../../lambdas/ledger/ledger';
import { acquire } from '../../lambdas/stages/acquire';
import { admit, createRunFromInput, type AdmitPayload } from '../../lambdas/stages/admit';
import { awaitPrepared } from '../../lambdas/stages/await-prepared';
import { awaitReady } from '../../lambdas/stages/await-ready';
import { cleanup } from '../../lambdas/stages/cleanup';
import { collect } from '../../lambdas/stages/collect';
import { decide } from '../../lambdas/stages/decide';
import type { StageDeps } from '../../lambdas/stages/deps';
import { launch } from '../../lambdas/stages/launch';
import { notify } from '../../lambdas/stages/notify';
import { prepare } from '../../lambdas/stages/prepare';
import { start } from '../../lambdas/stages/start';
import { watch } from '../../lambdas/stages/watch';
import { Labels } from '../../lambdas/core/runner-contract';
import { executionArnFor } from '../../local/engine/local-execution';
import type { Harness } from '../support/local-runs';

type RequestLogEntry = Harness['kubeSim']['requestLog'][number];

export const NAMESPACE = 'loadplane';

/** The stages in the order the main path runs them: Stage lists them in lifecycle order (architecture §3). */
const MAIN_PATH: readonly Stage[] = Object.values(Stage);

/** Most polls a poll stage gets before the fixture gives up (a bound on a broken test, not a claim). */
const MAX_POLLS = 500;

export interface StageRun {
  runId: string;
  /** The execution ARN that admitted (and owns) the run. */
  execution: string;
  /** What each stage answered, by stage (a poll stage's last answer). */
  steps: Partial<Record<Stage, unknown>>;
}

/** Admit's payload as the Admit Task renders it: the execution's input, its ARN and its name (= the run id). */
export function admitPayload(spec: RunSpecInput, options: { runId?: string; execution?: string; input?: unknown } = {}): AdmitPayload {
  const runId = options.runId ?? newRunId();
  return {
    request: options.input ?? { spec, source: 'local' },
    execution: options.execution ?? executionArnFor(runId),
    executionName: runId,
  };
}

/**
 * Calls a poll stage until it stops answering `waiting` or `cruising` (Watch's polls in a cruise
 * window), sleeping its `nextPollSeconds` of simulated time in between (the Wait state). Returns the
 * last answer and how many calls it took.
 */
export async function pollUntilSettled<T extends StepResult>(h: Harness, poll: () => Promise<T>): Promise<{ step: T; polls: number }> {
  for (let polls = 1; polls <= MAX_POLLS; polls++) {
    const step = await poll();
    if (step.phase !== StepPhase.waiting && step.phase !== StepPhase.cruising) return { step, polls };
    await h.clock.sleep(step.nextPollSeconds * 1000);
  }
  throw new Error(`the poll stage was still waiting after ${MAX_POLLS} polls`);
}

/**
 * Admits a run for `spec` and runs the main path up to and including `last`, each poll stage until
 * it settles. A stage that ends the run (failed, timed out, aborted) stops the drive there (its answer
 * is in `steps`); the caller asserts what it expects. Decide gets Collect's verdict, as the Task does.
 */
export async function driveTo(h: Harness, spec: RunSpecInput, last: Stage, options: { runId?: string; execution?: string } = {}): Promise<StageRun> {
  const deps = h.runtime.deps;
  const payload = admitPayload(spec, options);
  const admitted = await admit(deps, payload);
  const run: StageRun = { runId: admitted.runId, execution: payload.execution, steps: { [Stage.Admit]: admitted } };
  if (admitted.duplicate) throw new Error(`driveTo: run ${admitted.runId} was admitted as a duplicate`);
  let verdict: StepResult | undefined;
  for (const stage of MAIN_PATH.slice(1, MAIN_PATH.indexOf(last) + 1)) {
    // IsDuplicate goes to Acquire only for a run in a concurrency group.
    if (stage === Stage.Acquire && !admitted.queued) continue;
    const answer = await runStage(h, deps, run.runId, stage, verdict);
    if (answer === SKIPPED) continue;
    run.steps[stage] = answer;
    if (isStep(answer)) {
      verdict = answer;
      // Prepare's `waiting` goes on to AwaitPrepared; failed, timed_out and aborted go to Decide.
      if (answer.phase !== StepPhase.done && answer.phase !== StepPhase.waiting) break;
    }
  }
  return run;
}

const SKIPPED = Symbol('skipped');

async function runStage(h: Harness, deps: StageDeps, runId: string, stage: Stage, verdict: StepResult | undefined): Promise<unknown> {
  switch (stage) {
    case Stage.Acquire:
      return (await pollUntilSettled(h, () => acquire(deps, runId))).step;
    case Stage.Prepare:
      return prepare(deps, runId);
    case Stage.AwaitPrepared:
      // Prepare answers `done` when there is nothing to wait for (Gatling): the Choice goes straight to Launch.
      if (verdict?.phase === StepPhase.done) return SKIPPED;
      return (await pollUntilSettled(h, () => awaitPrepared(deps, runId))).step;
    case Stage.Launch:
      return launch(deps, runId);
    case Stage.AwaitReady:
      return (await pollUntilSettled(h, () => awaitReady(deps, runId))).step;
    case Stage.Start:
      return start(deps, runId);
    case Stage.Watch:
      return (await pollUntilSettled(h, () => watch(deps, runId))).step;
    case Stage.Collect:
      return collect(deps, runId);
    case Stage.Decide:
      return decide(deps, runId, verdict ? { verdict } : {});
    case Stage.Notify:
      return notify(deps, runId);
    case Stage.Cleanup:
      return cleanup(deps, runId);
    default:
      throw new Error(`driveTo: ${stage} is not on the main path after Admit`);
  }
}

function isStep(answer: unknown): answer is StepResult {
  return typeof answer === 'object' && answer !== null && 'phase' in answer && 'nextPollSeconds' in answer;
}

/**
 * A run that exists in the ledger (as the API or a reaper would create it) but that no Admit has
 * admitted: no execution owns it and no stage has run. For the "earlier stage missing" contracts.
 */
export async function createdOnly(h: Harness, spec: RunSpecInput): Promise<string> {
  const runId = newRunId();
  await createRunFromInput(h.runtime.deps, { spec, source: 'local' }, { arn: executionArnFor(runId), name: runId });
  return runId;
}

/** Records `outcome` for the run through Decide (as a verdict would), before the stage under test runs. */
export async function endRun(h: Harness, runId: string, outcome: Outcome, reason = `ended ${outcome} by the test`): Promise<void> {
  await decide(h.runtime.deps, runId, { verdict: { phase: StepPhase.done, nextPollSeconds: 0, outcome, reason } });
}

/** The run with its stage items and notifications, read consistently. */
export async function viewOf(h: Harness, runId: string): Promise<RunView> {
  const view = await h.runtime.ledger.getRun(runId);
  if (!view) throw new Error(`run ${runId} is not in the ledger`);
  return view;
}

/** kube-sim's requests from here on: `since()` gives those made after the mark. */
export function markRequests(h: Harness): { since(): RequestLogEntry[]; writes(): RequestLogEntry[] } {
  const at = h.kubeSim.requestLog.length;
  const since = () => h.kubeSim.requestLog.slice(at);
  return { since, writes: () => since().filter((r) => r.method !== 'GET') };
}

/** The run's objects of one kind in kube-sim, optionally narrowed by role. */
export function objectsOf(h: Harness, kind: 'Job' | 'Pod' | 'Service' | 'ConfigMap', runId: string, role?: string): ReturnType<Harness['kubeSim']['list']> {
  const selector = `${Labels.runId}=${runId}${role ? `,${Labels.role}=${role}` : ''}`;
  return h.kubeSim.list(kind, NAMESPACE, selector);
}
