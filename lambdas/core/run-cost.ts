/**
 * What a run cost, as GET /runs/{id}, `loadplane list`, the report and the message show it: the
 * control plane's recorded counts priced at AWS's list prices (control-plane-cost.ts) and the
 * runners' estimate (runner-cost.ts) at the deployment's prices. Shared by api, report and notify.
 */
import { lambdaGbSeconds, priceControlPlane, type ControlPlaneCounts } from './control-plane-cost';
import type { RunnerPrices } from './runner-cost';

/** What the runners requested over their life: Cleanup records it (ledger/run-cost.ts); a live run's is read off its stages. */
export interface RunnerUsage {
  runners: number;
  /** From Launch to Cleanup (or now), seconds. */
  seconds: number;
  /** Requested vCPU × seconds and GiB × seconds, over all runners. */
  vcpuSeconds: number;
  gibSeconds: number;
}

export interface RunCost {
  /** US dollars: the control plane's and the runners' estimate. */
  usd: number;
  controlPlane: {
    usd: number;
    transitions: number;
    invocations: number;
    lambdaGbSeconds: number;
    readUnits: number;
    writeUnits: number;
    apiRequests: number;
  };
  runners: {
    usd: number;
    runners: number;
    seconds: number;
    vcpuHours: number;
    gibHours: number;
    prices: Pick<RunnerPrices, 'source' | 'read'>;
  };
}

export const NO_RUNNERS: RunnerUsage = { runners: 0, seconds: 0, vcpuSeconds: 0, gibSeconds: 0 };

export function priceRun(counts: ControlPlaneCounts, usage: RunnerUsage, prices: RunnerPrices): RunCost {
  const controlPlane = priceControlPlane(counts).total;
  const vcpuHours = usage.vcpuSeconds / 3600;
  const gibHours = usage.gibSeconds / 3600;
  const runners = vcpuHours * prices.vcpuHourUsd + gibHours * prices.gibHourUsd;
  return {
    usd: controlPlane + runners,
    controlPlane: {
      usd: controlPlane,
      transitions: counts.transitions,
      invocations: counts.invocations,
      lambdaGbSeconds: lambdaGbSeconds(counts),
      readUnits: counts.readUnits,
      writeUnits: counts.writeUnits,
      apiRequests: counts.apiRequests,
    },
    runners: { usd: runners, runners: usage.runners, seconds: usage.seconds, vcpuHours, gibHours, prices: { source: prices.source, read: prices.read } },
  };
}

/** Dollars as the surfaces print them: 4 decimals under $1, else cents. */
export const formatUsd = (usd: number): string => `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
