/**
 * GET /runs/{id}'s `live` (architecture §3.6): the test's live figures (liveFigures() of the newest samples in
 * the ledger) once its runners started, and its last figures after; nothing, and no read of the
 * samples, for a run that has not started. A real run on the virtual clock through the API handler
 * (serve), with the real ledger (dynalite); its Watch is held at the Lambda boundary while the test
 * records the samples, so the figures are the test's own whatever Watch records itself. Samples that
 * cannot be read leave `live` out of the answer, never fail it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from 'aws-lambda';
import { getRunResource, LIVE_SAMPLES_READ } from '../../lambdas/api/read-runs';
import type { ApiDeps } from '../../lambdas/api/api-deps';
import { runResourceSchema, type RunResource } from '../../lambdas/api/resources';
import { liveFigures, liveSampleSchema, type LiveSample } from '../../lambdas/core/live-sample';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { startServe, type Serve } from '../../local/serve/serve';
import { proxyEvent } from '../support/api-gateway-events';
import { k6Spec, recordAsApi } from '../support/local-runs';
import { holdWatch, liveSampleAt } from '../support/live-samples';

const CONTEXT = { awsRequestId: 'test' } as unknown as Context;
/** Runs whose Watch waits until released (in real time, so the virtual clock stands still). */
const { held, released, invokeStage } = holdWatch();

let serve: Serve;
let clock: VirtualClock;
beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, sweepIntervalMs: 0, invokeStage });
});
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

async function get(runId: string): Promise<RunResource> {
  const res = await serve.handler(proxyEvent({ method: 'GET', path: `/runs/${runId}` }), CONTEXT);
  expect(res.statusCode).toBe(200);
  return runResourceSchema.parse(JSON.parse(res.body));
}

async function until(runId: string, done: (run: RunResource) => boolean): Promise<RunResource> {
  for (;;) {
    const run = await get(runId);
    if (done(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sample = (runStartedAt: number, seconds: number, figures: Partial<LiveSample>): LiveSample => liveSampleAt(runStartedAt, seconds, { vus: 8, ...figures });

/** The ledger as it is, counting the reads of samples. */
function countingSamples(ledger: Ledger): { ledger: Ledger; reads: Array<{ newest?: number }> } {
  const reads: Array<{ newest?: number }> = [];
  const proxy = new Proxy(ledger, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name !== 'listSamples') return typeof value === 'function' ? value.bind(target) : value;
      return (runId: string, options?: { newest?: number }) => {
        reads.push(options ?? {});
        return target.listSamples(runId, options);
      };
    },
  });
  return { ledger: proxy, reads };
}

/** The ledger as it is, but its reads of samples fail with `fault`. */
function failingSamples(ledger: Ledger, fault: () => Promise<never>): Ledger {
  return new Proxy(ledger, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === 'listSamples') return fault;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('GET /runs/{id}: live figures', () => {
  it("none before the runners start; the newest samples' figures while the test runs; the last ones after it", async () => {
    const created = await serve.handler(
      proxyEvent({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(k6Spec({ name: 'api-live' })) }),
      CONTEXT,
    );
    const runId = runResourceSchema.parse(JSON.parse(created.body)).runId;
    expect((await get(runId)).live).toBeUndefined();

    // The runners started and Watch is held: no sample yet, so no figures.
    const running = await until(runId, (r) => held.has(runId) && r.test !== undefined);
    expect(running.live).toBeUndefined();
    const startedAt = Date.parse(running.test!.startedAt);

    const samples = [
      sample(startedAt, 10, { requests: 1_000, failed: 0, vus: 8, p95: [40, 42, 41, 39] }),
      sample(startedAt, 20, { requests: 2_600, failed: 4, vus: 8, p95: [45, 52, 44, 40] }),
      sample(startedAt, 30, { requests: 4_600, failed: 6, vus: 8, p95: [47, 58, 44, 41] }),
    ];
    for (const s of samples) await serve.runtime.ledger.recordSample(runId, s);
    const live = (await get(runId)).live;
    expect(live).toEqual(liveFigures(samples));
    // 2,000 requests (2 failed) in the 10 s between the two newest; runner 1's p95 is the worst.
    expect(live).toMatchObject({ elapsedSeconds: 30, requests: 4_600, requestsPerSecond: 200, errorRate: 0.001, vus: 8, worstP95: { runner: 1, ms: 58 } });
    expect(live!.at).toBe(new Date(startedAt + 30_000).toISOString());

    // A read where one runner did not answer: its figures, said partial; the rate stays the complete samples'.
    await serve.runtime.ledger.recordSample(runId, sample(startedAt, 40, { answered: 3, requests: 5_000, vus: 6, p95: [49, null, 46, 42] }));
    expect((await get(runId)).live).toMatchObject({
      answered: 3,
      runners: 4,
      requests: 5_000,
      requestsPerSecond: 200,
      vus: 6,
      worstP95: { runner: 0, ms: 49 },
    });

    released.add(runId);
    const finished = await until(runId, (r) => r.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed'));
    expect(finished.outcome).toBeDefined();
    // After the test: the last figures (Watch and Collect may have recorded samples of their own since).
    expect(finished.live).toBeDefined();
    expect(finished.live!.elapsedSeconds).toBeGreaterThanOrEqual(40);
  }, 120_000);

  it('reads the samples once per GET, the newest few, and only for a run that started', async () => {
    const created = await serve.handler(
      proxyEvent({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(k6Spec({ name: 'api-live-reads' })) }),
      CONTEXT,
    );
    const runId = runResourceSchema.parse(JSON.parse(created.body)).runId;
    const { ledger, reads } = countingSamples(serve.runtime.ledger);
    const deps = { ledger, config: serve.runtime.deps.config, now: () => clock.now(), log: () => undefined } as unknown as ApiDeps;

    // Recorded, never started (no execution): its answer reads no samples.
    const pending = await recordAsApi(serve.runtime, k6Spec({ name: 'api-live-pending' }));
    expect((await getRunResource(deps, pending)).live).toBeUndefined();
    expect(reads).toEqual([]);
    await until(runId, (r) => held.has(runId) && r.test !== undefined);
    await getRunResource(deps, runId);
    expect(reads).toEqual([{ newest: LIVE_SAMPLES_READ }]);
    released.add(runId);
    await until(runId, (r) => r.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed'));
  }, 120_000);

  it('samples that cannot be read (a throttled Query, an item that is not a sample): the run without `live`, the error named in the log, never a 500', async () => {
    const created = await serve.handler(
      proxyEvent({
        method: 'POST',
        path: '/runs',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(k6Spec({ name: 'api-live-unreadable' })),
      }),
      CONTEXT,
    );
    const runId = runResourceSchema.parse(JSON.parse(created.body)).runId;
    const startedAt = Date.parse((await until(runId, (r) => held.has(runId) && r.test !== undefined)).test!.startedAt);
    await serve.runtime.ledger.recordSample(runId, sample(startedAt, 10, { requests: 1_000 }));
    expect((await get(runId)).live).toBeDefined();

    const faults: Record<string, () => Promise<never>> = {
      ProvisionedThroughputExceededException: () =>
        Promise.reject(
          Object.assign(new Error('table loadplane-ledger at http://127.0.0.1:1 throttled; secret token s3cr3t'), {
            name: 'ProvisionedThroughputExceededException',
          }),
        ),
      // What the ledger's read of an item that fails liveSampleSchema throws.
      ZodError: async () => liveSampleSchema.parse({ at: startedAt, elapsedMs: -1, source: 'guess' }) as never,
    };
    for (const [name, fault] of Object.entries(faults)) {
      const logged: Array<Record<string, unknown>> = [];
      const deps = {
        ledger: failingSamples(serve.runtime.ledger, fault),
        config: serve.runtime.deps.config,
        now: () => clock.now(),
        log: (event: Record<string, unknown>) => logged.push(event),
      } as unknown as ApiDeps;
      const run = runResourceSchema.parse(await getRunResource(deps, runId));
      expect(run.live, name).toBeUndefined();
      expect(run.test?.startedAt).toBe(new Date(startedAt).toISOString());
      expect(run.stages.map((s) => s.stage)).toContain('Start');
      expect(logged).toEqual([expect.objectContaining({ runId, error: name })]);
      expect(JSON.stringify(logged)).not.toMatch(/http:|s3cr3t|loadplane-ledger/);
    }

    // Any other failure of the run's own read is still the request's failure (only the figures are optional).
    const brokenRun = new Proxy(serve.runtime.ledger, {
      get: (target, name, receiver) =>
        name === 'getRun'
          ? () => Promise.reject(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }))
          : Reflect.get(target, name, receiver),
    });
    await expect(
      getRunResource({ ledger: brokenRun, config: serve.runtime.deps.config, now: () => clock.now(), log: () => undefined } as unknown as ApiDeps, runId),
    ).rejects.toThrow('throttled');

    released.add(runId);
    await until(runId, (r) => r.stages.some((s) => s.stage === 'Cleanup' && s.state === 'completed'));
  }, 120_000);
});
