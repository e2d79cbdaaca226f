/**
 * kube-sim: a simulated Kubernetes cluster that speaks the real REST API over plain HTTP, for the
 * kinds loadplane uses (Namespace, ConfigMap, Service, Pod, batch/v1 Job), with a Job controller,
 * pod lifecycle, simulated k6 / Gatling runners, a time scale and fault injection. See README.md.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_CONFIG, namespaceNames } from '../../lambdas/core/config';
import { ClusterNotFound } from '../../lambdas/core/errors';
import { ApiServer, type RequestLogEntry } from './api-server';
import type { ThrottleStats } from './api-throttle';
import { FaultSettings, type Faults } from './faults';
import { EventRecorder } from './event-recorder';
import { startGarbageCollector } from './garbage-collector';
import { JobController } from './job-controller';
import { KINDS, kindByPlural, type KindName } from './kinds';
import { Kubelet } from './kubelet';
import { parseLabelSelector } from './label-selector';
import { POD_SECURITY_LABELS } from './pod-security';
import { ObjectStore } from './object-store';
import { ResourceHandlers } from './resource-handlers';
import { Router } from './router';
import { ScaledClock } from '../clock/scaled-clock';
import type { SimTime } from '../clock/sim-time';
import { Scheduler } from './sim-clock';

export type { Faults, InjectedStatus, PodMatch, RequestMatch } from './faults';
export type { ThrottleOverrides, ThrottleSettings, ThrottleStats } from './api-throttle';
export { EKS_STANDARD_THROTTLE } from './api-throttle';
export type { RequestLogEntry } from './api-server';
export type { KindName } from './kinds';

export interface KubeSimOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a random free port. */
  port?: number;
  /** Simulated seconds per real second; default 1. Ignored when `clock` is given. */
  timeScale?: number;
  /** The simulated clock to run on (shared with the local runtime; tests pass a VirtualClock). */
  clock?: SimTime;
}

export interface KubeSim {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Simulated seconds per real second; undefined on a virtual clock (time moves when every actor waits). */
  readonly timeScale: number | undefined;
  readonly clock: SimTime;
  readonly requestLog: readonly RequestLogEntry[];
  clearRequestLog(): void;
  readonly faults: Faults;
  /** What the API throttle (`faults.setThrottle`) has done since kube-sim started: counts only grow. */
  throttleStats(): ThrottleStats;
  /** Simulated epoch ms (the clock's). */
  now(): number;
  /** A @kubernetes/client-node KubeConfig pointing at this server (skipTLSVerify, a dummy token). */
  kubeConfig(): KubeConfig;
  /** Read-only view for tests: objects of a kind in a namespace (optionally by label selector). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- copies of stored JSON; callers read any field
  list(kind: KindName, namespace?: string, labelSelector?: string): any[];
  /** Test view of a started container's environment (as `kubectl exec … env` shows it); undefined before it started or once the pod is gone. */
  containerEnvironment(namespace: string, pod: string, container?: string): ReadonlyMap<string, string> | undefined;
  /** Stops timers and the server; idempotent. */
  close(): Promise<void>;
}

/** Kubernetes' own namespaces: unlabelled, so Pod Security leaves them privileged, as on a real cluster. */
const KUBERNETES_NAMESPACES = ['default', 'kube-system'];

/**
 * Namespaces a fresh kube-sim has: Kubernetes' own plus the ones the default deployment config allows
 * on `kube-sim`, which enforce the Pod Security Standard "restricted" (as loadplane's namespaces are
 * expected to on a real cluster). Every namespace also gets `kubernetes.io/metadata.name` on create.
 */
function initialNamespaces(): { name: string; labels?: Record<string, string> }[] {
  const kubeSim = DEFAULT_CONFIG.allowedClusters.find((c) => c.name === 'kube-sim');
  const allowed = kubeSim ? namespaceNames(kubeSim) : [];
  return [...new Set([...KUBERNETES_NAMESPACES, ...allowed])].map((name) =>
    KUBERNETES_NAMESPACES.includes(name) ? { name } : { name, labels: { [POD_SECURITY_LABELS.enforce]: 'restricted' } },
  );
}

/** A @kubernetes/client-node KubeConfig for the kube-sim at `url` (plain http: skipTLSVerify, a dummy token). */
export function kubeSimKubeConfig(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kube-sim', server: url, skipTLSVerify: true }],
    users: [{ name: 'kube-sim', token: 'kube-sim' }],
    contexts: [{ name: 'kube-sim', cluster: 'kube-sim', user: 'kube-sim' }],
    currentContext: 'kube-sim',
  });
  return kc;
}

export async function startKubeSim(opts: KubeSimOptions = {}): Promise<KubeSim> {
  const host = opts.host ?? '127.0.0.1';
  const reportError = (err: unknown) => console.error('kube-sim: internal error:', err);
  const ownClock = opts.clock === undefined;
  const clock = opts.clock ?? new ScaledClock(opts.timeScale ?? 1, Date.now, reportError);
  const timeScale = clock.timeScale;
  const scheduler = new Scheduler(clock, reportError);
  const store = new ObjectStore(clock);
  startGarbageCollector(store, scheduler);
  const faults = new FaultSettings({
    restartPod: (namespace, podName) => kubelet.disrupt(namespace, podName),
    deleteObject: (kind, namespace, name) => {
      const ns = KINDS[kind].namespaced ? namespace : undefined;
      if (!store.get(kind, ns, name)) throw new ClusterNotFound(`${kind} ${namespace}/${name} not found`, 404);
      store.delete(kind, ns, name, 'Background');
    },
    countStored: (group, plural) => {
      const info = kindByPlural(group, plural);
      return info ? store.count(info.kind) : 0;
    },
  });
  const events = new EventRecorder(store, scheduler);
  const kubelet = new Kubelet(store, scheduler, faults, events);
  new JobController(store, scheduler, events);
  for (const metadata of initialNamespaces()) store.create('Namespace', undefined, { metadata });

  let address = '';
  const router = new Router(new ResourceHandlers(store, scheduler), kubelet, () => address);
  const server = new ApiServer(router, faults, clock, reportError);
  const bound = await server.listen(host, opts.port ?? 0);
  address = `${host}:${bound.port}`;
  const url = `http://${address}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    timeScale,
    clock,
    requestLog: server.requestLog,
    clearRequestLog: () => {
      server.requestLog.length = 0;
    },
    faults,
    throttleStats: () => ({ ...faults.throttleStats }),
    now: () => clock.now(),
    kubeConfig: () => kubeSimKubeConfig(url),
    list: (kind, namespace, labelSelector) => store.list(kind, namespace, parseLabelSelector(labelSelector)),
    containerEnvironment: (namespace, pod, container) => kubelet.environmentOf(namespace, pod, container),
    close: () => {
      closing ??= (async () => {
        scheduler.clear();
        if (ownClock) clock.close();
        await server.close();
      })();
      return closing;
    },
  };
}
