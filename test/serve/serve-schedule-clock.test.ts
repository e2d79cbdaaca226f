/**
 * Schedules under `serve` keep the wall clock (architecture §9: the local scheduler ran on kube-sim's
 * ×10 clock, so a nightly cron fired every 2.4 h of wall time): with the cluster at ×100, a
 * `rate(1 minute)` schedule fires nothing in 2 real seconds, and the API's next fire time is a minute
 * of wall time after it was put.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scheduleDetailSchema } from '../../lambdas/api/resources';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

let serve: Serve;
beforeAll(async () => {
  serve = await startServe({ timeScale: 100, sweepIntervalMs: 0, scheduleIntervalMs: 50 });
});
afterAll(async () => {
  await serve?.close();
});

it('rate(1 minute) on a ×100 cluster: no fire within 2 wall seconds; the next fire time is a wall-clock minute away', async () => {
  const putAt = Date.now();
  const res = await fetch(`${serve.url}/schedules/every-minute`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ expression: 'rate(1 minute)', spec: k6Spec({ name: 'every-minute', parallelism: 1 }) }),
  });
  expect(res.status).toBe(201);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect((await serve.runtime.ledger.listRuns()).runs).toEqual([]);
  const detail = scheduleDetailSchema.parse(await (await fetch(`${serve.url}/schedules/every-minute`)).json());
  const next = Date.parse(detail.nextFireTimes[0]!);
  expect(next).toBeGreaterThan(Date.now());
  expect(next - putAt).toBeLessThanOrEqual(61_000);
}, 30_000);
