/**
 * API Priority and Fairness, as far as loadplane meets it (README.md, "Throttling"): off unless
 * `faults.setThrottle` turns it on. Every request loadplane makes falls in one priority level (an
 * authenticated user that is no service account matches the `global-default` FlowSchema), with a
 * number of seats and bounded queues; a request that finds the seats taken and its queues full is
 * answered 429 the way the API server's APF filter answers it (server/filters/priority-and-fairness.go):
 * plain text, `Retry-After`, and the matched FlowSchema's and priority level's UIDs.
 *
 * Seats are held in simulated time: a request takes its seats from the instant it is dispatched for
 * its service time, and one that must wait is dispatched when enough seats come free. kube-sim still
 * answers at once (on a virtual clock time stands still while a request is in flight, so an answer
 * held back for simulated time would never come); what waiting costs shows as seats taken further
 * ahead. The outcome depends only on the requests' order and simulated instants: deterministic.
 */
export interface ThrottleServiceTimes {
  /** Sim ms a get (and a non-resource request) holds its seat. */
  get: number;
  /** Sim ms a list holds each of its seats. */
  list: number;
  /** Sim ms a create, update, patch or delete holds its seat. */
  mutating: number;
  /** Sim ms a watch holds its seat while it is set up (APF releases it once the watch is initialised). */
  watch: number;
}

export interface ThrottleSettings {
  /** The priority level's concurrency limit, in seats. */
  seats: number;
  /**
   * Queues one flow may use: its hand of queues (shuffle sharding); all of loadplane's requests are
   * one flow (one user, `distinguisherMethod: ByUser`).
   */
  handSize: number;
  /** Requests each queue holds; beyond handSize × queueLengthLimit waiting, a request is rejected (queue-full). */
  queueLengthLimit: number;
  /** Longest a request may wait for its seats (sim ms); one that would wait longer is rejected (time-out). */
  queueWaitLimitMs: number;
  serviceMs: ThrottleServiceTimes;
  /**
   * `Retry-After` of a 429: 'dynamic' as the API server computes it per priority level
   * (util/flowcontrol/dropped_requests_tracker.go: 1 s, doubled while rejections go on, at most 32 s),
   * or a fixed number of seconds.
   */
  retryAfter: 'dynamic' | number;
  /**
   * Also throttle pods/proxy and pods/log. The API server counts them as long-running
   * (`BasicLongRunningRequestCheck`: verbs watch and proxy; subresources attach, exec, proxy, log,
   * portforward) and lets them past APF uncounted; true is a what-if, not the real server.
   */
  throttleLongRunning: boolean;
}

/** Objects per list seat, and the least and most seats one request takes (util/flowcontrol/request/config.go). */
const OBJECTS_PER_SEAT = 100;
const MAXIMUM_SEATS = 10;
/** The ceiling of the dynamic Retry-After (dropped_requests_tracker.go `maxRetryAfter`). */
const MAX_RETRY_AFTER_SECONDS = 32;

/**
 * A standard-mode EKS control plane as loadplane's requests see it: 600 seats per API server
 * (--max-requests-inflight 400 + --max-mutating-requests-inflight 200, the EKS Best Practices Guide),
 * of which the global-default level's nominal share is ceil(600 × 20 / 245) = 49 (the guide lists 49
 * for EKS 1.24); its queuing is 128 queues, hand size 6, 50 requests a queue (bootstrap default.go);
 * the queue wait limit is a quarter of the 60 s request timeout. The service times are guesses.
 */
export const EKS_STANDARD_THROTTLE: Readonly<ThrottleSettings> = Object.freeze({
  seats: 49,
  handSize: 6,
  queueLengthLimit: 50,
  queueWaitLimitMs: 15_000,
  serviceMs: Object.freeze({ get: 10, list: 30, mutating: 20, watch: 10 }),
  retryAfter: 'dynamic',
  throttleLongRunning: false,
});

/**
 * What the responses name (X-Kubernetes-PF-*-UID). kube-sim makes these UIDs up: a real server sends
 * the UIDs of its own FlowSchema and PriorityLevelConfiguration objects.
 */
export const APF_UIDS = {
  globalDefault: { flowSchema: '7c3f0b5e-2d4a-4e61-9a57-1f0c6d2b8e41', priorityLevel: '4b9e2a71-8c6d-4f35-b0a2-6e1d7f3c9a58' },
  exempt: { flowSchema: 'e1a7c4d2-5b3f-4a86-9c01-2f8e6b4d7a93', priorityLevel: 'c5d2e8f1-3a7b-4c94-8e60-9b1f4a2d6c37' },
} as const;

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';
/** The APF filter's answer (tooManyRequests: http.Error, which ends the text with a newline). */
export const TOO_MANY_REQUESTS_TEXT = 'Too many requests, please try again later.\n';

export type ThrottleRejection = 'queue-full' | 'time-out';

export interface ThrottleStats {
  /** Requests the priority level served (at once or after waiting). */
  admitted: number;
  /** Of those, the ones that waited for a seat. */
  queued: number;
  /** 429s sent, by reason. */
  rejected: number;
  rejectedQueueFull: number;
  rejectedTimeOut: number;
  /** The longest wait of an admitted request, sim ms. */
  longestWaitMs: number;
  /** The highest Retry-After sent, seconds (0 before the first 429). */
  highestRetryAfterSeconds: number;
}

export function emptyThrottleStats(): ThrottleStats {
  return { admitted: 0, queued: 0, rejected: 0, rejectedQueueFull: 0, rejectedTimeOut: 0, longestWaitMs: 0, highestRetryAfterSeconds: 0 };
}

export type Admission =
  /** Not for APF to decide (a long-running request): no headers. */
  | { outcome: 'uncounted' }
  | { outcome: 'admitted'; headers: Record<string, string> }
  | { outcome: 'rejected'; reason: ThrottleRejection; retryAfterSeconds: number; headers: Record<string, string> };

/** What `faults.setThrottle` takes: fields to change on the EKS preset. */
export type ThrottleOverrides = Partial<Omit<ThrottleSettings, 'serviceMs'>> & { serviceMs?: Partial<ThrottleServiceTimes> };

/** The settings with `overrides` on top of the EKS preset, checked: a bad field throws naming it and its limit. */
export function throttleSettings(overrides: ThrottleOverrides = {}): ThrottleSettings {
  const settings: ThrottleSettings = {
    ...EKS_STANDARD_THROTTLE,
    ...overrides,
    serviceMs: { ...EKS_STANDARD_THROTTLE.serviceMs, ...overrides.serviceMs },
  };
  const whole = (field: string, value: number, least: number) => {
    if (!Number.isInteger(value) || value < least) throw new RangeError(`throttle ${field} must be an integer >= ${least}, got ${value}`);
  };
  whole('seats', settings.seats, 1);
  whole('handSize', settings.handSize, 1);
  whole('queueLengthLimit', settings.queueLengthLimit, 0);
  if (!(settings.queueWaitLimitMs >= 0)) throw new RangeError(`throttle queueWaitLimitMs must be >= 0, got ${settings.queueWaitLimitMs}`);
  for (const [verb, ms] of Object.entries(settings.serviceMs)) {
    if (!(ms >= 0)) throw new RangeError(`throttle serviceMs.${verb} must be >= 0, got ${ms}`);
  }
  if (settings.retryAfter !== 'dynamic') whole('retryAfter', settings.retryAfter, 1);
  return settings;
}

/** How many objects of a resource are stored, cluster-wide (what the list work estimator reads). */
export type CountStored = (group: string, plural: string) => number;

const PROBES = new Set(['/healthz', '/livez', '/readyz']);
const POD_SUBRESOURCE = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/(proxy|log|exec|attach|portforward)(\/|$)/;

type Work = { kind: 'exempt' } | { kind: 'long-running' } | { kind: 'limited'; seats: number; serviceMs: number };

export class ApiThrottle {
  /** Sim ms from which each seat is free. */
  private readonly seatFreeAt: number[];
  /** Dispatch instants of admitted requests still waiting at the last admission, in order. */
  private waiting: number[] = [];
  /** Requests are dispatched in arrival order (one flow): none before the previous one's dispatch. */
  private lastDispatch = Number.NEGATIVE_INFINITY;
  private readonly dropped = new DroppedRequests();

  constructor(
    readonly settings: ThrottleSettings,
    private readonly countStored: CountStored,
    private readonly stats: ThrottleStats,
  ) {
    this.seatFreeAt = Array.from({ length: settings.seats }, () => Number.NEGATIVE_INFINITY);
  }

  /** Decides one request arriving at sim instant `now`, and takes its seats if it is admitted. */
  admit(method: string, path: string, query: URLSearchParams, now: number): Admission {
    const work = this.workOf(method.toUpperCase(), path, query);
    if (work.kind === 'long-running') return { outcome: 'uncounted' };
    if (work.kind === 'exempt') return { outcome: 'admitted', headers: uidHeaders(APF_UIDS.exempt) };
    const headers = uidHeaders(APF_UIDS.globalDefault);
    while (this.waiting.length > 0 && this.waiting[0]! <= now) this.waiting.shift();
    this.seatFreeAt.sort((a, b) => a - b);
    const seats = Math.min(work.seats, this.seatFreeAt.length);
    const dispatch = Math.max(now, this.lastDispatch, this.seatFreeAt[seats - 1]!);
    if (dispatch > now) {
      const reason: ThrottleRejection | undefined =
        this.waiting.length >= this.settings.handSize * this.settings.queueLengthLimit
          ? 'queue-full'
          : dispatch - now > this.settings.queueWaitLimitMs
            ? 'time-out'
            : undefined;
      if (reason) return this.reject(reason, now, headers);
      this.waiting.push(dispatch);
      this.stats.queued++;
      this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, dispatch - now);
    }
    for (let i = 0; i < seats; i++) this.seatFreeAt[i] = dispatch + work.serviceMs;
    this.lastDispatch = dispatch;
    this.stats.admitted++;
    return { outcome: 'admitted', headers };
  }

  private reject(reason: ThrottleRejection, now: number, headers: Record<string, string>): Admission {
    const second = Math.floor(now / 1000);
    this.dropped.record(second);
    const retryAfterSeconds = this.settings.retryAfter === 'dynamic' ? this.dropped.retryAfter : this.settings.retryAfter;
    this.stats.rejected++;
    if (reason === 'queue-full') this.stats.rejectedQueueFull++;
    else this.stats.rejectedTimeOut++;
    this.stats.highestRetryAfterSeconds = Math.max(this.stats.highestRetryAfterSeconds, retryAfterSeconds);
    return { outcome: 'rejected', reason, retryAfterSeconds, headers };
  }

  /** The request's class and cost, as the APF filter and its work estimator see it. */
  private workOf(method: string, path: string, query: URLSearchParams): Work {
    // The `probes` FlowSchema sends GETs of the health endpoints to the exempt level.
    if (method === 'GET' && PROBES.has(path.replace(/\/+$/, ''))) return { kind: 'exempt' };
    if (POD_SUBRESOURCE.test(path) && !this.settings.throttleLongRunning) return { kind: 'long-running' };
    const { serviceMs } = this.settings;
    if (method !== 'GET') return { kind: 'limited', seats: 1, serviceMs: serviceMs.mutating };
    const watch = query.get('watch');
    if (watch === 'true' || watch === '1') return { kind: 'limited', seats: 1, serviceMs: serviceMs.watch };
    const collection = collectionOf(path);
    if (!collection) return { kind: 'limited', seats: 1, serviceMs: serviceMs.get };
    // A list served from the watch cache: one seat per 100 stored objects of the resource (1 to 10).
    const stored = this.countStored(collection.group, collection.plural);
    const seats = Math.min(MAXIMUM_SEATS, Math.max(1, Math.ceil(stored / OBJECTS_PER_SEAT)));
    return { kind: 'limited', seats, serviceMs: serviceMs.list };
  }
}

function uidHeaders(uids: { flowSchema: string; priorityLevel: string }): Record<string, string> {
  return { [FLOW_SCHEMA_UID_HEADER]: uids.flowSchema, [PRIORITY_LEVEL_UID_HEADER]: uids.priorityLevel };
}

/** The resource a path lists (`/api/v1/[namespaces/ns/]pods`, `/apis/batch/v1/[namespaces/ns/]jobs`), or undefined for anything else. */
function collectionOf(path: string): { group: string; plural: string } | undefined {
  const segments = path.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments[1] === 'v1') [group, rest] = ['', segments.slice(2)];
  else if (segments[0] === 'apis' && segments.length >= 3) [group, rest] = [segments[1]!, segments.slice(3)];
  else return undefined;
  if (rest[0] === 'namespaces' && rest.length === 3) return { group, plural: rest[2]! };
  if (rest.length === 1) return { group, plural: rest[0]! };
  return undefined;
}

/**
 * The API server's Retry-After per priority level (dropped_requests_tracker.go), on simulated
 * seconds: rejections are counted per second; when a rejection opens a new second, the count of the
 * last `retryAfter` seconds before it decides: at least 3 × retryAfter doubles it (at most 32, and
 * not again within retryAfter seconds of the last doubling), fewer than retryAfter lowers it by one.
 */
class DroppedRequests {
  retryAfter = 1;
  private history: { second: number; count: number }[] = [];
  private currentSecond = 0;
  private currentCount = 0;
  private lastDoubling = 0;

  record(second: number): void {
    if (second === this.currentSecond) {
      this.currentCount++;
      return;
    }
    this.history.push({ second: this.currentSecond, count: this.currentCount });
    this.history = this.history.filter((h) => this.currentSecond - h.second <= MAX_RETRY_AFTER_SECONDS);
    this.currentSecond = second;
    this.currentCount = 1;
    let recent = 0;
    for (const h of this.history) if (second - h.second <= this.retryAfter && h.second < second) recent += h.count;
    if (second - this.lastDoubling >= this.retryAfter && recent >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, this.retryAfter * 2);
      this.lastDoubling = second;
    } else if (recent < this.retryAfter && this.retryAfter > 1) {
      this.retryAfter--;
    }
  }
}
