/**
 * The node: takes every new pod through Pending (scheduling, image pull, volume mounts) to Running,
 * runs a simulated program per container, and ends the pod Succeeded or Failed from the exit codes.
 * Holds container logs, serves pods/log and pods/proxy, and disrupts pods on request or at the time
 * an eviction fault says.
 * Pods run with restartPolicy Never semantics: a container that exits is not restarted.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { ClusterNotFound } from '../../lambdas/core/errors';
import { badRequest, notFound, serviceUnavailable } from './api-status';
import { mountConfigMaps } from './config-map-volumes';
import type { FaultSettings } from './faults';
import { k8sTime } from './k8s-time';
import { KINDS } from './kinds';
import type { ObjectStore } from './object-store';
import { isTerminal, setAllContainers, setCondition, setContainer } from './pod-status';
import type { ContainerProgram, HttpReply, ProgramContext, ProxiedRequest } from './programs/program';
import { selectProgram } from './programs/select-program';
import type { Scheduled, Scheduler } from './sim-clock';
import type { Container, Pod } from './wire-types';

/** Sim time from creation to binding to the node, unless a fault says otherwise. */
const DEFAULT_SCHEDULE_MS = 1000;
/** Sim time from binding to the containers running (pull + create + start). */
const CONTAINER_START_MS = 1000;
const IMAGE_PULL_BACKOFF_MS = 5000;
const MOUNT_RETRY_MS = 2000;
const NODE_NAME = 'kube-sim-node';
const HOST_IP = '172.18.0.2';
const DISRUPTED_EXIT_CODE = 137;

interface ContainerRuntime {
  name: string;
  log: string;
  timers: Scheduled[];
  program?: ContainerProgram;
  startedAt?: string;
  exited: boolean;
}

interface PodRuntime {
  namespace: string;
  name: string;
  timers: Scheduled[];
  containers: Map<string, ContainerRuntime>;
}

export class Kubelet {
  private readonly pods = new Map<string, PodRuntime>();
  private nextIp = 2;

  constructor(
    private readonly store: ObjectStore,
    private readonly scheduler: Scheduler,
    private readonly faults: FaultSettings,
  ) {
    store.onChange((event) => {
      if (event.kind !== 'Pod') return;
      if (event.type === 'ADDED') this.admit(event.object as Pod);
      if (event.type === 'DELETED') this.forget(event.object.metadata.uid!);
    });
  }

  private now(): string {
    return k8sTime(this.scheduler.clock.now());
  }

  private update(rt: PodRuntime, mutate: (pod: Pod) => void): Pod | undefined {
    return this.store.update<Pod>('Pod', rt.namespace, rt.name, mutate);
  }

  private podTimer(rt: PodRuntime, simMs: number, run: () => void): void {
    rt.timers.push(this.scheduler.after(simMs, run));
  }

  private admit(pod: Pod): void {
    const rt: PodRuntime = {
      namespace: pod.metadata.namespace!,
      name: pod.metadata.name!,
      timers: [],
      containers: new Map(pod.spec.containers.map((c) => [c.name, { name: c.name, log: '', timers: [], exited: false }])),
    };
    this.pods.set(pod.metadata.uid!, rt);
    const delay = this.faults.scheduleDelayFor(pod) ?? DEFAULT_SCHEDULE_MS;
    if (delay === 'never') {
      this.update(rt, (p) =>
        setCondition(p.status!, this.now(), 'PodScheduled', 'False', 'Unschedulable', '0/1 nodes are available: 1 Insufficient cpu.'),
      );
      return;
    }
    this.podTimer(rt, delay, () => this.bind(rt));
  }

  private bind(rt: PodRuntime): void {
    const pod = this.update(rt, (p) => {
      p.spec.nodeName = NODE_NAME;
      p.status!.hostIP = HOST_IP;
      p.status!.startTime = this.now();
      setCondition(p.status!, this.now(), 'PodScheduled', 'True');
      setCondition(p.status!, this.now(), 'Initialized', 'True');
      setCondition(p.status!, this.now(), 'Ready', 'False', 'ContainersNotReady');
      setAllContainers(p, { waiting: { reason: 'ContainerCreating' } });
    });
    if (!pod) return;
    if (this.faults.imagePullFailureFor(pod)) {
      this.podTimer(rt, CONTAINER_START_MS, () => this.failPull(rt, pod, 'ErrImagePull'));
      this.podTimer(rt, CONTAINER_START_MS + IMAGE_PULL_BACKOFF_MS, () => this.failPull(rt, pod, 'ImagePullBackOff'));
      return;
    }
    this.podTimer(rt, CONTAINER_START_MS, () => this.run(rt));
  }

  private failPull(rt: PodRuntime, pod: Pod, reason: 'ErrImagePull' | 'ImagePullBackOff'): void {
    this.update(rt, (p) => {
      for (const c of pod.spec.containers) {
        const message =
          reason === 'ErrImagePull'
            ? `failed to pull and unpack image "${c.image}": not found (simulated by kube-sim)`
            : `Back-off pulling image "${c.image}"`;
        setContainer(p, c.name, { waiting: { reason, message } });
      }
    });
  }

  /** Mounts volumes (retrying while a ConfigMap is missing) and starts every container. */
  private run(rt: PodRuntime): void {
    const pod = this.store.get('Pod', rt.namespace, rt.name) as Pod | undefined;
    if (!pod) return;
    const mounts = pod.spec.containers.map((c) => ({ container: c, mount: mountConfigMaps(this.store, pod, c) }));
    const failed = mounts.find((m) => !m.mount.ok);
    if (failed && !failed.mount.ok) {
      const message = failed.mount.message;
      this.update(rt, (p) => setAllContainers(p, { waiting: { reason: 'ContainerCreating', message } }));
      this.podTimer(rt, MOUNT_RETRY_MS, () => this.run(rt));
      return;
    }
    const ip = this.nextIp++;
    const podIP = `10.244.${(ip >> 8) & 255}.${ip & 255}`;
    const startedAt = this.now();
    const running = this.update(rt, (p) => {
      p.status!.phase = 'Running';
      p.status!.podIP = podIP;
      p.status!.podIPs = [{ ip: podIP }];
      for (const c of p.spec.containers) {
        setContainer(p, c.name, { running: { startedAt } }, {
          ready: true,
          started: true,
          imageID: `kube-sim/${c.image}@sha256:${randomBytes(32).toString('hex')}`,
          containerID: `containerd://${randomBytes(32).toString('hex')}`,
        });
      }
      setCondition(p.status!, startedAt, 'ContainersReady', 'True');
      setCondition(p.status!, startedAt, 'Ready', 'True');
    });
    if (!running) return;
    for (const { container, mount } of mounts) {
      const cr = rt.containers.get(container.name)!;
      cr.startedAt = startedAt;
      cr.program = selectProgram(this.context(rt, cr, running, container, mount.ok ? mount.files : new Map()));
      cr.program.start();
    }
    // An eviction fault counts from the containers' start, so "evicted 5 min into the test" holds for
    // a paused k6 runner too, give or take the seconds until it is unpaused.
    const evictAfter = this.faults.takeEvictionFor(running);
    if (evictAfter !== undefined) this.podTimer(rt, evictAfter, () => this.disrupt(rt.namespace, rt.name));
  }

  private context(
    rt: PodRuntime,
    cr: ContainerRuntime,
    pod: Pod,
    container: Container,
    files: Map<string, string>,
  ): ProgramContext {
    const faults = this.faults;
    const guard = (run: () => void) => () => {
      if (!cr.exited) run();
    };
    return {
      pod,
      container,
      now: () => this.scheduler.clock.now(),
      after: (simMs, run) => {
        const handle = this.scheduler.after(simMs, guard(run));
        cr.timers.push(handle);
        return handle;
      },
      at: (simAt, run) => {
        const handle = this.scheduler.at(simAt, guard(run));
        cr.timers.push(handle);
        return handle;
      },
      log: (text) => {
        cr.log += text.endsWith('\n') ? text : `${text}\n`;
      },
      exit: (code, reason) => this.exited(rt, cr, code, reason),
      env: (name) => container.env?.find((e) => e.name === name)?.value,
      readFile: (path) => files.get(posix.normalize(path)),
      // Read when the program asks, so a fault set after the pod started still applies.
      get exitCodeFault() {
        return faults.exitCodeFor(pod);
      },
    };
  }

  private exited(rt: PodRuntime, cr: ContainerRuntime, exitCode: number, reason?: string): void {
    if (cr.exited) return;
    cr.exited = true;
    cr.timers.forEach((t) => t.cancel());
    const finishedAt = this.now();
    this.update(rt, (p) => {
      setContainer(
        p,
        cr.name,
        { terminated: { exitCode, reason: reason ?? (exitCode === 0 ? 'Completed' : 'Error'), startedAt: cr.startedAt, finishedAt } },
        { ready: false, started: false },
      );
      const allExited = [...rt.containers.values()].every((c) => c.exited);
      if (!allExited) return;
      const ok = p.status!.containerStatuses!.every((s) => 'terminated' in s.state && s.state.terminated.exitCode === 0);
      p.status!.phase = ok ? 'Succeeded' : 'Failed';
      setCondition(p.status!, finishedAt, 'ContainersReady', 'False', ok ? 'PodCompleted' : 'PodFailed');
      setCondition(p.status!, finishedAt, 'Ready', 'False', ok ? 'PodCompleted' : 'PodFailed');
    });
  }

  private forget(uid: string): void {
    const rt = this.pods.get(uid);
    if (!rt) return;
    this.stopAll(rt);
    this.pods.delete(uid);
  }

  private stopAll(rt: PodRuntime): void {
    rt.timers.forEach((t) => t.cancel());
    for (const cr of rt.containers.values()) {
      cr.exited = true;
      cr.timers.forEach((t) => t.cancel());
    }
  }

  private runtimeOf(namespace: string, name: string): { pod: Pod; rt: PodRuntime } | undefined {
    const pod = this.store.get('Pod', namespace, name) as Pod | undefined;
    const rt = pod && this.pods.get(pod.metadata.uid!);
    return pod && rt ? { pod, rt } : undefined;
  }

  /**
   * An eviction or node drain: every container is killed (137), the pod ends Failed with a
   * DisruptionTarget condition, and its Job's podFailurePolicy decides what happens next.
   */
  disrupt(namespace: string, name: string): void {
    const found = this.runtimeOf(namespace, name);
    if (!found) throw new ClusterNotFound(`pod ${namespace}/${name} not found`, 404);
    const { pod, rt } = found;
    if (isTerminal(pod)) return;
    const at = this.now();
    for (const cr of rt.containers.values()) {
      if (!cr.exited) cr.log += 'kube-sim: container killed: pod disrupted (eviction)\n';
    }
    this.stopAll(rt);
    this.update(rt, (p) => {
      for (const c of p.spec.containers) {
        const current = p.status?.containerStatuses?.find((s) => s.name === c.name)?.state;
        if (current && 'terminated' in current) continue;
        const startedAt = rt.containers.get(c.name)?.startedAt;
        setContainer(p, c.name, { terminated: { exitCode: DISRUPTED_EXIT_CODE, reason: 'Error', startedAt, finishedAt: at } }, {
          ready: false,
          started: false,
        });
      }
      p.status!.phase = 'Failed';
      setCondition(p.status!, at, 'DisruptionTarget', 'True', 'EvictionByEvictionAPI', 'Eviction API: evicting');
      setCondition(p.status!, at, 'ContainersReady', 'False', 'PodFailed');
      setCondition(p.status!, at, 'Ready', 'False', 'PodFailed');
    });
  }

  /** The container's log, as `GET pods/{name}/log` returns it. */
  readLog(namespace: string, name: string, container: string | undefined, tailLines: number | undefined): string {
    const found = this.runtimeOf(namespace, name);
    if (!found) throw notFound(KINDS.Pod, name);
    const { pod, rt } = found;
    const names = pod.spec.containers.map((c) => c.name);
    if (container === undefined && names.length > 1) {
      throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
    }
    const cr = rt.containers.get(container ?? names[0]!);
    if (!cr) throw badRequest(`container ${container} is not valid for pod ${name}`);
    if (cr.startedAt === undefined) {
      const state = pod.status?.containerStatuses?.find((s) => s.name === cr.name)?.state;
      const reason = state && 'waiting' in state ? state.waiting.reason : 'ContainerCreating';
      throw badRequest(`container "${cr.name}" in pod "${name}" is waiting to start: ${reason}`);
    }
    if (tailLines === undefined) return cr.log;
    const lines = cr.log.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const tail = tailLines <= 0 ? [] : lines.slice(-tailLines);
    return tail.length > 0 ? `${tail.join('\n')}\n` : '';
  }

  /** The port a proxy request without one goes to: the first declared container port, else 80. */
  defaultPort(namespace: string, name: string): number {
    const pod = this.store.get('Pod', namespace, name) as Pod | undefined;
    return pod?.spec.containers.flatMap((c) => c.ports ?? [])[0]?.containerPort ?? 80;
  }

  /** A request through pods/proxy: 503 unless the pod runs and something listens on the port. */
  proxy(namespace: string, name: string, request: ProxiedRequest): HttpReply {
    const found = this.runtimeOf(namespace, name);
    if (!found) throw notFound(KINDS.Pod, name);
    const { pod, rt } = found;
    if (pod.status?.phase !== 'Running' || !pod.status.podIP) {
      throw serviceUnavailable(`pod ${name} is not running (phase ${pod.status?.phase ?? 'Pending'})`);
    }
    for (const cr of rt.containers.values()) {
      if (cr.exited) continue;
      const reply = cr.program?.serve?.(request);
      if (reply) return reply;
    }
    throw serviceUnavailable(
      `error trying to reach service: dial tcp ${pod.status.podIP}:${request.port}: connect: connection refused`,
    );
  }
}
