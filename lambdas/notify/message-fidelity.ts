/**
 * The notification's load fidelity (core/fidelity.ts): the run's figures, the runners whose load was
 * poor (dropped iterations, CPU-starved, lost or replaced: the others add nothing to a message, and a
 * thousand-runner run would carry a thousand rows), what the spec's rule failed or warned of, and the
 * lines in words (core/fidelity-text.ts). Absent figures are null, as in the rest of the payload.
 */
import type { FidelityRecord } from '../core/fidelity';
import { fidelitySummary } from '../core/fidelity-text';

export interface MessageFidelity {
  iterations: number;
  droppedIterations: number | null;
  droppedShare: number | null;
  plannedVUs: number | null;
  vusMax: number | null;
  /** Only runners that dropped iterations, were CPU-starved, were lost or replaced. */
  runners: {
    runner: number;
    droppedIterations: number | null;
    droppedShare: number | null;
    cpuThrottledShare: number | null;
    starved: boolean;
    replaced: number;
    lost: boolean;
  }[];
  starved: number[];
  lost: number[];
  replaced: number[];
  failures: string[];
  warnings: string[];
  summary: string[];
}

export function messageFidelity(f: FidelityRecord): MessageFidelity {
  return {
    iterations: f.iterations,
    droppedIterations: f.droppedIterations ?? null,
    droppedShare: f.droppedShare ?? null,
    plannedVUs: f.plannedVUs ?? null,
    vusMax: f.vusMax ?? null,
    runners: f.runners
      .filter((r) => (r.droppedIterations ?? 0) > 0 || r.cpu?.starved || r.lost || r.replaced > 0)
      .map((r) => ({
        runner: r.runner,
        droppedIterations: r.droppedIterations ?? null,
        droppedShare: r.droppedShare ?? null,
        cpuThrottledShare: r.cpu && r.cpu.periods > 0 ? r.cpu.throttledShare : null,
        starved: r.cpu?.starved ?? false,
        replaced: r.replaced,
        lost: r.lost,
      })),
    starved: f.starved,
    lost: f.lost,
    replaced: f.replaced,
    failures: f.failures,
    warnings: f.warnings,
    summary: fidelitySummary(f),
  };
}
