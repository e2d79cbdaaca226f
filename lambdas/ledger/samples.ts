/**
 * Live samples (lambdas/core/live-sample.ts) in a partition of their own, `samples#<runId>`, one item
 * per sample keyed by the test's elapsed ms (zero-padded, so they sort in time): getRun never reads
 * them (every poll reads the run's partition), an item stays a few hundred bytes whatever the run's
 * length, and a day-long run's ~1,500 samples are one or two Query pages. A plain put: Watch polls
 * are retried and duplicated; a second sample at another instant is a point more, one at the same
 * instant replaces the first (the newest read wins, complete or not).
 */
import { liveSampleSchema, type LiveSample } from '../core/live-sample';
import { expiresAt } from './keys';
import { putItem, queryAll, queryPage, type LedgerContext, type RawItem } from './store';

export const samplesPk = (runId: string): string => `samples#${runId}`;
/** 12 digits of ms: more than 31 years of test. */
export const sampleSk = (elapsedMs: number): string => `s#${String(Math.max(0, Math.round(elapsedMs))).padStart(12, '0')}`;

/** Short attribute names: the item is stored once per poll for the whole test. */
function toItem(runId: string, sample: LiveSample, nowMs: number): RawItem & { pk: string; sk: string } {
  return {
    pk: samplesPk(runId),
    sk: sampleSk(sample.elapsedMs),
    at: sample.at,
    el: sample.elapsedMs,
    src: sample.source,
    n: sample.answered,
    of: sample.runners,
    req: sample.requests,
    fail: sample.failed,
    it: sample.iterations,
    vus: sample.vus,
    rx: sample.dataReceivedBytes,
    tx: sample.dataSentBytes,
    p95: sample.p95,
    expiresAt: expiresAt(nowMs),
  };
}

function fromItem(item: RawItem): LiveSample {
  return liveSampleSchema.parse({
    at: item.at,
    elapsedMs: item.el,
    source: item.src,
    answered: item.n,
    runners: item.of,
    requests: item.req,
    failed: item.fail,
    iterations: item.it,
    vus: item.vus,
    dataReceivedBytes: item.rx,
    dataSentBytes: item.tx,
    p95: item.p95,
  });
}

export async function recordSample(ctx: LedgerContext, runId: string, sample: LiveSample): Promise<void> {
  await putItem(ctx, `recordSample ${runId}`, toItem(runId, liveSampleSchema.parse(sample), ctx.now()));
}

/** The run's samples, oldest first; with `newest`, only the newest that many (still oldest first). */
export async function listSamples(ctx: LedgerContext, runId: string, options: { newest?: number } = {}): Promise<LiveSample[]> {
  const operation = `listSamples ${runId}`;
  const key = { KeyConditionExpression: '#pk = :pk', ExpressionAttributeValues: { ':pk': samplesPk(runId) } };
  if (options.newest !== undefined) {
    const page = await queryPage(ctx, operation, { ...key, ScanIndexForward: false, Limit: options.newest });
    return page.items.map(fromItem).reverse();
  }
  return (await queryAll(ctx, operation, key)).map(fromItem);
}
