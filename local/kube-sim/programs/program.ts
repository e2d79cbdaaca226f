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
}

export interface HttpReply {
  status: number;
  body: unknown;
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
}
