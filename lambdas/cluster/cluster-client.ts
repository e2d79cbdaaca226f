/**
 * The narrow Kubernetes interface the stages use, over @kubernetes/client-node. Every object is found
 * by its run label (one list call per kind), created idempotently (an object of THIS run that already
 * exists is success; one of another run is a conflict), and every failure is a named cluster error.
 *
 * Every call (architecture §7) is bounded by a request timeout and retried where it failed on 429/5xx (and
 * on transport failures when repeating it is harmless) with backoff and full jitter, honouring
 * Retry-After (call-retry.ts): a 1 % error rate must not cost a stage that makes hundreds of calls.
 */
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  Observable,
  PatchStrategy,
  setHeaderMiddleware,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1ConfigMap,
  type V1Job,
  type V1ObjectMeta,
  type V1OwnerReference,
  type V1Pod,
} from '@kubernetes/client-node';
import { ClusterConflict, ClusterUnavailable } from '../core/errors';
import { Labels, MANAGED_BY, objectName, Role, RUNNER_CONTAINER } from '../core/runner-contract';
import { DEFAULT_RETRY_POLICY, parseRetryAfter, realSleep, withRetries, type CallFailure, type RetryRunner } from './call-retry';
import { isNetworkError, statusOf, toClusterError } from './cluster-errors';
import { runLabelSelector } from './manifests/labels';
import { createPodProxy, type PreparedProxyRequest, type ProxyRequest, type ProxyResponse } from './pod-proxy';
import { RequestTimedOut, withRequestTimeout } from './request-timeout';

export type CreatableObject = V1ConfigMap | V1Job;
export type KubeObject = CreatableObject | V1Pod;
export type KubeKind = 'Job' | 'Pod' | 'ConfigMap';
export type CreatableKind = Exclude<KubeKind, 'Pod'>;

export interface CreateResult {
  /** `exists`: an object of the same kind and name, labelled with the same run, was already there. */
  outcome: 'created' | 'exists';
  /** The object's uid (for ownerReferences to it). */
  uid: string;
}

export interface ClusterClient {
  /** Creates the object, or finds it already there and ours; one of another run is a ClusterConflict. */
  createIfAbsent(obj: CreatableObject): Promise<CreateResult>;
  /** One list call with labelSelector `loadplane.io/run-id=<runId>`; items carry `kind`. */
  listByRun(kind: KubeKind, namespace: string, runId: string): Promise<KubeObject[]>;
  /**
   * One list call for every loadplane object of `kind` in the namespace, whatever its run (managed-by
   * loadplane and carrying a run-id label); items carry `kind`. The sweeper groups them by run.
   */
  listManaged(kind: KubeKind, namespace: string): Promise<KubeObject[]>;
  /**
   * Adds the owners the object does not have yet (by uid) with one PATCH, keeping the ones it has;
   * nothing is sent when it has them all. Kubernetes deletes it when the last of its owners is gone.
   */
  addOwners(kind: CreatableKind, namespace: string, name: string, owners: V1OwnerReference[]): Promise<void>;
  /**
   * The pod's Warning events of one `reason` (FailedMount, …), newest last: one list call with the
   * field selector `involvedObject.kind=Pod,involvedObject.name=<pod>,reason=<reason>,type=Warning`.
   */
  podWarnings(namespace: string, pod: string, reason: string): Promise<PodWarning[]>;
  /** The last `lines` lines of the runner container's log. */
  podLogTail(namespace: string, pod: string, lines: number): Promise<string>;
  /**
   * The first `limitBytes` bytes of the runner container's log (the last line may be cut short);
   * `timestamps`: each line prefixed with the kubelet's RFC 3339 timestamp and a space, the prefixes
   * counted in the limit. Errors as podLogTail's.
   */
  podLogHead(namespace: string, pod: string, limitBytes: number, options?: { timestamps?: boolean }): Promise<string>;
  /**
   * A request to the pod's `port` through pods/proxy; the pod's own non-2xx answers are returned, not
   * thrown. Retried like every call: loadplane's only PATCH sets k6's status to absolute values.
   */
  podProxy(namespace: string, pod: string, port: number, method: 'GET' | 'PATCH', path: string, body?: unknown): Promise<ProxyResponse>;
  /** One pods/proxy request with its own timeout and retry rule (ProxyRequest's `timeoutMs`, `idempotent`). */
  podRequest(request: ProxyRequest): Promise<ProxyResponse>;
  /**
   * pods/proxy requests to many pods, prepared before the first is sent (auth resolved once, URLs,
   * headers and bodies built): each returned function sends its request, with podProxy's timeout,
   * retries and errors, and does no other work first, so calling them all in one go sends them within
   * the same tick. Requests go over keep-alive connections that earlier requests (a status check per
   * pod) have opened.
   */
  preparePodProxy(requests: readonly ProxyRequest[]): Promise<PreparedProxyRequest[]>;
  /**
   * Deletes every Job, ConfigMap and Pod labelled with the run (background propagation); 404 is success.
   * What an object deleted by this call owns (a Job's pods; the script ConfigMap, owned by the anchor)
   * is left to Kubernetes' garbage collector, as is an object already being deleted: one call per
   * object the run made itself, not one per pod too. The run's anchor (manifests/anchor.ts) goes last,
   * always by a call of its own: once this returns it is gone, so whatever the API server still creates
   * for the run names an owner that is gone and is collected. `deleted` counts the delete calls that
   * found their object.
   */
  deleteRun(namespace: string, runId: string): Promise<{ deleted: number }>;
  /** Deletes one object (background propagation: a Job takes its pods and what it owns); false when it was already gone. */
  deleteObject(kind: KubeKind, namespace: string, name: string): Promise<boolean>;
}

/** What a Warning event says about a pod. */
export interface PodWarning {
  /** The involved pod's UID, to tell its events from an earlier pod's of the same name. */
  uid?: string;
  message: string;
  /** Epoch ms of its last occurrence (lastTimestamp, else eventTime, else creation). */
  lastSeen: number;
}

export interface ClusterClientOptions {
  /** Waits between attempts (default: setTimeout). The local runtime passes its simulated clock's. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  /** Bound on each attempt of each call, in real ms (default 10 s). */
  requestTimeoutMs?: number;
  /** Attempts per call, the first included (default 5). */
  maxAttempts?: number;
}

/** Well under the Tasks' TimeoutSeconds (30 s and more), so a hung call fails its attempt, not the Task. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** The kinds a run makes, in deletion order: Jobs first (their pods go with them), then what the pods used, then stragglers. */
export const RUN_OBJECT_KINDS: readonly KubeKind[] = ['Job', 'ConfigMap', 'Pod'];

/** For plain-http servers (kube-sim) the kubeconfig's cluster needs `skipTLSVerify: true`. */
export function createClusterClient(kc: KubeConfig, options: ClusterClientOptions = {}): ClusterClient {
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const runner: RetryRunner = {
    policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts },
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
  };

  // Every generated call takes per-call options; `o` carries the attempt's abort signal (and a patch's content type).
  type Opts = ConfigurationOptions<ObservableMiddleware>;
  // Retried like every call: loadplane's only pods/proxy PATCH sets k6's status to absolute values.
  const podProxy = createPodProxy(kc, { timeoutMs, retry: runner, idempotent: true });
  const api = {
    create(kind: CreatableKind, namespace: string, body: CreatableObject, o: Opts): Promise<{ metadata?: V1ObjectMeta }> {
      switch (kind) {
        case 'Job':
          return batch.createNamespacedJob({ namespace, body: body as V1Job }, o);
        case 'ConfigMap':
          return core.createNamespacedConfigMap({ namespace, body: body as V1ConfigMap }, o);
      }
    },
    read(kind: KubeKind, namespace: string, name: string, o: Opts): Promise<{ metadata?: V1ObjectMeta }> {
      switch (kind) {
        case 'Job':
          return batch.readNamespacedJob({ namespace, name }, o);
        case 'ConfigMap':
          return core.readNamespacedConfigMap({ namespace, name }, o);
        case 'Pod':
          return core.readNamespacedPod({ namespace, name }, o);
      }
    },
    /** A JSON merge patch (send the Content-Type with `o`). */
    patch(kind: CreatableKind, namespace: string, name: string, body: object, o: Opts): Promise<unknown> {
      switch (kind) {
        case 'Job':
          return batch.patchNamespacedJob({ namespace, name, body }, o);
        case 'ConfigMap':
          return core.patchNamespacedConfigMap({ namespace, name, body }, o);
      }
    },
    async list(kind: KubeKind, namespace: string, labelSelector: string, o: Opts): Promise<KubeObject[]> {
      switch (kind) {
        case 'Job':
          return (await batch.listNamespacedJob({ namespace, labelSelector }, o)).items;
        case 'ConfigMap':
          return (await core.listNamespacedConfigMap({ namespace, labelSelector }, o)).items;
        case 'Pod':
          return (await core.listNamespacedPod({ namespace, labelSelector }, o)).items;
      }
    },
    delete(kind: KubeKind, namespace: string, name: string, o: Opts): Promise<unknown> {
      const req = { namespace, name, propagationPolicy: 'Background' };
      switch (kind) {
        case 'Job':
          return batch.deleteNamespacedJob(req, o);
        case 'ConfigMap':
          return core.deleteNamespacedConfigMap(req, o);
        case 'Pod':
          return core.deleteNamespacedPod(req, o);
      }
    },
  };

  /**
   * One call, each attempt bounded by the request timeout, retried per call-retry.ts. Throws the
   * last attempt's error as client-node threw it (callers that handle a status, such as a create's
   * 409, look at it); `named` turns it into a cluster error.
   */
  function attempt<T>(idempotent: boolean, fn: (o: Opts) => Promise<T>, contentType?: string): Promise<T> {
    return withRetries(runner, { idempotent, classify: failureOf }, () => withRequestTimeout(timeoutMs, (signal) => fn(callOptions(signal, contentType))));
  }

  /** `attempt`, with every failure as a named cluster error. */
  async function call<T>(what: string, idempotent: boolean, fn: (o: Opts) => Promise<T>, contentType?: string): Promise<T> {
    try {
      return await attempt(idempotent, fn, contentType);
    } catch (err) {
      throw named(err, what);
    }
  }

  async function listByRun(kind: KubeKind, namespace: string, runId: string): Promise<KubeObject[]> {
    const items = await call(`list ${kind} in ${namespace} for run ${runId}`, true, (o) => api.list(kind, namespace, runLabelSelector(runId), o));
    return items.map((item) => ({ ...item, kind }));
  }

  /** Deletes one object (background propagation); false when it was already gone (404 is success). */
  async function deleteObject(kind: KubeKind, namespace: string, name: string): Promise<boolean> {
    try {
      // A delete repeated after it was applied answers 404: success.
      await attempt(true, (o) => api.delete(kind, namespace, name, o));
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return false;
      throw named(err, `delete ${kind} ${namespace}/${name}`);
    }
  }

  return {
    async createIfAbsent(obj) {
      const kind = kindOf(obj);
      const { name, namespace, labels } = requiredMetadata(obj);
      const ref = `${kind} ${namespace}/${name}`;
      // Idempotent as a whole: a create that was applied but whose answer was lost comes back as 409, resolved below.
      try {
        const created = await attempt(true, (o) => api.create(kind, namespace, obj, o));
        return { outcome: 'created', uid: created.metadata?.uid ?? '' };
      } catch (err) {
        if (!(err instanceof ApiException) || err.code !== 409) throw named(err, `create ${ref}`);
      }
      const runId = labels[Labels.runId];
      let existing;
      try {
        existing = await attempt(true, (o) => api.read(kind, namespace, name, o));
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) {
          throw new ClusterUnavailable(`create ${ref}: it existed, then disappeared before it could be checked; retry`, 404);
        }
        throw named(err, `read ${ref}`);
      }
      const owner = existing.metadata?.labels?.[Labels.runId];
      if (runId !== undefined && owner === runId) return { outcome: 'exists', uid: existing.metadata?.uid ?? '' };
      throw new ClusterConflict(`${ref} already exists and belongs to ${owner ? `run ${owner}` : 'no loadplane run'}, not run ${runId ?? '(unlabelled)'}`, 409);
    },

    listByRun,

    async listManaged(kind, namespace) {
      const selector = `${Labels.managedBy}=${MANAGED_BY},${Labels.runId}`;
      const items = await call(`list loadplane ${kind}s in ${namespace}`, true, (o) => api.list(kind, namespace, selector, o));
      return items.map((item) => ({ ...item, kind }));
    },

    async addOwners(kind, namespace, name, owners) {
      const ref = `${kind} ${namespace}/${name}`;
      // Read, then one merge patch of the whole list carrying the resourceVersion read: a write in
      // between is a 409, and the next round reads again. A repeated PATCH that was applied finds nothing missing.
      for (let round = 1; ; round++) {
        const current = await call(`read ${ref}`, true, (o) => api.read(kind, namespace, name, o));
        const have = current.metadata?.ownerReferences ?? [];
        const missing = owners.filter((r) => !have.some((h) => h.uid === r.uid));
        if (missing.length === 0) return;
        const body = { metadata: { resourceVersion: current.metadata?.resourceVersion, ownerReferences: [...have, ...missing] } };
        try {
          await attempt(true, (o) => api.patch(kind, namespace, name, body, o), PatchStrategy.MergePatch);
          return;
        } catch (err) {
          if (err instanceof ApiException && err.code === 409 && round < runner.policy.maxAttempts) continue;
          throw named(err, `add owners to ${ref}`);
        }
      }
    },

    async podWarnings(namespace, pod, reason) {
      const fieldSelector = `involvedObject.kind=Pod,involvedObject.name=${pod},reason=${reason},type=Warning`;
      const list = await call(`list ${reason} events of pod ${namespace}/${pod}`, true, (o) => core.listNamespacedEvent({ namespace, fieldSelector }, o));
      return list.items
        .map((e) => ({
          ...(e.involvedObject.uid ? { uid: e.involvedObject.uid } : {}),
          message: e.message ?? '',
          lastSeen: toMs(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp),
        }))
        .sort((a, b) => a.lastSeen - b.lastSeen);
    },

    podLogTail(namespace, pod, lines) {
      return call(`log of pod ${namespace}/${pod}`, true, (o) =>
        core.readNamespacedPodLog({ namespace, name: pod, container: RUNNER_CONTAINER, tailLines: lines }, o),
      );
    },

    podLogHead(namespace, pod, limitBytes, options = {}) {
      return call(`log of pod ${namespace}/${pod}`, true, (o) =>
        core.readNamespacedPodLog({ namespace, name: pod, container: RUNNER_CONTAINER, limitBytes, ...(options.timestamps ? { timestamps: true } : {}) }, o),
      );
    },

    podProxy(namespace, pod, port, method, path, body) {
      return podProxy.request({ namespace, pod, port, method, path, body });
    },

    preparePodProxy: (requests) => podProxy.prepare(requests),

    podRequest: (request) => podProxy.request(request),

    deleteObject,

    async deleteRun(namespace, runId) {
      let deleted = 0;
      // UIDs of what this call deleted or will (background propagation): what they own goes with them.
      // Not what someone else is deleting: an orphaning delete (a Job's default through the API) leaves its pods.
      const anchor = objectName(runId, Role.anchor);
      let anchorFound = false;
      const going = new Set<string>();
      for (const kind of RUN_OBJECT_KINDS) {
        const items = await listByRun(kind, namespace, runId);
        const isAnchor = (item: KubeObject) => kind === 'ConfigMap' && item.metadata?.name === anchor;
        if (items.some(isAnchor)) anchorFound = true;
        for (const item of items) if (isAnchor(item) && item.metadata?.uid) going.add(item.metadata.uid);
        const mine = items.filter((item) => {
          const owners = item.metadata?.ownerReferences ?? [];
          const collected = owners.length > 0 && owners.every((o) => going.has(o.uid));
          return !isAnchor(item) && !item.metadata?.deletionTimestamp && !collected;
        });
        const results = await Promise.all(mine.map(async (item) => ((await deleteObject(kind, namespace, item.metadata!.name!)) ? 1 : 0)));
        for (const item of mine) if (item.metadata?.uid) going.add(item.metadata.uid);
        deleted += results.reduce<number>((a, b) => a + b, 0);
      }
      // Last, by a call of its own: the collector would delete it too once its last Job is gone, but a
      // moment later. What names it, created before this call or after, goes with it.
      if (anchorFound && (await deleteObject('ConfigMap', namespace, anchor))) deleted += 1;
      return { deleted };
    },
  };
}

/** Per-call client-node options: the attempt's abort signal on the RequestContext, and a Content-Type if given. */
function callOptions(signal: AbortSignal, contentType: string | undefined): ConfigurationOptions<ObservableMiddleware> {
  const withSignal: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (rsp) => new Observable(Promise.resolve(rsp)),
  };
  return {
    middleware: contentType ? [withSignal, setHeaderMiddleware('Content-Type', contentType)] : [withSignal],
    middlewareMergeStrategy: 'append',
  };
}

/** What a client-node failure means for retrying it. */
export function failureOf(err: unknown): CallFailure {
  if (err instanceof ApiException) {
    const code = err.code as number;
    const header = Object.entries(err.headers ?? {}).find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
    const details = (statusOf(err.body) as { details?: { retryAfterSeconds?: unknown } } | undefined)?.details;
    const retryAfterSeconds = parseRetryAfter(header) ?? parseRetryAfter(details?.retryAfterSeconds);
    return { kind: 'status', status: code, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
  }
  if (err instanceof RequestTimedOut || isNetworkError(err)) return { kind: 'transport' };
  return { kind: 'other' };
}

/** The named error for a failure of the call `what`; a timed-out attempt says so. */
function named(err: unknown, what: string): unknown {
  if (err instanceof RequestTimedOut) return new ClusterUnavailable(`${what}: ${err.message}`, undefined, { cause: err });
  return toClusterError(err, what);
}

/** The kind of an object loadplane creates; anything else is a bug of ours. */
export function kindOf(obj: { kind?: string }): CreatableKind {
  if (obj.kind === 'Job' || obj.kind === 'ConfigMap') return obj.kind;
  throw new Error(`cannot create an object of kind ${String(obj.kind)}`);
}

function requiredMetadata(obj: CreatableObject): { name: string; namespace: string; labels: Record<string, string> } {
  const { name, namespace, labels = {} } = obj.metadata ?? {};
  if (!name || !namespace) throw new Error(`${obj.kind} without metadata.name or metadata.namespace`);
  return { name, namespace, labels };
}

function toMs(value: Date | string | undefined): number {
  if (!value) return 0;
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
}
