/**
 * The child half of process.ts: kube-sim in a process of its own, on a ScaledClock whose
 * scale and origin the parent gives (so the parent's clock reads the same time), answering the
 * parent's requests over the IPC channel. Not for use on its own.
 */
import { readFileSync } from 'node:fs';
import { ScaledClock } from '../clock/scaled-clock';
import { startKubeSim, type KubeSim } from './index';
import type { ChildReply, ChildRequest, KubeSimProcessOptions } from './process';

const options = JSON.parse(process.env.LOADPLANE_KUBE_SIM_PROCESS ?? '{}') as Required<Pick<KubeSimProcessOptions, 'timeScale'>> & { origin: number };
const clock = new ScaledClock(options.timeScale, Date.now, (err) => console.error('kube-sim: a timer failed:', err), options.origin);
const sim: KubeSim = await startKubeSim({ clock });

function answer(request: ChildRequest): unknown {
  switch (request.op) {
    case 'requestLog':
      return sim.requestLog
        .filter((e) => request.pathIncludes === undefined || e.path.includes(request.pathIncludes))
        .filter((e) => request.method === undefined || e.method === request.method);
    case 'requestCount':
      return sim.requestLog.length;
    case 'clearRequestLog':
      sim.clearRequestLog();
      return null;
    case 'count':
      return sim.list(request.kind as never, request.namespace, request.labelSelector).length;
    case 'fault':
      return (sim.faults as unknown as Record<string, (...args: unknown[]) => unknown>)[request.method]!(...request.args) ?? null;
    case 'usage':
      // maxRSS as this program's own peak (VmHWM): getrusage's would start from the parent's RSS at fork.
      return { ...process.resourceUsage(), maxRSS: ownPeakRssKb() ?? process.resourceUsage().maxRSS };
  }
}

function ownPeakRssKb(): number | undefined {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

process.on('message', (message: { id: number; request: ChildRequest }) => {
  let reply: ChildReply;
  try {
    reply = { id: message.id, ok: true, value: answer(message.request) };
  } catch (err) {
    reply = { id: message.id, ok: false, error: String((err as Error).message ?? err) };
  }
  process.send!(reply);
});
process.on('disconnect', () => void sim.close().then(() => process.exit(0)));
process.send!({ ready: true, url: sim.url });
