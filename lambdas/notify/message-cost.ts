/**
 * A run's cost in its message (core/run-cost.ts's RunCost, as it stood when Notify read it): the
 * message is sent before Cleanup, so the control plane's is what the run recorded up to Notify and
 * the runners' estimate runs from Launch to then. The webhook sends the figures; Slack one line.
 */
import { formatUsd, type RunCost } from '../core/run-cost';

export interface MessageCost {
  /** US dollars, when Notify read them: the control plane's recorded, the runners' estimated. */
  usd: number;
  controlPlaneUsd: number;
  runnersUsd: number;
  /** The runners' prices: where they come from, and when they were read. */
  runnerPrices: { source: string; read: string };
  /** `$0.0123 so far: control plane $0.0056 (224 transitions, 78 invocations), runners $0.0067 (estimate: 4 runners, 1.2 vCPU-h, 2.4 GiB-h)`. */
  text: string;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export function messageCost(cost: RunCost): MessageCost {
  const cp = cost.controlPlane;
  const r = cost.runners;
  return {
    usd: cost.usd,
    controlPlaneUsd: cp.usd,
    runnersUsd: r.usd,
    runnerPrices: { ...r.prices },
    text:
      `${formatUsd(cost.usd)} so far: control plane ${formatUsd(cp.usd)} (${cp.transitions} transitions, ${cp.invocations} invocations), ` +
      `runners ${formatUsd(r.usd)} (estimate: ${r.runners} runner${r.runners === 1 ? '' : 's'}, ${round(r.vcpuHours)} vCPU-h, ${round(r.gibHours)} GiB-h)`,
  };
}
