/**
 * Runs with their figures (ledger/run-figures.ts) on both ledger backends: the run items are read
 * with a projection (the figures, the spec's baseline, nothing else of the spec), in the order asked,
 * a run not in the ledger left out; a name's history is newest first, bounded by `limit`, and a
 * schedule's is only the runs it started.
 */
import { beforeAll, expect, it } from 'vitest';
import { Outcome, TriggerKind } from '../../lambdas/core/status';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { storedSpec } from '../support/stored-spec';
import { apiTrigger, ledgerOn, newRunId, testClock } from './fixtures';

const SUMMARY = {
  requests: 100,
  failedRequests: 1,
  errorRate: 0.01,
  durationMs: 60_000,
  latency: { count: 100, mean: 20, p90: { lo: 30, hi: 31 }, p95: { lo: 40, hi: 42 }, p99: { lo: 50, hi: 55 } },
};

describeOnLedgerBackends((table) => {
  const ids: string[] = [];
  let ledger: Ledger;

  beforeAll(async () => {
    // Five runs of `nightly`, a minute apart: the 2nd and 4th started by schedule `nightly-run`; the 1st decided with figures.
    for (let i = 0; i < 5; i++) {
      const writer = ledgerOn(table(), testClock(`2026-03-15T12:0${i}:00.000Z`));
      const runId = newRunId();
      const trigger = i % 2 === 1 ? { kind: TriggerKind.schedule, schedule: 'nightly-run', scheduledTime: `2026-03-15T12:0${i}:00Z` } : apiTrigger;
      const spec = storedSpec({ name: 'nightly', engine: 'k6', script: 'x'.repeat(2000), baseline: { run: 'last-succeeded', limits: { p95: '+10%' } } });
      await writer.createRun({ runId, spec, specHash: 'h', trigger });
      if (i === 0) await writer.decideOutcome(runId, Outcome.SUCCEEDED, 'ok', { summary: SUMMARY });
      ids.push(runId);
    }
    ledger = ledgerOn(table(), testClock('2026-03-15T13:00:00.000Z'));
  });

  it('reads each run item for its figures and its spec baseline only, in the order asked; a run not in the ledger is left out', async () => {
    const [first, second] = [ids[0]!, ids[1]!];
    const read = await ledger.readRunFigures([second, 'not-in-the-ledger', first]);
    expect(read.map((r) => r.runId)).toEqual([second, first]);
    expect(read[1]).toEqual({
      runId: first,
      runName: 'nightly',
      status: Outcome.SUCCEEDED,
      outcome: Outcome.SUCCEEDED,
      outcomeReason: 'ok',
      trigger: apiTrigger,
      createdAt: '2026-03-15T12:00:00.000Z',
      decidedAt: '2026-03-15T12:00:00.000Z',
      summary: SUMMARY,
      // Of the spec, only its baseline: not the script or anything else.
      spec: { baseline: { run: 'last-succeeded', limits: { p95: '+10%' } } },
    });
    expect(read[0]).not.toHaveProperty('summary');
  });

  it("a name's newest runs, newest first, at most `limit`; a schedule's only the runs it started", async () => {
    expect((await ledger.runHistory({ name: 'nightly' })).map((r) => r.runId)).toEqual([...ids].reverse());
    expect((await ledger.runHistory({ name: 'nightly', limit: 2 })).map((r) => r.runId)).toEqual([ids[4], ids[3]]);
    expect((await ledger.runHistory({ name: 'nightly', schedule: 'nightly-run' })).map((r) => r.runId)).toEqual([ids[3], ids[1]]);
    expect((await ledger.runHistory({ name: 'nightly', schedule: 'nightly-run', limit: 1 })).map((r) => r.runId)).toEqual([ids[3]]);
    expect(await ledger.runHistory({ name: 'nightly', schedule: 'another' })).toEqual([]);
    expect(await ledger.runHistory({ name: 'never-ran' })).toEqual([]);
  });
});
