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
import { containerEnvironment } from './container-env';
import { expandVariables } from './env-expansion';
import { mountVolumes, storeVolumeObjects } from './pod-volumes';
import { SOURCES, type EventRecorder } from './event-recorder';
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
/** Sim time between the kubelet's attempts to build a container's config (its env) that failed. Unverified: the real pod worker's resync backoff. */
const CONFIG_RETRY_MS = 2000;
const NODE_NAME = 'kube-sim-node';
const HOST_IP = '172.18.0.2';
const DISRUPTED_EXIT_CODE = 137;
/** Kubernetes' default terminationGracePeriodSeconds, in sim ms. */
const DEFAULT_GRACE_MS = 30_000;
/**
 * The container runtime's longest log record (containerd's and CRI-O's default max log line size,
 * 16 KiB): a longer line is written as several records, all but the last marked partial ("P").
 */
export const MAX_LOG_RECORD_BYTES = 16 * 1024;

/**
 * One record of a container's log (a line, or a 16 KiB piece of a longer one), with the sim instant
 * it was written. `partial`: the line goes on in the next record (CRI tag "P"; the last piece is "F").
 */
export interface LogLine {
  at: number;
  text: string;
  partial?: boolean;
}

/** Who follows a container's log (`follow=true`): new lines, then the end. */
interface LogFollower {
  line(line: LogLine): void;
  end(): void;
}

interface ContainerRuntime {
  name: string;
  lines: LogLine[];
  followers: Set<LogFollower>;
  timers: Scheduled[];
  program?: ContainerProgram;
  startedAt?: string;
  exited: boolean;
  /** The process's environment, as the kubelet resolved it at start (container-env.ts). */
  env?: ReadonlyMap<string, string>;
}

interface PodRuntime {
  namespace: string;
  name: string;
  timers: Scheduled[];
  containers: Map<string, ContainerRuntime>;
}

export interface LogOptions {
  tailLines?: number;
  /** Only lines written at or after this sim instant (sinceSeconds / sinceTime). */
  sinceMs?: number;
}

export interface LogRead {
  lines: LogLine[];
  /** Present while the container runs: subscribes to its later lines and its end; returns the unsubscribe. */
  follow?: (follower: LogFollower) => () => void;
}

export class Kubelet {
  private readonly pods = new Map<string, PodRuntime>();
  private nextIp = 2;

  constructor(
    private readonly store: ObjectStore,
    private readonly scheduler: Scheduler,
    private readonly faults: FaultSettings,
    private readonly events: EventRecorder,
  ) {
    store.onChange((event) => {
      if (event.kind !== 'Pod') return;
      if (event.type === 'ADDED') this.admit(event.object as Pod);
      if (event.type === 'DELETED') this.forget(event.object as Pod);
    });
  }

  private event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, container?: string): void {
    const fieldPath = container === undefined ? undefined : `spec.containers{${container}}`;
    const source = reason === 'Scheduled' || reason === 'FailedScheduling' ? SOURCES.scheduler : SOURCES.kubelet(NODE_NAME);
    this.events.record({ involved: pod, type, reason, message, source, fieldPath });
  }

  private nowIso(): string {
    return k8sTime(this.scheduler.clock.now());
  }

  /** Sim epoch ms. */
  now(): number {
    return this.scheduler.clock.now();
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
      containers: new Map(pod.spec.containers.map((c) => [c.name, { name: c.name, lines: [], followers: new Set(), timers: [], exited: false }])),
    };
    this.pods.set(pod.metadata.uid!, rt);
    const delay = this.faults.scheduleDelayFor(pod) ?? DEFAULT_SCHEDULE_MS;
    if (delay === 'never') {
      const message = '0/1 nodes are available: 1 Insufficient cpu.';
      const updated = this.update(rt, (p) => setCondition(p.status!, this.nowIso(), 'PodScheduled', 'False', 'Unschedulable', message));
      this.event(updated ?? pod, 'Warning', 'FailedScheduling', message);
      return;
    }
    this.podTimer(rt, delay, () => this.bind(rt));
  }

  private bind(rt: PodRuntime): void {
    const pod = this.update(rt, (p) => {
      p.spec.nodeName = NODE_NAME;
      p.status!.hostIP = HOST_IP;
      p.status!.startTime = this.nowIso();
      setCondition(p.status!, this.nowIso(), 'PodScheduled', 'True');
      setCondition(p.status!, this.nowIso(), 'Initialized', 'True');
      setCondition(p.status!, this.nowIso(), 'Ready', 'False', 'ContainersNotReady');
      setAllContainers(p, { waiting: { reason: 'ContainerCreating' } });
    });
    if (!pod) return;
    this.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${rt.namespace}/${rt.name} to ${NODE_NAME}`);
    for (const c of pod.spec.containers) this.event(pod, 'Normal', 'Pulling', `Pulling image "${c.image}"`, c.name);
    if (this.faults.imagePullFailureFor(pod)) {
      this.podTimer(rt, CONTAINER_START_MS, () => this.failPull(rt, pod, 'ErrImagePull'));
      this.podTimer(rt, CONTAINER_START_MS + IMAGE_PULL_BACKOFF_MS, () => this.failPull(rt, pod, 'ImagePullBackOff'));
      return;
    }
    this.podTimer(rt, CONTAINER_START_MS, () => this.run(rt));
  }

  private failPull(rt: PodRuntime, pod: Pod, reason: 'ErrImagePull' | 'ImagePullBackOff'): void {
    for (const c of pod.spec.containers) {
      if (reason === 'ErrImagePull') {
        this.event(pod, 'Warning', 'Failed', `Failed to pull image "${c.image}": not found (simulated by kube-sim)`, c.name);
      } else {
        this.event(pod, 'Normal', 'BackOff', `Back-off pulling image "${c.image}"`, c.name);
      }
      this.event(pod, 'Warning', 'Failed', `Error: ${reason}`, c.name);
    }
    this.update(rt, (p) => {
      for (const c of pod.spec.containers) {
        const message =
          reason === 'ErrImagePull' ? `failed to pull and unpack image "${c.image}": not found (simulated by kube-sim)` : `Back-off pulling image "${c.image}"`;
        setContainer(p, c.name, { waiting: { reason, message } });
      }
    });
  }

  /**
   * Mounts volumes (retrying while a ConfigMap, Secret or key is missing), builds each container's
   * environment (retrying while a referenced Secret or ConfigMap or key is missing) and starts every
   * container. A failed mount is reported as the real kubelet's volume manager does: a FailedMount
   * event on the pod, the containers left waiting in ContainerCreating with no message. A failed env is
   * reported as kuberuntime's startContainer does: a Failed event `Error: <message>` and the container
   * waiting in CreateContainerConfigError with the message.
   */
  private run(rt: PodRuntime): void {
    const pod = this.store.get('Pod', rt.namespace, rt.name) as Pod | undefined;
    if (!pod) return;
    const mounts = pod.spec.containers.map((c) => ({ container: c, mount: mountVolumes(storeVolumeObjects(this.store), pod, c) }));
    const failed = mounts.find((m) => !m.mount.ok);
    if (failed && !failed.mount.ok) {
      this.event(pod, 'Warning', 'FailedMount', failed.mount.message);
      this.podTimer(rt, MOUNT_RETRY_MS, () => this.run(rt));
      return;
    }
    const environments = pod.spec.containers.map((c) => ({ container: c, env: containerEnvironment(this.store, pod, c) }));
    const unresolved = environments.filter((e) => !e.env.ok);
    if (unresolved.length > 0) {
      this.update(rt, (p) => {
        for (const { container, env } of unresolved) {
          if (!env.ok) setContainer(p, container.name, { waiting: { reason: 'CreateContainerConfigError', message: env.message } });
        }
      });
      for (const { container, env } of unresolved) if (!env.ok) this.event(pod, 'Warning', 'Failed', `Error: ${env.message}`, container.name);
      this.podTimer(rt, CONFIG_RETRY_MS, () => this.run(rt));
      return;
    }
    const ip = this.nextIp++;
    const podIP = `10.244.${(ip >> 8) & 255}.${ip & 255}`;
    const startedAt = this.nowIso();
    const running = this.update(rt, (p) => {
      p.status!.phase = 'Running';
      p.status!.podIP = podIP;
      p.status!.podIPs = [{ ip: podIP }];
      for (const c of p.spec.containers) {
        setContainer(
          p,
          c.name,
          { running: { startedAt } },
          {
            ready: true,
            started: true,
            imageID: `kube-sim/${c.image}@sha256:${randomBytes(32).toString('hex')}`,
            containerID: `containerd://${randomBytes(32).toString('hex')}`,
          },
        );
      }
      setCondition(p.status!, startedAt, 'ContainersReady', 'True');
      setCondition(p.status!, startedAt, 'Ready', 'True');
    });
    if (!running) return;
    for (const c of pod.spec.containers) {
      this.event(running, 'Normal', 'Pulled', `Successfully pulled image "${c.image}" in 1s (1s including waiting)`, c.name);
      this.event(running, 'Normal', 'Created', `Created container: ${c.name}`, c.name);
      this.event(running, 'Normal', 'Started', `Started container ${c.name}`, c.name);
    }
    for (const [i, { container, mount }] of mounts.entries()) {
      const cr = rt.containers.get(container.name)!;
      const env = environments[i]!.env;
      cr.env = env.ok ? env.env : new Map();
      cr.startedAt = startedAt;
      // The process sees its command and args with `$(VAR)` expanded from its environment, as the kubelet passes them.
      const lookup = (name: string) => cr.env?.get(name);
      const started = {
        ...container,
        ...(container.command ? { command: container.command.map((c) => expandVariables(c, lookup)) } : {}),
        ...(container.args ? { args: container.args.map((a) => expandVariables(a, lookup)) } : {}),
      };
      cr.program = selectProgram(this.context(rt, cr, running, started, mount.ok ? mount.files : new Map()));
      cr.program.start();
    }
    // An eviction fault counts from the containers' start, so "evicted 5 min into the test" holds for
    // a paused k6 runner too, give or take the seconds until it is unpaused.
    const evictAfter = this.faults.takeEvictionFor(running);
    if (evictAfter !== undefined) this.podTimer(rt, evictAfter, () => this.disrupt(rt.namespace, rt.name));
  }

  private context(rt: PodRuntime, cr: ContainerRuntime, pod: Pod, container: Container, files: Map<string, string>): ProgramContext {
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
      log: (text) => this.append(cr, text),
      exit: (code, reason) => this.exited(rt, cr, code, reason),
      env: (name) => cr.env?.get(name),
      readFile: (path) => files.get(posix.normalize(path)),
      // Read when the program asks, so a fault set after the pod started still applies.
      get exitCodeFault() {
        return faults.exitCodeFor(pod);
      },
      get vuInitDelayFault() {
        return faults.vuInitDelayFor(pod);
      },
      get droppedIterationsFault() {
        return faults.droppedIterationsFor(pod);
      },
      get cpuThrottlingFault() {
        return faults.cpuThrottlingFor(pod);
      },
    };
  }

  /**
   * Appends text (one or more lines) to a container's log and hands the records to its followers. A
   * line longer than MAX_LOG_RECORD_BYTES becomes several records, as the container runtime writes it.
   */
  private append(cr: ContainerRuntime, text: string): void {
    const at = this.scheduler.clock.now();
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    for (const line of body.split('\n')) {
      const pieces = logRecords(line);
      for (const [i, piece] of pieces.entries()) {
        const entry: LogLine = i < pieces.length - 1 ? { at, text: piece, partial: true } : { at, text: piece };
        cr.lines.push(entry);
        for (const follower of cr.followers) follower.line(entry);
      }
    }
  }

  /** The container has ended: followers get the end of their stream. */
  private endFollowers(cr: ContainerRuntime): void {
    const followers = [...cr.followers];
    cr.followers.clear();
    for (const follower of followers) follower.end();
  }

  private exited(rt: PodRuntime, cr: ContainerRuntime, exitCode: number, reason?: string): void {
    if (cr.exited) return;
    cr.exited = true;
    cr.timers.forEach((t) => t.cancel());
    this.endFollowers(cr);
    const finishedAt = this.nowIso();
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

  /**
   * The pod was deleted (by a client, a cascade or its Job's deadline). kube-sim deletes at once (no
   * Terminating phase), so its containers get SIGTERM (`terminate`) and are stopped in the same instant:
   * what a program does synchronously on the signal (k6 prints its summary and exits 105) reaches
   * whoever follows its log, the pod object is already gone.
   */
  private forget(pod: Pod): void {
    const rt = this.pods.get(pod.metadata.uid!);
    if (!rt) return;
    for (const cr of rt.containers.values()) {
      if (cr.startedAt !== undefined && !cr.exited) this.event(pod, 'Normal', 'Killing', `Stopping container ${cr.name}`, cr.name);
    }
    this.signalAll(rt);
    this.stopAll(rt);
    this.pods.delete(pod.metadata.uid!);
  }

  /** SIGTERM to every running container whose program handles it. */
  private signalAll(rt: PodRuntime): void {
    for (const cr of rt.containers.values()) {
      if (!cr.exited && cr.program?.terminate) cr.program.terminate();
    }
  }

  private stopAll(rt: PodRuntime): void {
    rt.timers.forEach((t) => t.cancel());
    for (const cr of rt.containers.values()) {
      cr.exited = true;
      cr.timers.forEach((t) => t.cancel());
      this.endFollowers(cr);
    }
  }

  private runtimeOf(namespace: string, name: string): { pod: Pod; rt: PodRuntime } | undefined {
    const pod = this.store.get('Pod', namespace, name) as Pod | undefined;
    const rt = pod && this.pods.get(pod.metadata.uid!);
    return pod && rt ? { pod, rt } : undefined;
  }

  /**
   * An eviction or node drain, as the Eviction API does it: the pod gets the DisruptionTarget condition
   * first, then its containers SIGTERM (`terminate`); a program that handles it ends on its own (k6:
   * 105, its summary when it was running); whatever still runs after the pod's grace period
   * (terminationGracePeriodSeconds, default 30 s), or does not handle the signal, is killed (137). The pod
   * ends Failed with the condition, and its Job's podFailurePolicy decides what happens next.
   */
  disrupt(namespace: string, name: string): void {
    const found = this.runtimeOf(namespace, name);
    if (!found) throw new ClusterNotFound(`pod ${namespace}/${name} not found`, 404);
    const { pod, rt } = found;
    if (isTerminal(pod) || pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True')) return;
    this.event(pod, 'Warning', 'Evicted', 'The pod was evicted (eviction simulated by kube-sim)');
    rt.timers.forEach((t) => t.cancel());
    rt.timers = [];
    this.update(rt, (p) => {
      setCondition(p.status!, this.nowIso(), 'DisruptionTarget', 'True', 'EvictionByEvictionAPI', 'Eviction API: evicting');
    });
    let graceful = false;
    for (const cr of rt.containers.values()) {
      if (cr.exited) continue;
      if (cr.startedAt !== undefined) this.event(pod, 'Normal', 'Killing', `Stopping container ${cr.name}`, cr.name);
      if (cr.program?.terminate) graceful = true;
    }
    this.signalAll(rt);
    const declared = (pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds;
    const graceMs = graceful ? Math.max(0, declared !== undefined ? declared * 1000 : DEFAULT_GRACE_MS) : 0;
    if (graceMs > 0 && [...rt.containers.values()].some((cr) => !cr.exited)) {
      this.podTimer(rt, graceMs, () => this.kill(rt));
    } else {
      this.kill(rt);
    }
  }

  /** The end of a disruption: containers still running are killed (137); the pod is Failed. */
  private kill(rt: PodRuntime): void {
    const pod = this.store.get('Pod', rt.namespace, rt.name) as Pod | undefined;
    if (!pod) return;
    const at = this.nowIso();
    for (const cr of rt.containers.values()) {
      if (!cr.exited) this.append(cr, 'kube-sim: container killed: pod disrupted (eviction)');
    }
    this.stopAll(rt);
    this.update(rt, (p) => {
      for (const c of p.spec.containers) {
        const current = p.status?.containerStatuses?.find((s) => s.name === c.name)?.state;
        if (current && 'terminated' in current) continue;
        const startedAt = rt.containers.get(c.name)?.startedAt;
        setContainer(
          p,
          c.name,
          { terminated: { exitCode: DISRUPTED_EXIT_CODE, reason: 'Error', startedAt, finishedAt: at } },
          {
            ready: false,
            started: false,
          },
        );
      }
      p.status!.phase = 'Failed';
      setCondition(p.status!, at, 'DisruptionTarget', 'True', 'EvictionByEvictionAPI', 'Eviction API: evicting');
      setCondition(p.status!, at, 'ContainersReady', 'False', 'PodFailed');
      setCondition(p.status!, at, 'Ready', 'False', 'PodFailed');
    });
  }

  /**
   * The container's log, as `GET pods/{name}/log` returns it: the records so far (filtered by
   * `sinceMs`, then the last `tailLines` RECORDS: a line split into 16 KiB records counts as several,
   * as the kubelet counts the lines of the CRI log file), and, when the container is still running, a
   * way to follow it (new records as they are written, then the end when the container terminates).
   * The router joins partial records back into lines (renderLogRecords).
   */
  readLog(namespace: string, name: string, container: string | undefined, options: LogOptions = {}): LogRead {
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
    let lines = cr.lines;
    if (options.sinceMs !== undefined) lines = lines.filter((l) => l.at >= options.sinceMs!);
    if (options.tailLines !== undefined) lines = options.tailLines <= 0 ? [] : lines.slice(-options.tailLines);
    const read: LogRead = { lines: [...lines] };
    if (!cr.exited) {
      read.follow = (follower) => {
        cr.followers.add(follower);
        return () => cr.followers.delete(follower);
      };
    }
    return read;
  }

  /**
   * A started container's environment (what `kubectl exec … env` would print), for tests; undefined
   * before it started or once its pod is gone.
   */
  environmentOf(namespace: string, name: string, container?: string): ReadonlyMap<string, string> | undefined {
    const found = this.runtimeOf(namespace, name);
    if (!found) return undefined;
    const cr = container === undefined ? [...found.rt.containers.values()][0] : found.rt.containers.get(container);
    return cr?.env;
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
    throw serviceUnavailable(`error trying to reach service: dial tcp ${pod.status.podIP}:${request.port}: connect: connection refused`);
  }
}

/**
 * A log line as the container runtime records it: pieces of at most MAX_LOG_RECORD_BYTES bytes of
 * UTF-8. kube-sim cuts between characters (never inside a multi-byte one), so a piece may be a few
 * bytes shorter than the runtime's; an empty line is one empty record.
 */
export function logRecords(line: string): string[] {
  if (Buffer.byteLength(line) <= MAX_LOG_RECORD_BYTES) return [line];
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const ch of line) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > MAX_LOG_RECORD_BYTES) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += ch;
    bytes += size;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * Renders log records as the kubelet serves them (pkg/kubelet/kuberuntime/logs/logs.go, ReadLogs):
 * a partial record is written without its newline, so the pieces of a line come out joined; with
 * `timestamps`, only a record that starts a line gets the RFC 3339 prefix (logs.go's writer adds it
 * when the previous record ended with a newline). `state.newLine` carries that across calls (a
 * followed stream). From memory of logs.go, not checked against its source here: the partial/full
 * tags and the counting of tailLines over the file's records (tail.FindTailLineStartIndex counts
 * newline-terminated records, which is what lets a tail start inside a long line) are how containerd's
 * CRI log format and the kubelet work; the exact cut points of kube-sim's pieces are not verified.
 */
export function renderLogRecords(
  records: readonly LogLine[],
  timestamp: ((at: number) => string) | undefined,
  state: { newLine: boolean } = { newLine: true },
): string {
  let out = '';
  for (const r of records) {
    if (timestamp && state.newLine) out += `${timestamp(r.at)} `;
    out += r.partial ? r.text : `${r.text}\n`;
    state.newLine = !r.partial;
  }
  return out;
}
