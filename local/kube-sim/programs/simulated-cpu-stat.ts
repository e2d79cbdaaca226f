/**
 * What the runner script's cpu.stat line (lambdas/engines/pod-scripts.ts) shows for a simulated runner:
 * cgroup v2 `cpu.stat` read before and after its test, with the cpu controller enabled (as a kubelet
 * on cgroup v2 has it). With a CPU limit the CFS bandwidth controller counts enforcement periods (100 ms,
 * `cpu.max`'s default period) while the container is busy, and `throttledShare` of them are throttled
 * (the setCpuThrottling fault); without a limit (`cpu.max` "max") nr_periods stays 0, as the kernel's
 * does, so a throttling fault on a pod without a CPU limit shows nothing. The usage figures are
 * synthetic: what a busy load generator at its limit (throttled) or below it would use.
 */

import { CPU_STAT_LINE_PREFIX, ENV_CPU_STAT_FILES } from '../../../lambdas/core/runner-contract';
import type { ProgramContext } from './program';

/**
 * The line the runner script prints once the engine it started at `engineStartedAt` has exited, or
 * undefined when the pod's env names no cpu.stat file (the script then prints none): the container's
 * CPU limit and the setCpuThrottling fault decide the numbers.
 */
export function simulatedCpuStatLine(ctx: ProgramContext, engineStartedAt: number): string | undefined {
  if (!ctx.env(ENV_CPU_STAT_FILES)) return undefined;
  const elapsed = Math.max(0, ctx.now() - engineStartedAt);
  return `${CPU_STAT_LINE_PREFIX}${simulatedCpuStat(elapsed, cpuCores(ctx.container.resources?.limits?.cpu), ctx.cpuThrottlingFault ?? 0)}`;
}

/** A Kubernetes CPU quantity (`500m`, `1`, `1.5`) in cores; undefined for anything else. */
export function cpuCores(quantity: string | undefined): number | undefined {
  const m = quantity === undefined ? null : /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity.trim());
  if (!m) return undefined;
  const cores = Number(m[1]) / (m[2] ? 1000 : 1);
  return cores > 0 ? cores : undefined;
}

const PERIOD_MS = 100;

/** `start <reading> end <reading>`, each reading cpu.stat's lines joined by single spaces. */
export function simulatedCpuStat(elapsedMs: number, limitCores: number | undefined, throttledShare = 0): string {
  const periods = limitCores === undefined ? 0 : Math.floor(elapsedMs / PERIOD_MS);
  const throttled = Math.round(periods * throttledShare);
  // Busy at its limit when throttled, at 40 % of it (or of one core, without a limit) otherwise.
  const usageUsec = Math.round(elapsedMs * 1000 * (limitCores ?? 1) * (throttled > 0 ? 1 : 0.4));
  const reading = (usage: number, nrPeriods: number, nrThrottled: number, throttledUsec: number) =>
    [
      ['usage_usec', usage],
      ['user_usec', Math.round(usage * 0.8)],
      ['system_usec', usage - Math.round(usage * 0.8)],
      ['nr_periods', nrPeriods],
      ['nr_throttled', nrThrottled],
      ['throttled_usec', throttledUsec],
      ['nr_bursts', 0],
      ['burst_usec', 0],
    ]
      .map(([k, v]) => `${k} ${v}`)
      .join(' ');
  const base = 20_000; // the shell's and the image's start before the engine
  return `start ${reading(base, 0, 0, 0)} end ${reading(base + usageUsec, periods, throttled, throttled * 40_000)}`;
}
