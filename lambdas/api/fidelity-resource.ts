/**
 * GET /runs/{id}'s `fidelity`: the load as delivered against the plan (core/fidelity.ts), as Collect
 * recorded it, with its lines in words (core/fidelity-text.ts).
 */
import * as z from 'zod';
import type { FidelityRecord } from '../core/fidelity';
import { CpuStarvedPolicy } from '../core/fidelity-rule';
import { fidelitySummary } from '../core/fidelity-text';

const share = (what: string) => z.number().min(0).max(1).meta({ description: what });

const cpuSchema = z.object({
  periods: z.number().int().meta({
    description: "CPU enforcement periods (100 ms by default) over the test, from the container's cgroup cpu.stat; 0: no CPU limit, nothing to judge",
  }),
  throttledPeriods: z.number().int(),
  throttledShare: share('throttledPeriods / periods'),
  throttledMs: z.number().optional().meta({ description: 'Time throttled, summed over CPUs (ms)' }),
  usageMs: z.number().optional().meta({ description: 'CPU time used (ms), cgroup v2 only' }),
  starved: z.boolean().meta({ description: 'Throttled in 5 % or more of its periods: its latencies are inflated' }),
});

export const fidelityResourceSchema = z
  .object({
    iterations: z.number().int().meta({ description: 'Iterations completed by the runners with a result' }),
    droppedIterations: z
      .number()
      .int()
      .optional()
      .meta({ description: "k6's dropped_iterations over the runners; absent when the engine does not count them (Gatling)" }),
    droppedShare: share('dropped / (completed + dropped)').optional(),
    plannedVUs: z.number().int().optional().meta({ description: "The plan's VUs for the whole run (k6 inspect's maxVUs)" }),
    vusMax: z.number().int().optional().meta({ description: "The runners' vus_max added up" }),
    runners: z.array(
      z.object({
        runner: z.number().int(),
        iterations: z.number().int().optional(),
        droppedIterations: z.number().int().optional(),
        droppedShare: share("dropped / (completed + dropped): the share of the runner's planned iterations it did not run").optional(),
        vusMax: z.number().int().optional(),
        cpu: cpuSchema.optional(),
        replaced: z.number().int().meta({ description: "How many times the runner's pod was replaced" }),
        lost: z.boolean().meta({ description: 'The runner left no result' }),
      }),
    ),
    starved: z.array(z.number().int()).meta({ description: 'CPU-starved runners' }),
    lost: z.array(z.number().int()),
    replaced: z.array(z.number().int()),
    startSkewMs: z.number().optional().meta({ description: "The run's measured start skew (test.startSkew)" }),
    rule: z
      .object({ maxDroppedShare: share("The spec's maxDroppedIterations as a share").optional(), cpuStarved: z.enum(CpuStarvedPolicy) })
      .optional()
      .meta({ description: "The spec's fidelity rule as applied; absent when the spec has none (fidelity is then reported only)" }),
    failures: z.array(z.string()).meta({ description: 'What fails the run by the rule (the run is LOAD_NOT_DELIVERED when its runners passed)' }),
    warnings: z.array(z.string()).meta({ description: 'Poor fidelity the rule does not fail the run on' }),
    summary: z.array(z.string()).meta({ description: 'The same in words, one line each' }),
  })
  .meta({ description: 'The load as delivered against the plan, per runner and for the run (docs/run-spec.md, Fidelity); absent before Collect' });

export type FidelityResource = z.infer<typeof fidelityResourceSchema>;

export function fidelityResource(f: FidelityRecord): FidelityResource {
  return { ...f, summary: fidelitySummary(f) };
}
