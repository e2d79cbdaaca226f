/**
 * An estimate of what a run's runners cost: each runner pod's requested CPU and memory (a request
 * that is not set is its limit, as Kubernetes defaults it; neither: none) × how long the runners
 * lived, at the deployment's prices per vCPU-hour and GiB-hour (`runnerPrices`: EC2 on-demand or
 * Fargate by default, each with its source and the date it was read). An estimate, not a bill: a node
 * costs what it costs whether its pods request all of it or not, and Fargate rounds a pod up to its
 * next size and adds 256 MiB; neither is modelled.
 *
 * Before a run starts (the deployment's `maxRunCostUsd`, checked by the API's submit and by Admit)
 * the duration is the longest the spec lets the test run: `timeouts.run`, or without it what
 * `timeouts.total` leaves after prepare and ready.
 */
import { formatDuration } from './duration';
import { formatUsd } from './run-cost';

export interface RunnerPrices {
  /** US dollars per vCPU-hour and per GiB-hour of requested memory. */
  vcpuHourUsd: number;
  gibHourUsd: number;
  /** Where the prices come from, and when they were read (YYYY-MM-DD). */
  source: string;
  read: string;
}

/** Fargate Linux/x86 in us-east-1 ($0.04048 per vCPU-hour, $0.004445 per GB-hour), billed per second, 1 minute at least. */
const FARGATE: RunnerPrices = {
  vcpuHourUsd: 0.04048,
  gibHourUsd: 0.004445,
  source: 'AWS Fargate on-demand, Linux/x86, us-east-1 (https://aws.amazon.com/fargate/pricing/, as quoted by factualminds.com, June 2026)',
  read: '2026-12-03',
};

/**
 * EC2 on-demand: an m7g.large (2 vCPU, 8 GiB, Linux, us-east-1, $0.0816 an hour) split into a
 * vCPU-hour and a GiB-hour price in Fargate's proportion (one vCPU-hour = 9.1 GiB-hours), so that
 * 2 vCPU + 8 GiB for an hour cost the instance's hour.
 */
const M7G_LARGE = { usdPerHour: 0.0816, vcpu: 2, gib: 8 };
const FARGATE_RATIO = FARGATE.vcpuHourUsd / FARGATE.gibHourUsd;
const M7G_GIB_HOUR = M7G_LARGE.usdPerHour / (M7G_LARGE.vcpu * FARGATE_RATIO + M7G_LARGE.gib);
const EC2: RunnerPrices = {
  vcpuHourUsd: M7G_GIB_HOUR * FARGATE_RATIO,
  gibHourUsd: M7G_GIB_HOUR,
  source:
    "EC2 on-demand m7g.large, Linux, us-east-1, $0.0816 an hour (https://aws.amazon.com/ec2/pricing/on-demand/, as quoted by factualminds.com, June 2026), split per vCPU and GiB in Fargate's proportion",
  read: '2026-12-03',
};

export const RUNNER_PRICES = { ec2: EC2, fargate: FARGATE } as const;
export type RunnerPriceDefault = keyof typeof RUNNER_PRICES;

/** What one runner pod requests, and how many runners there are. */
export interface RunnerShape {
  parallelism: number;
  runner: { resources: { requests: { cpu?: string; memory?: string }; limits: { cpu?: string; memory?: string } } };
}

export interface RunnerEstimate {
  usd: number;
  /** Requested vCPU × hours and GiB × hours over all runners. */
  vcpuHours: number;
  gibHours: number;
  runners: number;
  /** How long the runners were counted for, in seconds. */
  seconds: number;
  prices: Pick<RunnerPrices, 'source' | 'read'>;
}

const DECIMAL: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A Kubernetes quantity's value (`500m` → 0.5, `512Mi` → 536870912, `1e3` → 1000); undefined if it is not one. */
export function quantityValue(text: string): number | undefined {
  const match = /^(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/.exec(text);
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (/^[eE]/.test(suffix)) return number * 10 ** Number(suffix.slice(1));
  return number * (BINARY[suffix] ?? DECIMAL[suffix]!);
}

/** One runner's requested vCPU and GiB. */
export function runnerRequests(shape: RunnerShape): { vcpu: number; gib: number } {
  const { requests, limits } = shape.runner.resources;
  const cpu = requests.cpu ?? limits.cpu;
  const memory = requests.memory ?? limits.memory;
  return { vcpu: cpu === undefined ? 0 : (quantityValue(cpu) ?? 0), gib: memory === undefined ? 0 : (quantityValue(memory) ?? 0) / 2 ** 30 };
}

/** The runners of `shape` for `seconds` at `prices`. */
export function estimateRunners(shape: RunnerShape, seconds: number, prices: RunnerPrices): RunnerEstimate {
  const { vcpu, gib } = runnerRequests(shape);
  const hours = Math.max(0, seconds) / 3600;
  const vcpuHours = shape.parallelism * vcpu * hours;
  const gibHours = shape.parallelism * gib * hours;
  return {
    usd: vcpuHours * prices.vcpuHourUsd + gibHours * prices.gibHourUsd,
    vcpuHours,
    gibHours,
    runners: shape.parallelism,
    seconds: Math.max(0, seconds),
    prices: { source: prices.source, read: prices.read },
  };
}

/** The longest the spec lets its test run, in seconds: `timeouts.run`, or what `timeouts.total` leaves after prepare and ready. */
export function plannedRunSeconds(timeouts: { prepare: number; ready: number; run?: number; total: number }): number {
  return timeouts.run ?? Math.max(0, timeouts.total - timeouts.prepare - timeouts.ready);
}

/**
 * Why a run may not start under the deployment's cap (`maxRunCostUsd`): its runners' estimate for the
 * longest the spec lets the test run, over the cap. Undefined without a cap or within it.
 */
export function costCapProblem(
  spec: RunnerShape & { timeouts: { prepare: number; ready: number; run?: number; total: number } },
  config: { maxRunCostUsd?: number; runnerPrices: RunnerPrices },
): string | undefined {
  if (config.maxRunCostUsd === undefined) return undefined;
  const seconds = plannedRunSeconds(spec.timeouts);
  const estimate = estimateRunners(spec, seconds, config.runnerPrices);
  if (estimate.usd <= config.maxRunCostUsd) return undefined;
  const { vcpu, gib } = runnerRequests(spec);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return (
    `the runners' estimated cost ${formatUsd(estimate.usd)} is over the deployment's maxRunCostUsd ${formatUsd(config.maxRunCostUsd)}: ` +
    `${spec.parallelism} runner${spec.parallelism === 1 ? '' : 's'} × ${round(vcpu)} vCPU and ${round(gib)} GiB requested × ${formatDuration(seconds)} ` +
    `(${spec.timeouts.run === undefined ? 'what timeouts.total leaves after prepare and ready' : 'timeouts.run'}) at $${Number(config.runnerPrices.vcpuHourUsd.toPrecision(4))} per vCPU-hour and $${Number(config.runnerPrices.gibHourUsd.toPrecision(4))} per GiB-hour; ` +
    'lower parallelism or the requests, or bound the test with timeouts.run'
  );
}
