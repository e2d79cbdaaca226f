/**
 * A stage's view of its run: the ledger's record (run item + stage outputs), the spec it was admitted
 * with, and the client of its cluster. The inline script's text is read only for the stages that
 * make the script ConfigMap (Prepare, Launch): every poll reads the run, and the text may be
 * maxScriptBytes (architecture §4). The spec's type says which read it came from.
 */
import { Role } from '../core/runner-contract';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { KubeObject } from '../cluster/cluster-client';
import { jobFacts, podFacts, type JobFacts, type PodFacts } from '../cluster/observe';
import { InvalidTransition, RunEnded, RunNotFound, StoreError } from '../core/errors';
import type { RunSpec, RunSpecWithoutScript } from '../core/spec';
import type { Stage } from '../core/status';
import { StageState } from '../core/status';
import type { RunView } from '../ledger/ledger';
import type { StageDeps } from './deps';
import { clusterOfRunner, runClusters, type RunCluster } from './run-clusters';

/** `Spec`: RunSpec when read with the script, RunSpecWithoutScript otherwise; helpers that need neither take either. */
export interface RunContext<Spec extends RunSpec | RunSpecWithoutScript = RunSpec | RunSpecWithoutScript> {
  runId: string;
  view: RunView;
  spec: Spec;
  /** Every cluster of the run (run-clusters.ts), the home first; one for a run in one cluster. */
  clusters: RunCluster[];
  /** The home cluster: the k6 initializer and coordinator run there (core/placements.ts). */
  home: RunCluster;
}

/** Every stage's read: the run without its inline script's text. */
export function loadRun(deps: StageDeps, runId: string): Promise<RunContext<RunSpecWithoutScript>>;
/** Prepare's and Launch's read: with the inline script's text, which they put in the script ConfigMap. */
export function loadRun(deps: StageDeps, runId: string, options: { script: true }): Promise<RunContext<RunSpec>>;
export async function loadRun(deps: StageDeps, runId: string, options: { script?: boolean } = {}): Promise<RunContext> {
  const view = await deps.ledger.getRun(runId, { script: options.script === true });
  if (!view) throw new RunNotFound(runId);
  // The spec was validated and normalised at creation; the ledger hands it back as is (items.ts asAdmittedSpec).
  const spec = view.run.spec;
  if (options.script && !('configMap' in spec.script) && typeof spec.script.inline !== 'string') {
    // Never an empty script in the ConfigMap: a run item that lost its script reference is broken.
    throw new StoreError(`ledger run ${runId}: spec.script.inline is missing (the run item names ${spec.script.filename} but holds no script)`);
  }
  const clusters = await runClusters(deps, spec);
  return { runId, view, spec, clusters, home: clusters[0]! };
}

/**
 * Stages that act on the cluster (create, start, collect) do nothing for a run that has its outcome:
 * a late or duplicated invocation after the run ended must not start load or leave objects behind
 * (architecture §7: "a stage that creates never creates for a run that has an outcome").
 */
export function requireOpenRun(view: RunView, stage: Stage): void {
  const { outcome, runId } = view.run;
  if (outcome !== undefined) throw new RunEnded(runId, stage, outcome);
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

/** The cluster of runner `index` (the coordinator's, -1, is the home). */
export function clusterOf(run: RunContext, index: number): RunCluster {
  return clusterOfRunner(run.clusters, index);
}

/** The cluster a pod of the run is in: a runner's by its index; the initializer's and coordinator's is the home. */
export function clusterOfPod(run: RunContext, pod: Pick<PodFacts, 'role' | 'index'>): RunCluster {
  return pod.role === Role.runner && pod.index !== undefined ? clusterOf(run, pod.index) : run.home;
}

/** The run's Jobs, as facts (one list call per cluster, all at once). */
export async function listJobs(run: RunContext): Promise<JobFacts[]> {
  return (await listInEvery(run, 'Job')).map((o) => jobFacts(o as V1Job));
}

/** The run's pods, as facts (one list call per cluster, all at once); deleted pods are left out. */
export async function listPods(run: RunContext): Promise<PodFacts[]> {
  return (await listInEvery(run, 'Pod')).map((o) => podFacts(o as V1Pod)).filter((p) => !p.terminating);
}

/**
 * The run's pods in the clusters that answer (deleted ones left out), for best-effort work that must
 * not wait for a cluster that is down: stopping runners before teardown() (Cleanup deletes what is
 * left, in every cluster it can reach).
 */
export async function listReachablePods(run: RunContext): Promise<PodFacts[]> {
  const answers = await Promise.allSettled(run.clusters.map((c) => c.client.listByRun('Pod', c.namespace, run.runId)));
  return answers
    .flatMap((a) => (a.status === 'fulfilled' ? a.value : []))
    .map((o) => podFacts(o as V1Pod))
    .filter((p) => !p.terminating);
}

/** The run's objects of `kind` in every cluster of the run, the home's first. */
export async function listInEvery(run: RunContext, kind: 'Job' | 'Pod'): Promise<KubeObject[]> {
  return (await Promise.all(run.clusters.map((c) => c.client.listByRun(kind, c.namespace, run.runId)))).flat();
}

/**
 * The run's pods that may still generate load: Pending or Running, not being deleted. A concurrency
 * slot is not given up while there are any (cleanup.ts, sweep-slots.ts).
 */
export async function livePods(run: RunContext): Promise<string[]> {
  // k6's coordinator is never unpaused: it generates no load.
  return (await listPods(run)).filter((p) => p.role !== Role.coordinator && (p.phase === 'Pending' || p.phase === 'Running')).map((p) => p.name);
}

/**
 * Set when someone asked to abort the run (DELETE /runs/{id}, Ctrl-C locally): who, and when (epoch
 * ms). The time is compared with the runners' exit times, so it is on the cluster's clock: on AWS the
 * wall clock of both; locally the runtime records it on the simulated clock (local-runtime.ts).
 */
export function abortRequest(run: RunContext): { by: string; at: number } | undefined {
  const { abortRequestedAt, abortRequestedBy } = run.view.run;
  return abortRequestedAt ? { by: abortRequestedBy ?? 'unknown', at: Date.parse(abortRequestedAt) } : undefined;
}
