/**
 * A stage's view of its run: the ledger's record (run item + stage outputs, one Query), the spec it
 * was admitted with, and the client of its cluster.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { ClusterClient } from '../cluster/cluster-client';
import { jobFacts, podFacts, type JobFacts, type PodFacts } from '../cluster/observe';
import { InvalidTransition, RunNotFound } from '../core/errors';
import type { RunSpec } from '../core/spec';
import type { Stage } from '../core/status';
import { StageState } from '../core/status';
import type { RunView } from '../ledger/ledger';
import type { StageDeps } from './deps';

export interface RunContext {
  runId: string;
  view: RunView;
  spec: RunSpec;
  namespace: string;
  cluster: ClusterClient;
}

export async function loadRun(deps: StageDeps, runId: string): Promise<RunContext> {
  const view = await deps.ledger.getRun(runId);
  if (!view) throw new RunNotFound(runId);
  // The spec was validated and normalised at creation; the stored copy is trusted as is, so a later
  // change of the deployment's allow-lists does not strand runs already admitted.
  const spec = view.run.spec as unknown as RunSpec;
  return { runId, view, spec, namespace: spec.cluster.namespace, cluster: await deps.clusterFor(spec.cluster.name) };
}

/** The recorded output of a completed stage, or undefined. */
export function outputOf<T>(view: RunView, stage: Stage): T | undefined {
  const item = view.stages[stage];
  return item?.state === StageState.completed ? (item.output as T) : undefined;
}

/** The recorded output of a stage that must have completed before this one. */
export function requireOutput<T>(view: RunView, stage: Stage, by: Stage): T {
  const output = outputOf<T>(view, stage);
  if (output === undefined) throw new InvalidTransition(`${by} needs ${stage} to have completed for run ${view.run.runId}`, view.stages[stage]);
  return output;
}

/** The run's Jobs, as facts (one list call). */
export async function listJobs(run: RunContext): Promise<JobFacts[]> {
  return (await run.cluster.listByRun('Job', run.namespace, run.runId)).map((o) => jobFacts(o as V1Job));
}

/** The run's pods, as facts (one list call); deleted pods are left out. */
export async function listPods(run: RunContext): Promise<PodFacts[]> {
  return (await run.cluster.listByRun('Pod', run.namespace, run.runId)).map((o) => podFacts(o as V1Pod)).filter((p) => !p.terminating);
}

/** Set when someone asked to abort the run (DELETE /runs/{id}, Ctrl-C locally): who, and when (ledger clock, epoch ms). */
export function abortRequest(run: RunContext): { by: string; at: number } | undefined {
  const { abortRequestedAt, abortRequestedBy } = run.view.run;
  return abortRequestedAt ? { by: abortRequestedBy ?? 'unknown', at: Date.parse(abortRequestedAt) } : undefined;
}
