/**
 * Fault injection: set programmatically through `kubeSim.faults`, or per run through the pod
 * annotations of runner-contract.ts (SimAnnotations). A programmatic fault that matches a pod wins
 * over its annotations; among programmatic faults, the latest one set wins.
 */
import { Role, SimAnnotations } from '../../lambdas/core/runner-contract';
import { ApiThrottle, emptyThrottleStats, throttleSettings, type CountStored, type ThrottleOverrides, type ThrottleStats } from './api-throttle';
import { parseDuration } from './go-duration';
import type { KindName } from './kinds';
import { podIdentity } from './programs/pod-identity';
import { DEFAULT_FAULT_SEED, mulberry32 } from './seeded-random';
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
  /**
   * The next `n` matching requests are served (a pod proxy request reaches the pod, which acts on it)
   * but their answers are lost: the connection is closed without a response, as when a caller's
   * network or the API server fails between the two. The request log shows them with status 0.
   */
  dropNextResponses(n: number, match?: RequestMatch): void;
  /**
   * From now on, each matching request fails with `status` with probability `rate` (0..1; 0 removes
   * the rate set earlier for the same match), drawn from a seeded random source: the same requests in
   * the same order fail on every run. 429 and 503 carry Retry-After. failNextRequests goes first.
   */
  setErrorRate(rate: number, status: InjectedStatus, match?: RequestMatch): void;
  /** Restarts the error-rate random source at `seed` (a fresh kube-sim, and clear(), use a fixed one). */
  setRandomSeed(seed: number): void;
  /** Real milliseconds added before every response (0 = none). */
  setLatency(ms: number): void;
  /**
   * From now on the API server throttles as API Priority and Fairness does (api-throttle.ts): seats
   * and bounded queues for loadplane's priority level, 429 with Retry-After beyond them. 'eks-standard'
   * (or `{}`) is a standard EKS control plane's global-default level; overrides change its fields.
   * Seats and queues start empty; clearThrottle() or clear() turns it off.
   */
  setThrottle(settings: 'eks-standard' | ThrottleOverrides): void;
  clearThrottle(): void;
  /** Runner pods that match exit with `code` (k6: 99 thresholds failed, 107 script error, 108 abort, 137 OOM). */
  setExitCode(code: number, match: PodMatch): void;
  /**
   * k6 runner pods that match take exactly `simMs` of simulated time from their launch to initialise
   * their VUs (status 1 InitVUs while the REST API answers, vus-max counting up, then status 4). Without it each
   * runner draws a seeded delay (k6-runner.ts: a base plus a per-VU cost times a per-runner factor).
   */
  setVuInitDelay(simMs: number, match: PodMatch): void;
  /**
   * k6 runner pods that match drop `count` iterations over their test, as an arrival-rate executor
   * with no free VU at its tick does: their export has `dropped_iterations` { count, rate } (load fidelity).
   */
  setDroppedIterations(count: number, match: PodMatch): void;
  /**
   * Runner pods that match are throttled in `share` (0..1) of their CPU periods: the runner script's
   * cpu.stat line (k6-runner.ts) shows it, as a container at its CPU limit's does (load fidelity).
   */
  setCpuThrottling(share: number, match: PodMatch): void;
  /** Pods that match are scheduled after `simSeconds` of simulated time, or never. */
  setScheduleDelay(simSeconds: number | 'never', match?: PodMatch): void;
  /** Pods that match stay Pending with ErrImagePull, then ImagePullBackOff. */
  setImagePullFailure(match?: PodMatch): void;
  /** Disrupts a pod (Failed, condition DisruptionTarget); its Job applies its podFailurePolicy. */
  restartPod(namespace: string, podName: string): void;
  /**
   * The first `times` pods that match (default 1) are disrupted as by restartPod `simSeconds` of
   * simulated time after their containers start running; later pods that match (the Job's
   * replacement) are left alone.
   */
  setEviction(simSeconds: number, match: PodMatch, times?: number): void;
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

interface ErrorRate {
  rate: number;
  status: InjectedStatus;
  match: RequestMatch;
}

type PodFault =
  | { type: 'exitCode'; code: number; match: PodMatch }
  | { type: 'scheduleDelay'; delay: ScheduleDelay; match: PodMatch }
  | { type: 'imagePullFailure'; match: PodMatch }
  | { type: 'vuInitDelay'; ms: number; match: PodMatch }
  | { type: 'droppedIterations'; count: number; match: PodMatch }
  | { type: 'cpuThrottling'; share: number; match: PodMatch }
  | { type: 'eviction'; afterMs: number; remaining: number; match: PodMatch };

export interface FaultActions {
  restartPod(namespace: string, podName: string): void;
  deleteObject(kind: KindName, namespace: string, name: string): void;
  /** Stored objects of a resource, cluster-wide (the throttle's list cost). */
  countStored: CountStored;
}

export class FaultSettings implements Faults {
  private requestFaults: RequestFault[] = [];
  private responseDrops: { remaining: number; match: RequestMatch }[] = [];
  private errorRates: ErrorRate[] = [];
  private random = mulberry32(DEFAULT_FAULT_SEED);
  private podFaults: PodFault[] = [];
  latencyMs = 0;
  /** The API throttle while one is set. */
  throttle: ApiThrottle | undefined;
  /** What every throttle set on this kube-sim has done, added up (never reset: readers take differences). */
  readonly throttleStats: ThrottleStats = emptyThrottleStats();

  constructor(private readonly actions: FaultActions) {}

  failNextRequests(n: number, status: InjectedStatus, match: RequestMatch = {}): void {
    if (n > 0) this.requestFaults.push({ remaining: n, status, match });
  }

  dropNextResponses(n: number, match: RequestMatch = {}): void {
    if (n > 0) this.responseDrops.push({ remaining: n, match });
  }

  /** Consumes one response drop for this request, if one matches. */
  takeResponseDrop(method: string, path: string): boolean {
    const drop = this.responseDrops.find((d) => requestMatches(d.match, method, path));
    if (!drop) return false;
    drop.remaining -= 1;
    if (drop.remaining <= 0) this.responseDrops = this.responseDrops.filter((d) => d !== drop);
    return true;
  }

  setErrorRate(rate: number, status: InjectedStatus, match: RequestMatch = {}): void {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`error rate must be within [0, 1], got ${rate}`);
    const same = (m: RequestMatch) => m.method?.toUpperCase() === match.method?.toUpperCase() && m.pathIncludes === match.pathIncludes;
    this.errorRates = this.errorRates.filter((r) => !same(r.match));
    if (rate > 0) this.errorRates.push({ rate, status, match });
  }

  setRandomSeed(seed: number): void {
    this.random = mulberry32(seed);
  }

  setLatency(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  setThrottle(settings: 'eks-standard' | ThrottleOverrides): void {
    this.throttle = new ApiThrottle(throttleSettings(settings === 'eks-standard' ? {} : settings), this.actions.countStored, this.throttleStats);
  }

  clearThrottle(): void {
    this.throttle = undefined;
  }

  setExitCode(code: number, match: PodMatch): void {
    this.podFaults.push({ type: 'exitCode', code, match });
  }

  setVuInitDelay(simMs: number, match: PodMatch): void {
    if (!(simMs >= 0)) throw new RangeError(`VU-init delay must be >= 0 ms, got ${simMs}`);
    this.podFaults.push({ type: 'vuInitDelay', ms: simMs, match });
  }

  setDroppedIterations(count: number, match: PodMatch): void {
    if (!(Number.isInteger(count) && count >= 0)) throw new RangeError(`dropped iterations must be a whole number >= 0, got ${count}`);
    this.podFaults.push({ type: 'droppedIterations', count, match });
  }

  setCpuThrottling(share: number, match: PodMatch): void {
    if (!(share >= 0 && share <= 1)) throw new RangeError(`CPU throttling must be a share within [0, 1], got ${share}`);
    this.podFaults.push({ type: 'cpuThrottling', share, match });
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

  setEviction(simSeconds: number, match: PodMatch, times = 1): void {
    if (times > 0) this.podFaults.push({ type: 'eviction', afterMs: Math.max(0, simSeconds) * 1000, remaining: times, match });
  }

  deleteObject(kind: KindName, namespace: string, name: string): void {
    this.actions.deleteObject(kind, namespace, name);
  }

  clear(): void {
    this.requestFaults = [];
    this.responseDrops = [];
    this.podFaults = [];
    this.latencyMs = 0;
    this.throttle = undefined;
    this.errorRates = [];
    this.random = mulberry32(DEFAULT_FAULT_SEED);
  }

  /**
   * Consumes one injected failure for this request, if one matches: a failNextRequests count first,
   * else the latest matching error rate draws once from the seeded random source.
   */
  takeRequestFailure(method: string, path: string): InjectedStatus | undefined {
    const matches = (m: RequestMatch) => requestMatches(m, method, path);
    const fault = this.requestFaults.find((f) => matches(f.match));
    if (fault) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.requestFaults = this.requestFaults.filter((f) => f !== fault);
      return fault.status;
    }
    const rate = this.errorRates.findLast((r) => matches(r.match));
    if (rate && this.random() < rate.rate) return rate.status;
    return undefined;
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

  /** The VU-init delay (sim ms) a fault sets for this runner pod, if any. */
  vuInitDelayFor(pod: Pod): number | undefined {
    if (podIdentity(pod).role !== Role.runner) return undefined;
    return this.latest(pod, 'vuInitDelay')?.ms;
  }

  /** The iterations a fault (or the dropped-iterations annotation) makes this runner pod drop, if any. */
  droppedIterationsFor(pod: Pod): number | undefined {
    if (podIdentity(pod).role !== Role.runner) return undefined;
    const n = Number(runnerAnnotation(pod, SimAnnotations.droppedIterations));
    return this.latest(pod, 'droppedIterations')?.count ?? (Number.isSafeInteger(n) && n >= 0 ? n : undefined);
  }

  /** The share of CPU periods a fault (or the cpu-throttled-share annotation) throttles this runner pod in, if any. */
  cpuThrottlingFor(pod: Pod): number | undefined {
    if (podIdentity(pod).role !== Role.runner) return undefined;
    const text = runnerAnnotation(pod, SimAnnotations.cpuThrottledShare);
    const share = text === undefined || text.trim() === '' ? NaN : Number(text);
    return this.latest(pod, 'cpuThrottling')?.share ?? (share >= 0 && share <= 1 ? share : undefined);
  }

  /** Simulated ms before the pod is scheduled, 'never', or undefined for the default. */
  scheduleDelayFor(pod: Pod): ScheduleDelay | undefined {
    const programmatic = this.latest(pod, 'scheduleDelay');
    if (programmatic) return programmatic.delay;
    const value = pod.metadata.annotations?.[SimAnnotations.scheduleDelay]?.trim();
    if (value === 'never') return 'never';
    return parseDuration(value);
  }

  /**
   * Simulated ms after its containers start at which this pod is to be evicted, if an eviction fault
   * matches it; consumes one of the fault's pods, so a replacement is not evicted again.
   */
  takeEvictionFor(pod: Pod): number | undefined {
    const fault = this.latest(pod, 'eviction');
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.podFaults = this.podFaults.filter((f) => f !== fault);
    return fault.afterMs;
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

/** A fault annotation's value for this pod, unless fault-runners names other runners. */
function runnerAnnotation(pod: Pod, key: string): string | undefined {
  const annotations = pod.metadata.annotations ?? {};
  const runners = annotations[SimAnnotations.faultRunners];
  if (runners !== undefined && runners.trim() !== '') {
    const index = podIdentity(pod).runnerIndex;
    if (
      index === undefined ||
      !runners
        .split(',')
        .map((s) => Number(s.trim()))
        .includes(index)
    )
      return undefined;
  }
  return annotations[key];
}

function requestMatches(m: RequestMatch, method: string, path: string): boolean {
  return (m.method === undefined || m.method.toUpperCase() === method.toUpperCase()) && (m.pathIncludes === undefined || path.includes(m.pathIncludes));
}
