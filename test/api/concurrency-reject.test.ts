/**
 * `whenBusy: reject` (architecture §3.1 Acquire): POST /runs takes the run's slot in its concurrency group before it
 * writes the run, so a busy group is a 409 naming the holder, and nothing is created — through
 * `serve` (HTTP, the real API handler, the ledger, the local engine) on a virtual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema, runResourceSchema } from '../../lambdas/api/resources';
import { Outcome } from '../../lambdas/core/status';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

let serve: Serve;
let clock: VirtualClock;

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, sweepIntervalMs: 0, scheduleIntervalMs: 0, random: mulberry32(21) });
});
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

const spec = k6Spec({ name: 'one-at-a-time', parallelism: 1, concurrency: { group: 'prod', limit: 1, whenBusy: 'reject' } } as Parameters<typeof k6Spec>[0]);

async function post(key: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${serve.url}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(spec),
  });
  return { status: res.status, body: await res.json() };
}

async function ended(runId: string): Promise<string | undefined> {
  for (;;) {
    const view = await serve.runtime.ledger.getRun(runId);
    if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') return view.run.outcome;
    await clock.waitFor(new Promise((resolve) => setTimeout(resolve, 20)));
  }
}

describe('POST /runs with whenBusy: reject', () => {
  it('answers 409 naming the holder while the group is busy, creates nothing, and takes the slot once it is free', async () => {
    const first = await post('first');
    expect(first.status).toBe(201);
    const holder = runResourceSchema.parse(first.body).runId;

    const second = await post('second');
    expect(second.status).toBe(409);
    expect(errorBodySchema.parse(second.body).errors).toEqual([
      {
        path: 'concurrency.group',
        message: `group prod is busy (limit 1): held by run ${holder}; whenBusy: reject — try again when it is free, or use whenBusy: queue`,
      },
    ]);
    expect((await serve.runtime.ledger.listRuns({ name: 'one-at-a-time' })).runs.map((r) => r.runId)).toEqual([holder]);
    // The holder retrying its own request is the same run, not a conflict with itself.
    expect((await post('first')).status).toBe(200);

    expect(await ended(holder)).toBe(Outcome.SUCCEEDED);
    // A retry after the run ended takes no slot it would never free.
    expect((await post('first')).status).toBe(200);
    expect((await serve.runtime.ledger.getGroup('prod'))?.holders).toEqual({});
    const third = await post('second');
    expect(third.status).toBe(201);
    expect(await ended(runResourceSchema.parse(third.body).runId)).toBe(Outcome.SUCCEEDED);
    expect((await serve.runtime.ledger.getGroup('prod'))?.holders).toEqual({});
  }, 120_000);
});
