/**
 * The narrow Kubernetes interface the stages use, over @kubernetes/client-node. Every object is found
 * by its run label (one list call per kind), created idempotently (an object of THIS run that already
 * exists is success; one of another run is a conflict), and every failure is a named cluster error.
 */
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1ConfigMap,
  type V1Job,
  type V1ObjectMeta,
  type V1Pod,
  type V1Service,
} from '@kubernetes/client-node';
import { ClusterConflict, ClusterUnavailable } from '../core/errors';
import { Labels, RUNNER_CONTAINER } from '../core/runner-contract';
import { toClusterError } from './cluster-errors';
import { runLabelSelector } from './manifests/labels';
import { podProxyRequest, type ProxyResponse } from './pod-proxy';

export type CreatableObject = V1ConfigMap | V1Service | V1Job;
export type KubeObject = CreatableObject | V1Pod;
export type KubeKind = 'Job' | 'Pod' | 'Service' | 'ConfigMap';

export interface ClusterClient {
  /** `exists` when an object of the same kind and name, labelled with the same run, is already there. */
  createIfAbsent(obj: CreatableObject): Promise<'created' | 'exists'>;
  /** One list call with labelSelector `loadplane.io/run-id=<runId>`; items carry `kind`. */
  listByRun(kind: KubeKind, namespace: string, runId: string): Promise<KubeObject[]>;
  /** The last `lines` lines of the runner container's log. */
  podLogTail(namespace: string, pod: string, lines: number): Promise<string>;
  /** A request to the pod's `port` through pods/proxy; the pod's own non-2xx answers are returned, not thrown. */
  podProxy(
    namespace: string,
    pod: string,
    port: number,
    method: 'GET' | 'PATCH',
    path: string,
    body?: unknown,
  ): Promise<ProxyResponse>;
  /** Deletes every Job, Service, ConfigMap and Pod labelled with the run (background propagation); 404 is success. */
  deleteRun(namespace: string, runId: string): Promise<{ deleted: number }>;
}

/** Deletion order: Jobs first (their pods go with them), then what the pods used, then stragglers. */
const DELETE_ORDER: readonly KubeKind[] = ['Job', 'Service', 'ConfigMap', 'Pod'];

/** For plain-http servers (kube-sim) the kubeconfig's cluster needs `skipTLSVerify: true`. */
export function createClusterClient(kc: KubeConfig): ClusterClient {
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);

  const api = {
    create(kind: KubeKind, namespace: string, body: CreatableObject): Promise<unknown> {
      switch (kind) {
        case 'Job':
          return batch.createNamespacedJob({ namespace, body: body as V1Job });
        case 'Service':
          return core.createNamespacedService({ namespace, body: body as V1Service });
        case 'ConfigMap':
          return core.createNamespacedConfigMap({ namespace, body: body as V1ConfigMap });
        case 'Pod':
          throw new Error('loadplane never creates bare Pods');
      }
    },
    read(kind: KubeKind, namespace: string, name: string): Promise<{ metadata?: V1ObjectMeta }> {
      switch (kind) {
        case 'Job':
          return batch.readNamespacedJob({ namespace, name });
        case 'Service':
          return core.readNamespacedService({ namespace, name });
        case 'ConfigMap':
          return core.readNamespacedConfigMap({ namespace, name });
        case 'Pod':
          return core.readNamespacedPod({ namespace, name });
      }
    },
    async list(kind: KubeKind, namespace: string, labelSelector: string): Promise<KubeObject[]> {
      switch (kind) {
        case 'Job':
          return (await batch.listNamespacedJob({ namespace, labelSelector })).items;
        case 'Service':
          return (await core.listNamespacedService({ namespace, labelSelector })).items;
        case 'ConfigMap':
          return (await core.listNamespacedConfigMap({ namespace, labelSelector })).items;
        case 'Pod':
          return (await core.listNamespacedPod({ namespace, labelSelector })).items;
      }
    },
    delete(kind: KubeKind, namespace: string, name: string): Promise<unknown> {
      const req = { namespace, name, propagationPolicy: 'Background' };
      switch (kind) {
        case 'Job':
          return batch.deleteNamespacedJob(req);
        case 'Service':
          return core.deleteNamespacedService(req);
        case 'ConfigMap':
          return core.deleteNamespacedConfigMap(req);
        case 'Pod':
          return core.deleteNamespacedPod(req);
      }
    },
  };

  async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toClusterError(err, what);
    }
  }

  async function listByRun(kind: KubeKind, namespace: string, runId: string): Promise<KubeObject[]> {
    const items = await call(`list ${kind} in ${namespace} for run ${runId}`, () =>
      api.list(kind, namespace, runLabelSelector(runId)),
    );
    return items.map((item) => ({ ...item, kind }));
  }

  return {
    async createIfAbsent(obj) {
      const kind = kindOf(obj);
      const { name, namespace, labels } = requiredMetadata(obj);
      const ref = `${kind} ${namespace}/${name}`;
      try {
        await api.create(kind, namespace, obj);
        return 'created';
      } catch (err) {
        if (!(err instanceof ApiException) || err.code !== 409) throw toClusterError(err, `create ${ref}`);
      }
      const runId = labels[Labels.runId];
      let existing;
      try {
        existing = await api.read(kind, namespace, name);
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) {
          throw new ClusterUnavailable(`create ${ref}: it existed, then disappeared before it could be checked; retry`, 404);
        }
        throw toClusterError(err, `read ${ref}`);
      }
      const owner = existing.metadata?.labels?.[Labels.runId];
      if (runId !== undefined && owner === runId) return 'exists';
      throw new ClusterConflict(
        `${ref} already exists and belongs to ${owner ? `run ${owner}` : 'no loadplane run'}, not run ${runId ?? '(unlabelled)'}`,
        409,
      );
    },

    listByRun,

    podLogTail(namespace, pod, lines) {
      return call(`log of pod ${namespace}/${pod}`, () =>
        core.readNamespacedPodLog({ namespace, name: pod, container: RUNNER_CONTAINER, tailLines: lines }),
      );
    },

    podProxy(namespace, pod, port, method, path, body) {
      return podProxyRequest(kc, { namespace, pod, port, method, path, body });
    },

    async deleteRun(namespace, runId) {
      let deleted = 0;
      for (const kind of DELETE_ORDER) {
        const items = await listByRun(kind, namespace, runId);
        const results = await Promise.all(
          items.map(async (item) => {
            const name = item.metadata!.name!;
            try {
              await api.delete(kind, namespace, name);
              return 1;
            } catch (err) {
              if (err instanceof ApiException && err.code === 404) return 0;
              throw toClusterError(err, `delete ${kind} ${namespace}/${name}`);
            }
          }),
        );
        deleted += results.reduce<number>((a, b) => a + b, 0);
      }
      return { deleted };
    },
  };
}

function kindOf(obj: CreatableObject): Exclude<KubeKind, 'Pod'> {
  if (obj.kind === 'Job' || obj.kind === 'Service' || obj.kind === 'ConfigMap') return obj.kind;
  throw new Error(`cannot create an object of kind ${String(obj.kind)}`);
}

function requiredMetadata(obj: CreatableObject): { name: string; namespace: string; labels: Record<string, string> } {
  const { name, namespace, labels = {} } = obj.metadata ?? {};
  if (!name || !namespace) throw new Error(`${obj.kind} without metadata.name or metadata.namespace`);
  return { name, namespace, labels };
}
