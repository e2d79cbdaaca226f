/**
 * Collect's load fidelity (core/fidelity.ts) from what the run's records hold: each runner's CPU
 * throttling from its log (the runner script's cpu.stat line), the plan's VUs from AwaitPrepared (k6
 * inspect's maxVUs), the measured start skew, how many times each runner's pod was replaced, and the
 * spec's `fidelity` rule.
 */
import type { RunResult } from '../core/aggregate';
import { cpuThrottlingFromLog, type CpuThrottling } from '../core/cpu-throttling';
import { fidelityOf, type FidelityRecord } from '../core/fidelity';
import { parseFidelityRule } from '../core/fidelity-rule';
import { CPU_STAT_LINE_PREFIX } from '../core/runner-contract';
import type { MeasuredStart } from '../core/start-skew';
import { Stage } from '../core/status';
import type { PreparedResult } from './await-prepared';
import { outputOf, type RunContext } from './run-context';
import type { RunnerView } from './runners';
import type { StartRecord } from './start';

/** A runner's CPU over its test from the tail of its log, if the runner script printed its cpu.stat line. */
export function runnerCpuFromLog(log: string): CpuThrottling | undefined {
  return cpuThrottlingFromLog(log, CPU_STAT_LINE_PREFIX);
}

/** The run's fidelity record; `measured` is the start Collect measured from the logs, if any. */
export function runFidelity(
  run: RunContext,
  runners: readonly RunnerView[],
  result: RunResult,
  cpu: ReadonlyMap<number, CpuThrottling>,
  measured: MeasuredStart | undefined,
): FidelityRecord {
  const plannedVUs = outputOf<PreparedResult>(run.view, Stage.AwaitPrepared)?.requirements?.maxVUs;
  const skew = outputOf<StartRecord>(run.view, Stage.Start)?.measured ?? measured;
  return fidelityOf({
    result,
    runners: runners.map((r) => ({ index: r.index, replaced: Math.max(0, r.pods.length - 1) })),
    cpu,
    ...(plannedVUs !== undefined ? { plannedVUs } : {}),
    ...(skew ? { startSkewMs: skew.skewMs } : {}),
    ...(run.spec.fidelity ? { rule: parseFidelityRule(run.spec.fidelity) } : {}),
  });
}
