/**
 * Reading what the cluster says about a run's pods and Jobs (pure): the facts the poll stages decide
 * on — phase, readiness, exit code, why a pod is stuck, which runner it belongs to, its UID.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { Labels, RUNNER_CONTAINER } from '../core/runner-contract';

export interface PodFacts {
  name: string;
  uid: string;
  role?: string;
  /** Runner index, for runner pods. */
  index?: number;
  phase: string;
  /** Running and its container reports ready. */
  ready: boolean;
  /** The runner container's exit code, once terminated. */
  exitCode?: number;
  /** Why the container is not running yet or not any more (ErrImagePull, OOMKilled, Unschedulable, ...). */
  reason?: string;
  message?: string;
  createdAt: number;
  /**
   * When the runner container started (epoch ms), while it runs or after it ended; undefined before.
   * Under `onRunnerRestart: restart` it dates a replacement's start (lambdas/core/restart.ts).
   */
  startedAt?: number;
  /** When the runner container ended (epoch ms), if it did. */
  finishedAt?: number;
  /** Deleted, or being deleted: not a runner any more. */
  terminating: boolean;
  /** Evicted or preempted (condition DisruptionTarget). */
  disrupted: boolean;
}

export function podFacts(pod: V1Pod): PodFacts {
  const labels = pod.metadata?.labels ?? {};
  const index = labels[Labels.runnerIndex];
  const container = pod.status?.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER) ?? pod.status?.containerStatuses?.[0];
  const terminated = container?.state?.terminated;
  const waiting = container?.state?.waiting;
  const startedAt = container?.state?.running?.startedAt ?? terminated?.startedAt;
  const unschedulable = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  const phase = pod.status?.phase ?? 'Unknown';
  return {
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    ...(labels[Labels.role] ? { role: labels[Labels.role] } : {}),
    ...(index !== undefined && /^\d+$/.test(index) ? { index: Number(index) } : {}),
    phase,
    ready: phase === 'Running' && container?.ready === true,
    ...(terminated ? { exitCode: terminated.exitCode } : {}),
    ...pick(
      terminated?.reason ?? waiting?.reason ?? unschedulable?.reason ?? pod.status?.reason,
      terminated?.message ?? waiting?.message ?? unschedulable?.message ?? pod.status?.message,
    ),
    createdAt: toMs(pod.metadata?.creationTimestamp),
    ...(startedAt ? { startedAt: toMs(startedAt) } : {}),
    ...(terminated?.finishedAt ? { finishedAt: toMs(terminated.finishedAt) } : {}),
    terminating: pod.metadata?.deletionTimestamp !== undefined && pod.metadata?.deletionTimestamp !== null,
    disrupted: pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True') ?? false,
  };
}

function pick(reason?: string, message?: string): { reason?: string; message?: string } {
  return { ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

function toMs(value: Date | string | undefined): number {
  if (!value) return 0;
  return value instanceof Date ? value.getTime() : Date.parse(value);
}

/** Waiting reasons that never resolve by waiting longer. */
const STUCK_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);

export function isStuck(facts: PodFacts): boolean {
  return facts.reason !== undefined && STUCK_REASONS.has(facts.reason);
}

export interface JobFacts {
  name: string;
  role?: string;
  index?: number;
  complete: boolean;
  failed: boolean;
  /** The Failed condition's reason (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy). */
  reason?: string;
  message?: string;
}

export function jobFacts(job: V1Job): JobFacts {
  const labels = job.metadata?.labels ?? {};
  const index = labels[Labels.runnerIndex];
  const conditions = job.status?.conditions ?? [];
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  const complete = conditions.some((c) => c.type === 'Complete' && c.status === 'True');
  return {
    name: job.metadata?.name ?? '',
    ...(labels[Labels.role] ? { role: labels[Labels.role] } : {}),
    ...(index !== undefined && /^\d+$/.test(index) ? { index: Number(index) } : {}),
    complete,
    failed: failed !== undefined,
    ...pick(failed?.reason, failed?.message),
  };
}
