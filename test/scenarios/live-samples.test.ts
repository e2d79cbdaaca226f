/**
 * Live metrics (architecture §3.6) end to end: whole runs (the real ASL in the local engine, the stages,
 * dynalite, kube-sim over HTTP, the virtual clock) leave live samples in the ledger — one per Watch
 * poll while the test runs — and Collect's `final` one. Live counters never decrease and never
 * exceed the final ones; the final sample's sums are Collect's totals and its p95s the runners' own.
 * And a 24-hour test: how many samples, how big, and Watch's output no bigger than a short run's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { LiveSample } from '../../lambdas/core/live-sample';
import { StepPhase } from '../../lambdas/core/step';
import { Outcome, Stage } from '../../lambdas/core/status';
import { samplesPk } from '../../lambdas/ledger/samples';
import { collect, collectedResult } from '../../lambdas/stages/collect';
import { liveSample } from '../../lambdas/stages/live-metrics';
import { watch } from '../../lambdas/stages/watch';
import { gatlingSpec, k6Spec, startHarness, type Harness } from '../support/local-runs';
import { driveTo, viewOf } from '../stages/stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** DynamoDB's limit on one item. */
const ITEM_LIMIT_BYTES = 400 * 1024;

const COUNTERS = ['requests', 'failed', 'iterations', 'dataReceivedBytes', 'dataSentBytes'] as const;

/** Checks every property the issue asks of a finished run's samples; returns the live ones. */
async function checkSamples(runId: string): Promise<{ live: LiveSample[]; final: LiveSample }> {
  const view = await viewOf(h, runId);
  const result = collectedResult(view)!;
  expect(result.runners.length).toBe(result.expectedRunners);
  const samples = await h.runtime.ledger.listSamples(runId);
  const finals = samples.filter((s) => s.source === 'final');
  expect(finals).toHaveLength(1);
  const final = finals[0]!;
  // The final sample is Collect's totals and each runner's own p95, at the result's duration or just
  // after the newest live sample when that came later (a Gatling runner's load begins after its compile).
  const newestLive = Math.max(-1, ...samples.filter((s) => s.source === 'live').map((s) => s.elapsedMs));
  expect(final).toMatchObject({
    elapsedMs: Math.max(result.durationMs, newestLive + 1),
    answered: result.runners.length,
    runners: result.expectedRunners,
    requests: result.requests,
    failed: result.failedRequests,
    iterations: result.iterations,
    vus: 0,
    dataReceivedBytes: result.dataReceivedBytes,
    dataSentBytes: result.dataSentBytes,
  });
  expect(final.p95).toEqual(result.runners.map((r) => r.latency.p95));

  const live = samples.filter((s) => s.source === 'live');
  expect(live.length).toBeGreaterThan(0);
  const complete = live.filter((s) => s.answered === s.runners);
  expect(complete.some((s) => s.requests > 0)).toBe(true);
  for (const s of live) for (const c of COUNTERS) expect(s[c], `${c} at ${s.elapsedMs} ms`).toBeLessThanOrEqual(final[c]);
  for (let i = 1; i < complete.length; i++) {
    for (const c of COUNTERS) expect(complete[i]![c], `${c} at ${complete[i]!.elapsedMs} ms`).toBeGreaterThanOrEqual(complete[i - 1]![c]);
  }
  return { live, final };
}

describe('live samples of whole local runs', () => {
  it('k6: one sample per running poll; counters grow to, and never past, the final sample that is Collect’s totals', async () => {
    const { runId, view } = await h.run(k6Spec({ name: 'live-k6', parallelism: 3 }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const { live, final } = await checkSamples(runId);
    expect(final.requests).toBeGreaterThan(0);
    // k6 reports a p95 per runner live; the last live sample is the load at its end.
    const last = live.at(-1)!;
    expect(last.p95.every((p) => p !== null && p > 0)).toBe(true);
    expect(last.vus).toBe(40);
  }, 60_000);

  it('Gatling: live counts from the runners’ periodic console blocks (no p95 live), final from their results', async () => {
    const { runId, view } = await h.run(gatlingSpec({ name: 'live-gatling', parallelism: 3 }));
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    const { live, final } = await checkSamples(runId);
    // No p95 from a running Gatling runner; one that finished first (its compile was shorter) counts
    // with its result, p95 included (recordLiveSample).
    expect(live.every((s) => s.p95.every((p, i) => p === null || p === final.p95[i]))).toBe(true);
    expect(live.some((s) => s.p95.every((p) => p === null))).toBe(true);
    expect(live.some((s) => s.answered === 3 && s.requests > 0 && s.vus === 3)).toBe(true);
    expect(final.p95.every((p) => p !== null && p > 0)).toBe(true);
  }, 60_000);
});

/** DynamoDB's item size (its documented rules): names + values; numbers ~ 1 + digits/2; lists 3 + 1 per element. */
function itemBytes(item: Record<string, unknown>): number {
  const value = (v: unknown): number => {
    if (v === null || typeof v === 'boolean') return 1;
    if (typeof v === 'string') return Buffer.byteLength(v);
    if (typeof v === 'number')
      return Math.min(
        21,
        1 +
          Math.ceil(
            String(Math.abs(v))
              .replace(/[.e+-]/g, '')
              .replace(/^0+/, '').length / 2,
          ),
      );
    if (Array.isArray(v)) return 3 + v.reduce((n: number, e) => n + 1 + value(e), 0);
    return 3 + Object.entries(v as object).reduce((n, [k, e]) => n + 1 + Buffer.byteLength(k) + value(e), 0);
  };
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + value(v), 0);
}

async function storedItems(runId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await h.runtime.store.client.send(
      new QueryCommand({
        TableName: h.runtime.store.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': samplesPk(runId) },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

describe('a 24-hour test', () => {
  it('about one sample a minute, each a few hundred bytes; Watch’s output does not grow with the run', async () => {
    const script = `export const options = { vus: 200, duration: '23h50m' };\nexport default function () {}\n`;
    const spec = k6Spec({ name: 'live-24h', parallelism: 4, script: { inline: script }, timeouts: { prepare: '2m', ready: '2m', run: '24h', total: '25h' } });
    const { runId } = await driveTo(h, spec, Stage.Start);
    // Watch polled as the state machines would (Waits, and the cruise windows' polls), to its end.
    let polls = 0;
    for (;;) {
      polls++;
      const step = await watch(h.runtime.deps, runId);
      if (step.phase !== StepPhase.waiting && step.phase !== StepPhase.cruising) break;
      await h.clock.sleep(step.nextPollSeconds * 1000);
    }
    await collect(h.runtime.deps, runId);
    const view = await viewOf(h, runId);
    expect(view.stages.Watch?.output).toEqual({ phase: StepPhase.done, nextPollSeconds: 0 });

    const { live } = await checkSamples(runId);
    expect(live).toHaveLength(polls - 1);
    const items = await storedItems(runId);
    const sizes = items.map(itemBytes);
    const largest = Math.max(...sizes);
    const total = sizes.reduce((a, b) => a + b, 0);

    // The widest sample a deployment allows (maxParallelism 100 runners, every p95 at full precision).
    const reading = {
      requests: 123_456_789,
      failed: 1_234_567,
      iterations: 123_456_789,
      vus: 1_000,
      dataReceivedBytes: 987_654_321_012,
      dataSentBytes: 12_345_678_901,
      p95: 123.456789012345,
    };
    const wide = liveSample(
      Date.now(),
      86_399_999,
      Array.from({ length: h.runtime.deps.config.maxParallelism }, () => reading),
    );
    await h.runtime.ledger.recordSample('live-24h-wide', wide);
    const [wideItem] = await storedItems('live-24h-wide');
    const wideBytes = itemBytes(wideItem!);

    console.log(
      `live samples, 24 h test (4 runners): ${items.length} items (${polls} Watch polls), largest ${largest} B, total ${(total / 1024).toFixed(1)} KiB; ` +
        `a 100-runner sample ${wideBytes} B; Watch output ${JSON.stringify(view.stages.Watch?.output).length} B`,
    );
    expect(items).toHaveLength(live.length + 1);
    expect(items.length).toBeGreaterThan(1_400);
    expect(items.length).toBeLessThan(1_600);
    expect(largest).toBeLessThan(ITEM_LIMIT_BYTES / 100);
    expect(wideBytes).toBeLessThan(ITEM_LIMIT_BYTES / 100);
  }, 600_000);
});
