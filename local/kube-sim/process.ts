/**
 * kube-sim in its own process: the control plane (bench's figures, `--clusters N` locally) and the
 * simulated cluster do not share an event loop, so what is measured or watched crosses the wire as
 * on EKS. Both sides run on a ScaledClock of the same scale and origin, so they read the same
 * simulated time. The child is process-child.ts, run with tsx (a dev dependency, as `npm start`
 * needs): from the CLI bundle too, whose import.meta.url names this source file.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { ScaledClock } from '../clock/scaled-clock';
import { kubeSimKubeConfig, type RequestLogEntry } from './index';

export interface KubeSimProcessOptions {
  /** Simulated seconds per real second (default 1). */
  timeScale?: number;
  /**
   * The real instant (epoch ms) at which its clock and real time agree (default: now). Clusters given
   * the same scale and origin read the same simulated time, as NTP keeps EKS clusters' clocks.
   */
  origin?: number;
}

export type ChildRequest =
  | { op: 'requestLog'; method?: string; pathIncludes?: string }
  | { op: 'requestCount' }
  | { op: 'clearRequestLog' }
  | { op: 'count'; kind: string; namespace?: string; labelSelector?: string }
  | { op: 'fault'; method: string; args: unknown[] }
  | { op: 'usage' };

export type ChildReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export interface KubeSimProcess {
  readonly url: string;
  readonly timeScale: number;
  /** This process's view of the cluster's clock (same scale and origin as the child's). */
  readonly clock: ScaledClock;
  kubeConfig(): KubeConfig;
  requestLog(filter?: { method?: string; pathIncludes?: string }): Promise<RequestLogEntry[]>;
  requestCount(): Promise<number>;
  clearRequestLog(): Promise<void>;
  /** How many objects of `kind` exist (optionally in a namespace, by label selector). */
  count(kind: string, namespace?: string, labelSelector?: string): Promise<number>;
  /** Calls `sim.faults[method](...args)` in the child (e.g. setLatency, setExitCode, setVuInitDelay, clear). */
  fault(method: string, ...args: unknown[]): Promise<void>;
  /** The child's process.resourceUsage() (CPU µs so far, maxRSS in KiB: its peak). */
  usage(): Promise<NodeJS.ResourceUsage>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./process-child.ts', import.meta.url));
/** tsx's loader by its absolute URL: `--import tsx` would resolve from the working directory, which may be anywhere. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export async function startKubeSimProcess(options: KubeSimProcessOptions = {}): Promise<KubeSimProcess> {
  const timeScale = options.timeScale ?? 1;
  const origin = options.origin ?? Date.now();
  const child: ChildProcess = fork(CHILD, [], {
    execArgv: ['--import', TSX],
    env: { ...process.env, LOADPLANE_KUBE_SIM_PROCESS: JSON.stringify({ timeScale, origin }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`kube-sim process exited ${code} before it was ready`)));
    child.once('message', (m: { url: string }) => resolve(m.url));
  });
  child.removeAllListeners('exit');
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  child.on('message', (reply: ChildReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.value);
    else waiter?.reject(new Error(`kube-sim process: ${reply.error}`));
  });
  child.on('exit', (code) => {
    for (const w of pending.values()) w.reject(new Error(`kube-sim process exited ${code}`));
    pending.clear();
  });
  const call = <T>(request: ChildRequest) =>
    new Promise<T>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`kube-sim process: closed (exit ${child.exitCode ?? child.signalCode ?? 'pending'})`));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, request });
    });
  const clock = new ScaledClock(timeScale, Date.now, undefined, origin);
  return {
    url,
    timeScale,
    clock,
    kubeConfig: () => kubeSimKubeConfig(url),
    requestLog: (filter = {}) => call({ op: 'requestLog', ...filter }),
    requestCount: () => call({ op: 'requestCount' }),
    clearRequestLog: () => call({ op: 'clearRequestLog' }),
    count: (kind, namespace, labelSelector) => call({ op: 'count', kind, ...(namespace ? { namespace } : {}), ...(labelSelector ? { labelSelector } : {}) }),
    fault: (method, ...args) => call({ op: 'fault', method, args }),
    usage: () => call({ op: 'usage' }),
    close: async () => {
      clock.close();
      // Already gone: exited (exitCode) or killed by a signal (signalCode, exitCode stays null); no 'exit' is coming.
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.disconnect();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
