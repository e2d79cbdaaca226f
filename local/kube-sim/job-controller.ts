/**
 * The Job controller: keeps `parallelism` pods running from the template until `completions` succeed,
 * counts every finished pod exactly once into status.succeeded / status.failed (as Kubernetes does
 * with its tracking finalizers, so counts survive pod deletion), applies podFailurePolicy, backoffLimit
 * (with exponential backoff between retries) and activeDeadlineSeconds, and deletes finished Jobs after
 * ttlSecondsAfterFinished. All times are sim time.
 *
 * Its pods go through the API server's admission like any pod create (Pod Security: pod-security/).
 * A refused create is recorded as kube-controller-manager does (Warning `FailedCreate`, `Error
 * creating: <the API error>`) and retried with the Job controller's API backoff (1 s, doubling up to
 * 1 min; reset by a successful sync), not on every event: the Job stays active without pods meanwhile.
 */
import { ApiStatusError } from './api-status';
import { jobPodLabels } from './defaults';
import { SOURCES, type EventRecorder } from './event-recorder';
import { k8sTime } from './k8s-time';
import type { ObjectStore, StoreEvent } from './object-store';
import { admitPodCreate } from './pod-security';
import { isTerminal } from './pod-status';
import type { Scheduler } from './sim-clock';
import type { Job, JobCondition, Pod, PodFailurePolicyRule } from './wire-types';

const BACKOFF_BASE_MS = 10_000;
const BACKOFF_MAX_MS = 360_000;
/** The Job controller's work-queue backoff after a failed sync (DefaultJobApiBackOff, MaxJobApiBackOff). */
const API_BACKOFF_BASE_MS = 1_000;
const API_BACKOFF_MAX_MS = 60_000;

interface JobMemory {
  /** Pods already counted into succeeded/failed (or ignored by policy). */
  counted: Set<string>;
  /** Active pods deleted before they finished: they count as failed. */
  deletedActive: Set<string>;
  lastFailureAt?: number;
  timersArmed: boolean;
  /** Syncs in a row whose pod creation failed (the work queue's per-item failure count). */
  createFailures: number;
  /** No pod creation before this sim instant (API backoff after a failed create). */
  createRetryAt?: number;
}

type Verdict = { action: 'count' } | { action: 'ignore' } | { action: 'fail'; message: string };

export class JobController {
  private readonly memory = new Map<string, JobMemory>();
  private readonly pending = new Set<string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly scheduler: Scheduler,
    private readonly events: EventRecorder,
  ) {
    store.onChange((event) => this.observe(event));
  }

  private event(job: Job, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.record({ involved: job, type, reason, message, source: SOURCES.jobController });
  }

  private observe(event: StoreEvent): void {
    if (event.kind === 'Job') {
      if (event.type === 'DELETED') this.memory.delete(event.object.metadata.uid!);
      else this.enqueue(event.object.metadata.namespace!, event.object.metadata.name!);
      return;
    }
    if (event.kind !== 'Pod') return;
    const owner = event.object.metadata.ownerReferences?.find((r) => r.kind === 'Job' && r.controller);
    if (!owner) return;
    const pod = event.object as Pod;
    const job = this.store.get('Job', pod.metadata.namespace, owner.name);
    if (job?.metadata.uid !== owner.uid) return;
    if (event.type === 'DELETED' && !isTerminal(pod)) this.memoryOf(owner.uid).deletedActive.add(pod.metadata.uid!);
    this.enqueue(pod.metadata.namespace!, owner.name);
  }

  private memoryOf(jobUid: string): JobMemory {
    let m = this.memory.get(jobUid);
    if (!m) {
      m = { counted: new Set(), deletedActive: new Set(), timersArmed: false, createFailures: 0 };
      this.memory.set(jobUid, m);
    }
    return m;
  }

  /** Coalesces reconciles of one Job into one, run after the current event settles. */
  private enqueue(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    if (this.pending.has(key)) return;
    this.pending.add(key);
    this.scheduler.after(0, () => {
      this.pending.delete(key);
      this.reconcile(namespace, name);
    });
  }

  private reconcile(namespace: string, name: string): void {
    const job = this.store.get('Job', namespace, name) as Job | undefined;
    if (!job || finished(job)) return;
    const uid = job.metadata.uid!;
    const memory = this.memoryOf(uid);
    const nowMs = this.scheduler.clock.now();
    const now = k8sTime(nowMs);
    const status = { ...job.status };
    status.startTime ??= now;
    this.armTimers(job, memory, Date.parse(status.startTime));

    const pods = (this.store.listOwnedBy('Pod', namespace, uid) as Pod[]).filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller));
    let failure: { reason: string; message: string } | undefined;
    for (const pod of pods) {
      if (!isTerminal(pod) || memory.counted.has(pod.metadata.uid!)) continue;
      memory.counted.add(pod.metadata.uid!);
      if (pod.status!.phase === 'Succeeded') {
        status.succeeded = (status.succeeded ?? 0) + 1;
        continue;
      }
      const verdict = applyPodFailurePolicy(job, pod);
      if (verdict.action === 'ignore') continue;
      if (verdict.action === 'fail') failure ??= { reason: 'PodFailurePolicy', message: verdict.message };
      status.failed = (status.failed ?? 0) + 1;
      memory.lastFailureAt = nowMs;
    }
    for (const podUid of memory.deletedActive) {
      if (memory.counted.has(podUid)) continue;
      memory.counted.add(podUid);
      status.failed = (status.failed ?? 0) + 1;
      memory.lastFailureAt = nowMs;
    }

    const active = pods.filter((p) => !isTerminal(p));
    const deadline = job.spec.activeDeadlineSeconds;
    if (!failure && deadline !== undefined && nowMs >= Date.parse(status.startTime) + deadline * 1000) {
      failure = { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' };
    }
    if (!failure && (status.failed ?? 0) > (job.spec.backoffLimit ?? 6)) {
      failure = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
    }
    if (failure) {
      // Active pods are terminated, and counted as failed, as the real controller does.
      for (const pod of active) {
        memory.counted.add(pod.metadata.uid!);
        this.store.delete('Pod', namespace, pod.metadata.name!, 'Background');
        this.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
      }
      if (active.length > 0) status.failed = (status.failed ?? 0) + active.length;
      this.finish(job, status, { type: 'Failed', reason: failure.reason, message: failure.message }, now);
      return;
    }

    const succeeded = status.succeeded ?? 0;
    const completions = job.spec.completions;
    const complete = completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0;
    if (complete) {
      status.completionTime = now;
      this.finish(job, status, { type: 'Complete' }, now);
      return;
    }

    const parallelism = job.spec.parallelism ?? 1;
    const wanted = completions !== undefined ? Math.min(parallelism, completions - succeeded) : succeeded > 0 ? 0 : parallelism;
    const missing = wanted - active.length;
    if (missing > 0) {
      const retryAt = Math.max(this.backoffUntil(status.failed ?? 0, memory), memory.createRetryAt ?? 0);
      if (retryAt > nowMs) this.scheduler.at(retryAt, () => this.enqueue(namespace, name));
      else this.createPods(job, missing, memory, nowMs);
    }
    this.writeStatus(job, status, active);
  }

  private backoffUntil(failed: number, memory: JobMemory): number {
    if (failed === 0 || memory.lastFailureAt === undefined) return 0;
    return memory.lastFailureAt + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (failed - 1));
  }

  /** Wakes the controller when activeDeadlineSeconds passes. */
  private armTimers(job: Job, memory: JobMemory, startMs: number): void {
    if (memory.timersArmed) return;
    memory.timersArmed = true;
    const deadline = job.spec.activeDeadlineSeconds;
    if (deadline === undefined) return;
    const { namespace, name } = job.metadata;
    this.scheduler.at(startMs + deadline * 1000, () => this.enqueue(namespace!, name!));
  }

  /**
   * Creates `count` pods; the first refused create ends the sync (as the real controller's slow-start
   * batch of one does) and backs the Job off before the next attempt.
   */
  private createPods(job: Job, count: number, memory: JobMemory, nowMs: number): void {
    for (let i = 0; i < count; i++) {
      if (this.createPod(job)) continue;
      memory.createFailures += 1;
      memory.createRetryAt = nowMs + Math.min(API_BACKOFF_MAX_MS, API_BACKOFF_BASE_MS * 2 ** (memory.createFailures - 1));
      const { namespace, name } = job.metadata;
      this.scheduler.at(memory.createRetryAt, () => this.enqueue(namespace!, name!));
      return;
    }
    memory.createFailures = 0;
    memory.createRetryAt = undefined;
  }

  /** Creates one pod through admission; false (and a FailedCreate event) when the API refuses it. */
  private createPod(job: Job): boolean {
    const { name, namespace, uid } = job.metadata;
    const template = job.spec.template;
    const body = {
      metadata: {
        generateName: `${name}-`,
        labels: { ...template.metadata?.labels, ...jobPodLabels(name!, uid!) },
        annotations: template.metadata?.annotations,
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: name!, uid: uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: structuredClone(template.spec),
    };
    let pod;
    try {
      pod = this.store.create('Pod', namespace, admitPodCreate(this.store, namespace, body).body);
    } catch (err) {
      if (!(err instanceof ApiStatusError)) throw err;
      this.event(job, 'Warning', 'FailedCreate', `Error creating: ${err.status.message}`);
      return false;
    }
    this.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
    return true;
  }

  private writeStatus(job: Job, status: NonNullable<Job['status']>, active: Pod[]): void {
    const ready = active.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    this.store.update<Job>('Job', job.metadata.namespace, job.metadata.name!, (j) => {
      j.status = { ...status, ready };
      if (active.length > 0) j.status.active = active.length;
      else delete j.status.active;
    });
  }

  private finish(job: Job, status: NonNullable<Job['status']>, outcome: Pick<JobCondition, 'type' | 'reason' | 'message'>, now: string): void {
    const condition: JobCondition = { ...outcome, status: 'True', lastProbeTime: now, lastTransitionTime: now };
    this.store.update<Job>('Job', job.metadata.namespace, job.metadata.name!, (j) => {
      j.status = { ...status, ready: 0, conditions: [...(status.conditions ?? []), condition] };
      delete j.status.active;
    });
    if (outcome.type === 'Complete') this.event(job, 'Normal', 'Completed', 'Job completed');
    else this.event(job, 'Warning', outcome.reason ?? 'Failed', outcome.message ?? 'Job failed');
    const ttl = job.spec.ttlSecondsAfterFinished;
    if (ttl === undefined) return;
    const { namespace, name, uid } = job.metadata;
    this.scheduler.after(ttl * 1000, () => {
      const current = this.store.get('Job', namespace, name!);
      if (current?.metadata.uid === uid) this.store.delete('Job', namespace, name!, 'Background');
    });
  }
}

function finished(job: Job): boolean {
  return (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** The first podFailurePolicy rule that matches the failed pod decides; no rule → count it. */
function applyPodFailurePolicy(job: Job, pod: Pod): Verdict {
  const rules = job.spec.podFailurePolicy?.rules ?? [];
  for (const [index, rule] of rules.entries()) {
    const matched = ruleMatches(rule, pod);
    if (!matched) continue;
    if (rule.action === 'Ignore') return { action: 'ignore' };
    if (rule.action === 'FailJob') {
      const { namespace, name } = pod.metadata;
      return { action: 'fail', message: `Pod ${namespace}/${name} failed ${matched} matching FailJob rule at index ${index}` };
    }
    return { action: 'count' };
  }
  return { action: 'count' };
}

/** A description of what matched (for the Failed condition's message), or undefined. */
function ruleMatches(rule: PodFailurePolicyRule, pod: Pod): string | undefined {
  if (rule.onExitCodes) {
    const { containerName, operator, values } = rule.onExitCodes;
    for (const s of pod.status?.containerStatuses ?? []) {
      if (containerName && s.name !== containerName) continue;
      if (!('terminated' in s.state) || s.state.terminated.exitCode === 0) continue;
      const code = s.state.terminated.exitCode;
      if (values.includes(code) === (operator === 'In')) return `with container ${s.name} exit code ${code}`;
    }
  }
  for (const pattern of rule.onPodConditions ?? []) {
    const hit = pod.status?.conditions?.find((c) => c.type === pattern.type && c.status === (pattern.status ?? 'True'));
    if (hit) return `with condition ${hit.type}`;
  }
  return undefined;
}
