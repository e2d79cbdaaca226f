/**
 * What a simulated container does once the kubelet has started it. A program writes log lines,
 * schedules work in sim time, may answer HTTP on a port (reached through pods/proxy) and ends with
 * an exit code. The kubelet cancels a program's timers when its container is killed.
 */
import type { Scheduled } from '../sim-clock';
import type { Container, Pod } from '../wire-types';

export interface ProgramContext {
  /** The pod as it was when the container started. */
  readonly pod: Pod;
  readonly container: Container;
  /** Simulated epoch ms. */
  now(): number;
  /** Runs `run` after `simMs` of simulated time, unless the container is killed first. */
  after(simMs: number, run: () => void): Scheduled;
  at(simAt: number, run: () => void): Scheduled;
  /** Appends text (one or more lines) to the container's log. */
  log(text: string): void;
  /** Ends the container; later calls are ignored. `reason` defaults to Completed / Error. */
  exit(code: number, reason?: string): void;
  env(name: string): string | undefined;
  /** A file from a ConfigMap volume mounted into this container, or undefined. */
  readFile(path: string): string | undefined;
  /** The exit code a fault forces on this container (runner pods only), if any, as of now. */
  readonly exitCodeFault: number | undefined;
  /** The VU-init delay (sim ms) a `setVuInitDelay` fault forces on this container, if any, as of now. */
  readonly vuInitDelayFault: number | undefined;
  /** The iterations a `setDroppedIterations` fault makes this container drop, if any, as of now. */
  readonly droppedIterationsFault: number | undefined;
  /** The share of CPU periods a `setCpuThrottling` fault throttles this container in, if any, as of now. */
  readonly cpuThrottlingFault: number | undefined;
}

export interface HttpReply {
  status: number;
  /** A string is sent as is; anything else as JSON. */
  body: unknown;
  /** The Content-Type the program answers with; default `application/json`; '' = no Content-Type header. */
  contentType?: string;
}

export interface ProxiedRequest {
  port: number;
  method: string;
  /** Path below the proxy subresource, starting with '/'. */
  path: string;
  /** The request body as text ('' when there is none). */
  body: string;
}

export interface ContainerProgram {
  start(): void;
  /** Answers a request to one of the container's ports; undefined = nothing listens there. */
  serve?(request: ProxiedRequest): HttpReply | undefined;
  /**
   * SIGTERM: the kubelet stops the container gracefully (eviction, pod deletion, a Job's deadline).
   * The program should end with `ctx.exit` within the pod's grace period (terminationGracePeriodSeconds,
   * default 30 s of sim time); one still running then is killed (137). It may be called more than once
   * (a second signal). Without this hook the container is killed at once (137), as before.
   */
  terminate?(): void;
}
