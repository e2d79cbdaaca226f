/**
 * Whole runs of many runners (architecture §4, core/config.ts MAX_PARALLELISM_LIMIT): the real ASL in
 * the local engine, the stages, dynalite, kube-sim over HTTP, the virtual clock. Each run succeeds,
 * and every item the ledger wrote for it, read back raw from the table after the run and measured by
 * DynamoDB's size rules, is below the 400 KB item limit; what a Watch poll's getRun reads stays small.
 *
 * 300 k6 runners here (with the full percentile grid) and 100 Gatling runners: about 11 s and 5 s real
 * on two cores, most of it kube-sim's. A 1,000-runner run takes ~50 s real, so it is the bench's `scale` figure's
 * largest row (bench/figures/scale.ts) and the ledger's 1,000-runner records are checked by
 * test/ledger/run-scale.test.ts. SCALE_RUNNERS=1000 runs this file at 1,000.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../lambdas/core/config';
import { Outcome } from '../../lambdas/core/status';
import { ITEM_LIMIT_BYTES } from '../../lambdas/ledger/item-size';
import { collectedResult } from '../../lambdas/stages/collect';
import { largestItem, runItems, sizeTable, watchPollReadBytes } from '../support/ledger-items';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { VirtualClock } from '../../local/clock/virtual-clock';

const RUNNERS = Number(process.env.SCALE_RUNNERS ?? 300);
/** Gatling's runners take kube-sim longer (a compile each, a log read at Start and Collect): a third as many. */
const GATLING_RUNNERS = Number(process.env.SCALE_GATLING_RUNNERS ?? Math.ceil(RUNNERS / 3));

let h: Harness;
beforeAll(async () => {
  h = await startHarness(new VirtualClock(), { config: { ...DEFAULT_CONFIG, maxParallelism: Math.max(RUNNERS, GATLING_RUNNERS) } });
});
afterAll(() => h.close());

const timeouts = { prepare: '10m', ready: '30m', run: '10m', total: '2h' };
const SPECS = {
  k6: k6Spec({
    name: 'scale-k6',
    parallelism: RUNNERS,
    script: { inline: `export const options = { vus: ${RUNNERS}, duration: '60s' };\nexport default function () {}\n` },
    timeouts,
  }),
  gatling: gatlingSpec({ name: 'scale-gatling', parallelism: GATLING_RUNNERS, timeouts }),
};

describe('a run of many runners', () => {
  it.each([
    ['k6', RUNNERS, 52],
    ['gatling', GATLING_RUNNERS, 4],
  ] as const)(
    '%s, %i runners: succeeds, every ledger item below 400 KB, and a Watch poll reads a bounded run',
    async (engine, runners, levels) => {
      const began = Date.now();
      const requestsBefore = h.kubeSim.requestLog.length;
      const { runId, execution, view } = await h.run(SPECS[engine]);
      const realMs = Date.now() - began;
      expect(execution.status).toBe('SUCCEEDED');
      expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
      const result = collectedResult(view)!;
      expect(result.runners).toHaveLength(runners);
      expect(result.runners.every((r) => r.latency.quantiles.length === levels)).toBe(true);

      const items = await runItems(h.runtime.store.client, h.runtime.store.tableName, runId);
      const largest = largestItem(items);
      const perPoll = watchPollReadBytes(items);
      console.log(
        `${engine}, ${runners} runners: ${realMs} ms real, ${h.kubeSim.requestLog.length - requestsBefore} Kubernetes calls; ` +
          `largest item ${largest.sk} ${largest.bytes} B; a Watch poll's getRun reads ${perPoll} B\n${sizeTable(items)}`,
      );
      for (const item of items) expect(item.bytes, item.sk).toBeLessThan(ITEM_LIMIT_BYTES);
      // About 70 B a runner (AwaitReady's pods and Start's record, gzipped once over 16 KiB) plus a few KB.
      expect(perPoll).toBeLessThan(8 * 1024 + 100 * runners);
    },
    600_000,
  );
});
