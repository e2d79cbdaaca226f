/**
 * Fault injection: set programmatically through `kubeSim.faults`, or per run through the pod
 * annotations of runner-contract.ts (SimAnnotations). A programmatic fault that matches a pod wins
 * over its annotations; among programmatic faults, the latest one set wins.
 */
import { Role, SimAnnotations } from '../../lambdas/core/runner-contract';
import { parseDuration } from './go-duration';
import type { KindName } from './kinds';
import { podIdentity } from './programs/wrapper-argv';
import type { Pod } from './wire-types';

export type InjectedStatus = 429 | 500 | 503;

export interface RequestMatch {
  /** HTTP method, case-insensitive. */
  method?: string;
  pathIncludes?: string;
}

/** Which pods a fault applies to; an empty match means every pod (of the role the fault is about). */
export interface PodMatch {
  runId?: string;
  runnerIndex?: number;
  role?: Role;
}

export interface Faults {
  /** The next `n` requests that match answer `status` with a Status body (429 and 503 with Retry-After). */
  failNextRequests(n: number, status: InjectedStatus, match?: RequestMatch): void;
  /** Real milliseconds added before every response (0 = none). */
  setLatency(ms: number): void;
  /** Runner pods that match exit with `code` (k6: 99 thresholds failed, 107 script error, 108 abort, 137 OOM). */
  setExitCode(code: number, match: PodMatch): void;
  /** Pods that match are scheduled after `simSeconds` of simulated time, or never. */
  setScheduleDelay(simSeconds: number | 'never', match?: PodMatch): void;
  /** Pods that match stay Pending with ErrImagePull, then ImagePullBackOff. */
  setImagePullFailure(match?: PodMatch): void;
  /** Disrupts a pod (Failed, condition DisruptionTarget); its Job applies its podFailurePolicy. */
  restartPod(namespace: string, podName: string): void;
  /** Deletes an object behind loadplane's back (a Job takes its pods with it). */
  deleteObject(kind: KindName, namespace: string, name: string): void;
  /** Drops every programmatic fault (annotations still apply). */
  clear(): void;
}

/** What the kubelet needs to know about a pod's faults. */
export type ScheduleDelay = number | 'never';

interface RequestFault {
  remaining: number;
  status: InjectedStatus;
  match: RequestMatch;
}

type PodFault =
  | { type: 'exitCode'; code: number; match: PodMatch }
  | { type: 'scheduleDelay'; delay: ScheduleDelay; match: PodMatch }
  | { type: 'imagePullFailure'; match: PodMatch };

export interface FaultActions {
  restartPod(namespace: string, podName: string): void;
  deleteObject(kind: KindName, namespace: string, name: string): void;
}

export class FaultSettings implements Faults {
  private requestFaults: RequestFault[] = [];
  private podFaults: PodFault[] = [];
  latencyMs = 0;

  constructor(private readonly actions: FaultActions) {}

  failNextRequests(n: number, status: InjectedStatus, match: RequestMatch = {}): void {
    if (n > 0) this.requestFaults.push({ remaining: n, status, match });
  }

  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  setExitCode(code: number, match: PodMatch): void {
    this.podFaults.push({ type: 'exitCode', code, match });
  }

  setScheduleDelay(simSeconds: number | 'never', match: PodMatch = {}): void {
    this.podFaults.push({ type: 'scheduleDelay', delay: simSeconds === 'never' ? 'never' : simSeconds * 1000, match });
  }

  setImagePullFailure(match: PodMatch = {}): void {
    this.podFaults.push({ type: 'imagePullFailure', match });
  }

  restartPod(namespace: string, podName: string): void {
    this.actions.restartPod(namespace, podName);
  }

  deleteObject(kind: KindName, namespace: string, name: string): void {
    this.actions.deleteObject(kind, namespace, name);
  }

  clear(): void {
    this.requestFaults = [];
    this.podFaults = [];
    this.latencyMs = 0;
  }

  /** Consumes one injected failure for this request, if one matches. */
  takeRequestFailure(method: string, path: string): InjectedStatus | undefined {
    const fault = this.requestFaults.find(
      (f) =>
        (f.match.method === undefined || f.match.method.toUpperCase() === method.toUpperCase()) &&
        (f.match.pathIncludes === undefined || path.includes(f.match.pathIncludes)),
    );
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.requestFaults = this.requestFaults.filter((f) => f !== fault);
    return fault.status;
  }

  /** The exit code a runner pod is made to end with, if any. */
  exitCodeFor(pod: Pod): number | undefined {
    const id = podIdentity(pod);
    if (id.role !== Role.runner) return undefined;
    const programmatic = this.latest(pod, 'exitCode');
    if (programmatic) return programmatic.code;
    const annotations = pod.metadata.annotations ?? {};
    const code = annotations[SimAnnotations.exitCode];
    if (code === undefined || !/^\d+$/.test(code.trim())) return undefined;
    const runners = annotations[SimAnnotations.faultRunners];
    if (runners !== undefined && runners.trim() !== '') {
      const indexes = runners.split(',').map((s) => Number(s.trim()));
      if (id.runnerIndex === undefined || !indexes.includes(id.runnerIndex)) return undefined;
    }
    return Number(code);
  }

  /** Simulated ms before the pod is scheduled, 'never', or undefined for the default. */
  scheduleDelayFor(pod: Pod): ScheduleDelay | undefined {
    const programmatic = this.latest(pod, 'scheduleDelay');
    if (programmatic) return programmatic.delay;
    const value = pod.metadata.annotations?.[SimAnnotations.scheduleDelay]?.trim();
    if (value === 'never') return 'never';
    return parseDuration(value);
  }

  imagePullFailureFor(pod: Pod): boolean {
    if (this.latest(pod, 'imagePullFailure')) return true;
    return pod.metadata.annotations?.[SimAnnotations.imagePullFailure]?.trim() === 'true';
  }

  private latest<T extends PodFault['type']>(pod: Pod, type: T): Extract<PodFault, { type: T }> | undefined {
    const id = podIdentity(pod);
    for (let i = this.podFaults.length - 1; i >= 0; i--) {
      const fault = this.podFaults[i]!;
      if (fault.type !== type) continue;
      const m = fault.match;
      if (m.runId !== undefined && m.runId !== id.runId) continue;
      if (m.runnerIndex !== undefined && m.runnerIndex !== id.runnerIndex) continue;
      if (m.role !== undefined && m.role !== id.role) continue;
      return fault as Extract<PodFault, { type: T }>;
    }
    return undefined;
  }
}
