/**
 * Load fidelity: did the run put on the target the load its plan asked for? Per runner and
 * for the run, from what Collect reads: the iterations each runner completed and those its engine
 * dropped (k6's `dropped_iterations`, core/summary.ts), the most VUs it had initialised against the
 * plan's (k6 inspect's maxVUs, the whole run), its CPU throttling over the test (core/cpu-throttling.ts),
 * whether it was replaced or left no result, and the run's measured start skew.
 *
 * The spec's `fidelity` rule (core/fidelity-rule.ts) turns poor fidelity into a failure: a runner that
 * dropped more than `maxDroppedIterations` of its planned iterations (completed + dropped), or a
 * CPU-starved runner under `cpuStarved: fail`, ends a run whose runners passed LOAD_NOT_DELIVERED,
 * naming each runner and its figure. Without the rule poor fidelity is said in the reason and changes
 * nothing; a run that failed, or regressed, for another reason keeps its outcome and gets the notes.
 */
import type { RunResult } from './aggregate';
import { CPU_STARVED_SHARE, type CpuThrottling } from './cpu-throttling';
import { CpuStarvedPolicy, type FidelityRule } from './fidelity-rule';
import { Outcome } from './status';

export interface RunnerFidelity {
  runner: number;
  /** Iterations it completed; absent without a result. */
  iterations?: number;
  /** Iterations its plan called for that never started; absent when its engine does not count them (Gatling) or without a result. */
  droppedIterations?: number;
  /** dropped / (completed + dropped): the share of its planned iterations it did not run. */
  droppedShare?: number;
  /** The most VUs it had initialised (k6's vus_max), when the engine tells. */
  vusMax?: number;
  /** Its CPU over the test (cgroup cpu.stat), when its log has the runner script's line. */
  cpu?: CpuThrottling;
  /** How many times its pod was replaced (onRunnerRestart: restart). */
  replaced: number;
  /** It left no result (its pod was lost, or the engine died before its summary). */
  lost: boolean;
}

export interface FidelityRecord {
  runners: RunnerFidelity[];
  /** Over the runners with a result. */
  iterations: number;
  /** Absent when no runner's engine counts them. */
  droppedIterations?: number;
  droppedShare?: number;
  /** The plan's VUs for the whole run (k6 inspect's maxVUs), when known. */
  plannedVUs?: number;
  /** The runners' vus_max added up, when every runner with a result tells. */
  vusMax?: number;
  /** Runners that were CPU-starved, lost (no result) or replaced, by index. */
  starved: number[];
  lost: number[];
  replaced: number[];
  /** The run's measured start skew (ms, start-skew.ts), when measured. */
  startSkewMs?: number;
  /** The spec's rule as applied; absent when the spec has no `fidelity`. */
  rule?: FidelityRule;
  /** What fails the run by the rule, one sentence per runner and figure (empty: nothing). */
  failures: string[];
  /** Poor fidelity the rule does not fail the run on, said in the reason. */
  warnings: string[];
}

export interface FidelityInput {
  result: RunResult;
  /** Every runner's index and how many times its pod was replaced. */
  runners: readonly { index: number; replaced: number }[];
  cpu: ReadonlyMap<number, CpuThrottling>;
  plannedVUs?: number;
  startSkewMs?: number;
  /** The spec's rule; undefined: report only. */
  rule?: FidelityRule;
}

const share = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

/** A share as the reason says it: `20.0 %`. */
export function percentText(s: number): string {
  return `${(s * 100).toFixed(1)} %`;
}

export function fidelityOf(input: FidelityInput): FidelityRecord {
  const { result, rule } = input;
  const summaries = new Map(result.runners.map((s) => [s.runner, s]));
  const runners = [...input.runners]
    .sort((a, b) => a.index - b.index)
    .map((r): RunnerFidelity => {
      const s = summaries.get(r.index);
      const cpu = input.cpu.get(r.index);
      const dropped = s?.droppedIterations;
      return {
        runner: r.index,
        ...(s ? { iterations: s.iterations } : {}),
        ...(s && dropped !== undefined ? { droppedIterations: dropped, droppedShare: share(dropped, s.iterations + dropped) } : {}),
        ...(s?.vusMax !== undefined ? { vusMax: s.vusMax } : {}),
        ...(cpu ? { cpu } : {}),
        replaced: r.replaced,
        lost: s === undefined,
      };
    });
  const reported = runners.filter((r) => !r.lost);
  const counting = reported.filter((r) => r.droppedIterations !== undefined);
  const iterations = reported.reduce((n, r) => n + (r.iterations ?? 0), 0);
  const dropped = counting.reduce((n, r) => n + r.droppedIterations!, 0);
  const countedIterations = counting.reduce((n, r) => n + (r.iterations ?? 0), 0);
  const vusKnown = reported.length > 0 && reported.every((r) => r.vusMax !== undefined);

  const failures: string[] = [];
  const warnings: string[] = [];
  for (const r of runners) {
    if (r.droppedIterations) {
      const said = `runner ${r.runner} dropped ${r.droppedIterations} of ${r.droppedIterations + (r.iterations ?? 0)} planned iterations (${percentText(r.droppedShare!)}`;
      const limit = rule?.maxDroppedShare;
      // Without a limit nothing is more than it.
      if (r.droppedShare! > (limit ?? Infinity)) failures.push(`${said}, more than the spec's ${percentText(limit!)})`);
      else warnings.push(`${said}${limit === undefined ? '' : `, within the spec's ${percentText(limit)}`})`);
    }
    if (r.cpu?.starved) {
      const said = `runner ${r.runner} was CPU-starved: throttled in ${r.cpu.throttledPeriods} of ${r.cpu.periods} CPU periods (${percentText(r.cpu.throttledShare)}; starved from ${percentText(CPU_STARVED_SHARE)}), its latencies are inflated`;
      (rule?.cpuStarved === CpuStarvedPolicy.fail ? failures : warnings).push(said);
    }
  }
  return {
    runners,
    iterations,
    ...(counting.length > 0 ? { droppedIterations: dropped, droppedShare: share(dropped, countedIterations + dropped) } : {}),
    ...(input.plannedVUs !== undefined ? { plannedVUs: input.plannedVUs } : {}),
    ...(vusKnown ? { vusMax: reported.reduce((n, r) => n + r.vusMax!, 0) } : {}),
    starved: runners.filter((r) => r.cpu?.starved).map((r) => r.runner),
    lost: runners.filter((r) => r.lost).map((r) => r.runner),
    replaced: runners.filter((r) => r.replaced > 0).map((r) => r.runner),
    ...(input.startSkewMs !== undefined ? { startSkewMs: input.startSkewMs } : {}),
    ...(rule ? { rule } : {}),
    failures,
    warnings,
  };
}

/**
 * The outcome and reason after fidelity: LOAD_NOT_DELIVERED, naming each failure, when the runners
 * passed (SUCCEEDED) and the spec's rule fails the run; otherwise the outcome as decided, the
 * failures and warnings said after its reason.
 */
export function afterFidelity(decided: { outcome: Outcome; reason: string }, record: FidelityRecord): { outcome: Outcome; reason: string } {
  if (decided.outcome === Outcome.SUCCEEDED && record.failures.length > 0) {
    return { outcome: Outcome.LOAD_NOT_DELIVERED, reason: [`load not delivered: ${record.failures.join('; ')}`, ...record.warnings].join('; ') };
  }
  return { ...decided, reason: [decided.reason, ...record.failures, ...record.warnings].join('; ') };
}
