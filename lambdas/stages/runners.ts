/**
 * The run's runners as the cluster sees them, one entry per index 0..N-1: its Job and its pods
 * (oldest first; a replacement comes last). Two list calls, whatever N is (DESIGN §3.6).
 */
import { type JobFacts, type PodFacts } from '../cluster/observe';
import { Role } from '../core/runner-contract';
import { listJobs, listPods, type RunContext } from './run-context';

export interface RunnerView {
  index: number;
  job?: JobFacts;
  pods: PodFacts[];
  /** The newest pod: the one that runs (or ran) the test. */
  latest?: PodFacts;
}

export async function observeRunners(run: RunContext): Promise<RunnerView[]> {
  const [jobs, pods] = await Promise.all([listJobs(run), listPods(run)]);
  return Array.from({ length: run.spec.parallelism }, (_, index) => {
    const own = pods.filter((p) => p.role === Role.runner && p.index === index).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    return {
      index,
      job: jobs.find((j) => j.role === Role.runner && j.index === index),
      pods: own,
      latest: own[own.length - 1],
    };
  });
}

/** `runner 2: Pending (Unschedulable: 0/3 nodes are available)`: what a stuck runner is doing. */
export function describeRunner(runner: RunnerView): string {
  const pod = runner.latest;
  if (!pod) return `runner ${runner.index}: no pod`;
  const why = pod.reason ? ` (${pod.reason}${pod.message ? `: ${pod.message}` : ''})` : '';
  return `runner ${runner.index}: ${pod.phase}${why}`;
}

/** "runners 0, 3 and 7" / "runner 2" */
export function runnerList(indexes: number[]): string {
  if (indexes.length === 1) return `runner ${indexes[0]}`;
  return `runners ${indexes.slice(0, -1).join(', ')} and ${indexes[indexes.length - 1]}`;
}
