/**
 * The largest run a deployment may allow (1,000 runners, core/config.ts MAX_PARALLELISM_LIMIT) in the
 * ledger, on dynalite and DynamoDB Local: Collect's record with every runner's summary — k6 with its
 * full percentile grid (52 levels), parsed from a real k6 export; Gatling from its real console
 * summary — is recorded, read back exactly (and with it the run's percentile brackets), and every item
 * written for it is below DynamoDB's 400 KB (measured by DynamoDB's size rules on the raw items).
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { aggregateResults, type RunResult } from '../../lambdas/core/aggregate';
import { Stage } from '../../lambdas/core/status';
import { fidelityOf } from '../../lambdas/core/fidelity';
import type { RunnerSummary } from '../../lambdas/core/summary';
import { runnerSummaryFromGatlingLog } from '../../lambdas/engines/gatling/console-summary';
import { runnerSummaryFromK6Export } from '../../lambdas/engines/k6/summary-export';
import { ITEM_LIMIT_BYTES, itemBytes } from '../../lambdas/ledger/item-size';
import { collectedResult, type CollectRecord } from '../../lambdas/stages/collect';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { partitionItems } from '../support/ledger-items';
import { givenRun, ledgerOn } from './fixtures';

const RUNNERS = 1_000;
const LEASE_MS = 60_000;

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const K6_EXPORT = JSON.parse(fixture('real-k6/cases/exit-threshold-failed/summary-export.json')) as unknown;
const GATLING_LOG = fixture('gatling-console/3.14-passed.log');

/**
 * Runner `i`'s summary: the real one with every latency figure moved by a few µs per runner, as
 * k6 prints them (ms with up to 8 decimals), so no two runners' grids are alike.
 */
function k6Runner(i: number): RunnerSummary {
  const s = runnerSummaryFromK6Export(K6_EXPORT, { runner: i, exitCode: 0, durationMs: 60_000, simulated: false });
  const shift = (v: number) => Math.round((v + i * 0.00137) * 1e8) / 1e8;
  const l = s.latency;
  return {
    ...s,
    latency: {
      ...l,
      sum: shift(l.sum),
      min: shift(l.min),
      max: shift(l.max),
      p90: shift(l.p90),
      p95: shift(l.p95),
      p99: shift(l.p99),
      quantiles: l.quantiles.map((q) => ({ q: q.q, value: shift(q.value) })),
    },
  };
}

/** Gatling's figures are whole ms: each runner's moved by its index in ms. */
function gatlingRunner(i: number): RunnerSummary {
  const s = runnerSummaryFromGatlingLog(GATLING_LOG, { runner: i, exitCode: 0, durationMs: 120_000, simulated: false })!;
  const shift = (v: number) => v + i;
  const l = s.latency;
  return {
    ...s,
    latency: {
      ...l,
      min: shift(l.min),
      max: shift(l.max),
      p90: shift(l.p90),
      p95: shift(l.p95),
      p99: shift(l.p99),
      quantiles: l.quantiles.map((q) => ({ q: q.q, value: shift(q.value) })),
    },
  };
}

/** With the load fidelity of every runner, each with its CPU read (the largest that record gets). */
const collectRecord = (result: RunResult): CollectRecord =>
  ({
    phase: 'done',
    nextPollSeconds: 0,
    outcome: 'SUCCEEDED',
    reason: 'every runner passed',
    result,
    fidelity: fidelityOf({
      result,
      runners: result.runners.map((r) => ({ index: r.runner, replaced: 0 })),
      cpu: new Map(
        result.runners.map((r) => [
          r.runner,
          { periods: 6000, throttledPeriods: 12, throttledShare: 0.002, throttledMs: 480.5, usageMs: 123456.7, starved: false },
        ]),
      ),
      plannedVUs: RUNNERS * 10,
      startSkewMs: 1200,
    }),
  }) as CollectRecord;

describeOnLedgerBackends((table) => {
  for (const [engine, runner, levels] of [
    ['k6', k6Runner, 52],
    ['Gatling', gatlingRunner, 4],
  ] as const) {
    it(`a ${RUNNERS}-runner ${engine} Collect record round-trips exactly, and every item written is below 400 KB`, async () => {
      const ledger = ledgerOn(table());
      const runId = await givenRun(ledger);
      const result = aggregateResults(
        RUNNERS,
        Array.from({ length: RUNNERS }, (_, i) => runner(i)),
      );
      expect(result.runners.every((r) => r.latency.quantiles.length === levels)).toBe(true);
      const record = collectRecord(result);
      const inline = itemBytes({ output: record });
      // Inline, the record alone would pass the item limit (k6's more than three times over).
      expect(inline).toBeGreaterThan((engine === 'k6' ? 3 : 1) * ITEM_LIMIT_BYTES);

      await ledger.beginStage(runId, Stage.Collect, 'collect', LEASE_MS);
      await ledger.completeStage(runId, Stage.Collect, 'collect', record);
      const view = (await ledger.getRun(runId))!;
      expect(view.stages.Collect?.output).toEqual(record);
      expect(collectedResult(view)).toEqual(result);
      expect(collectedResult(view)?.latency).toEqual(result.latency);
      expect(await ledger.beginStage(runId, Stage.Collect, 'other', LEASE_MS)).toEqual({ kind: 'completed', output: record });

      const { items, pages } = await partitionItems(table().client, table().tableName, `run#${runId}`);
      const sizes = items.map((i) => `${i.sk.replace(/#output#.{64}/, '#output#…')} ${i.bytes} B`);
      console.log(`${engine}, ${RUNNERS} runners: Collect record ${inline} B inline; stored as ${sizes.join(', ')} (${pages} Query pages)`);
      for (const item of items) expect(item.bytes, item.sk).toBeLessThan(ITEM_LIMIT_BYTES);
    }, 120_000);
  }
});
