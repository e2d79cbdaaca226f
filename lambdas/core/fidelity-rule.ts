/**
 * The spec's `fidelity` as written (`{ maxDroppedIterations: '5%', cpuStarved: fail }`) and as
 * core/fidelity.ts applies it. The spec keeps the text, so a validated spec validates again unchanged
 * (a schedule's stored spec); Collect parses it.
 */

/** What a CPU-starved runner does to the run: `fail` ends it LOAD_NOT_DELIVERED, `warn` says so in the reason. */
export const CpuStarvedPolicy = { fail: 'fail', warn: 'warn' } as const;
export type CpuStarvedPolicy = (typeof CpuStarvedPolicy)[keyof typeof CpuStarvedPolicy];

export interface FidelityRuleText {
  /** The most a runner may drop of the iterations its plan asked for: `5%`, `0.5%`, `0%`. */
  maxDroppedIterations?: string;
  cpuStarved?: CpuStarvedPolicy;
}

/** As core/fidelity.ts applies it: a share (0.05 for `5%`). */
export interface FidelityRule {
  maxDroppedShare?: number;
  cpuStarved: CpuStarvedPolicy;
}

const DROPPED_FORM = /^(\d{1,2}(?:\.\d{1,2})?)%$/;
const DROPPED_MAX = 99;

/** The problem with `maxDroppedIterations` as written, naming its form and bounds; undefined when it is valid. */
export function droppedLimitProblem(text: string): string | undefined {
  // Number(undefined) is NaN when the form does not match, and NaN <= DROPPED_MAX is false.
  const n = Number(DROPPED_FORM.exec(text)?.[1]);
  if (n <= DROPPED_MAX) return undefined;
  return `must be a share of a runner's planned iterations written like "5%": from 0% to ${DROPPED_MAX}%, got ${JSON.stringify(text.slice(0, 20))}`;
}

/** The rule as core/fidelity.ts applies it; valid text only. Without a spec field: nothing fails, starvation is said. */
export function parseFidelityRule(text: FidelityRuleText | undefined): FidelityRule {
  const dropped = text?.maxDroppedIterations;
  return {
    ...(dropped === undefined ? {} : { maxDroppedShare: Number(DROPPED_FORM.exec(dropped)![1]) / 100 }),
    cpuStarved: text?.cpuStarved ?? CpuStarvedPolicy.warn,
  };
}
