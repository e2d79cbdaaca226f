/**
 * A run's recorded control-plane cost (lambdas/stages/metered-stage.ts → ledger/run-cost.ts) against
 * the bench's per-run model (bench/figures/per-run.ts) for a 1 h and a 24 h test on the VirtualClock:
 * the bench counts on its own (transitions off the local engine's histories of the run and its cruise
 * windows, request units from its own middleware on the store's client), the run counts what it can
 * know itself; both must agree exactly, and the run's priced bill must be per-run.ts's monthly bill
 * over its RUNS_PER_MONTH.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measure, measuredTotals, monthlyBill, RUNS_PER_MONTH } from '../../bench/figures/per-run';
import { startVirtualBench, type VirtualBench } from '../../bench/support/virtual-runs';
import { priceControlPlane } from '../../lambdas/core/control-plane-cost';

let bench: VirtualBench;
beforeAll(async () => {
  bench = await startVirtualBench();
});
afterAll(async () => {
  await bench.close();
});

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe("a run's recorded control-plane cost equals the bench's per-run model", () => {
  for (const [label, seconds] of [
    ['1 h', 3600],
    ['24 h', 24 * 3600],
  ] as const) {
    it(`${label}: transitions, invocations, request units and Lambda ms as the bench counts them; the bill per-run.ts's over ${RUNS_PER_MONTH}`, async () => {
      const m = await measure(bench, seconds);
      const own = measuredTotals(m);
      const recorded = (await bench.runtime.ledger.getRunCost(m.run.runId))?.counts;
      expect(recorded).toBeDefined();
      expect(m.windows).toBeGreaterThan(0);
      expect(recorded!.transitions).toBe(own.transitions);
      expect(recorded!.invocations).toBe(own.invocations);
      expect(recorded!.readUnits).toBe(own.readUnits);
      expect(recorded!.writeUnits).toBe(own.writeUnits);
      // Every invocation recorded, and the bench's per-invocation units are what each recorded.
      expect(m.run.calls.every((c) => c.recorded !== undefined)).toBe(true);
      expect(sum(m.run.calls.map((c) => c.ledger.writeUnits))).toBe(recorded!.writeUnits);
      // Lambda ms: each invocation's billed ms (rounded up), within its wall time around the dispatch.
      expect(recorded!.lambdaMs).toBe(own.ms);
      for (const c of m.run.calls) {
        expect(c.recorded!.lambdaMs).toBeGreaterThanOrEqual(1);
        expect(c.recorded!.lambdaMs).toBeLessThanOrEqual(Math.ceil(c.wallMs) + 1);
      }
      expect(recorded!.apiRequests).toBe(0);
      const bill = priceControlPlane(recorded!);
      const perRun = monthlyBill(own);
      for (const service of ['stepFunctions', 'lambda', 'dynamoDb', 'total'] as const) {
        expect(bill[service]).toBeCloseTo(perRun[service] / RUNS_PER_MONTH, 12);
      }
    }, 120_000);
  }
});
