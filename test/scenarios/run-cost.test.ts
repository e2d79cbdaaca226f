/**
 * A run's cost through `serve` (HTTP, the real API handler, the ledger, the local engine, kube-sim)
 * on a virtual clock, in a deployment that caps a run's estimated cost (maxRunCostUsd $1) at the
 * default EC2 prices: a run whose runners' estimate is over the cap is a 400 at POST /runs naming
 * the estimate and the cap, and nothing is written; started any other way (a console start, a
 * schedule) it is refused at Admit with the same reason; a run within the cap runs.
 *
 * Expected figures worked by hand: the EC2 default is an m7g.large ($0.0816 an hour, 2 vCPU, 8 GiB)
 * split in Fargate's vCPU : GiB proportion (0.04048 : 0.004445), $0.028349 per vCPU-hour and
 * $0.0031129 per GiB-hour; 4 runners × (1 vCPU + 2 GiB) × 24 h = $3.3191.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../lambdas/api/resources';
import { DEFAULT_CONFIG, type DeploymentConfig } from '../../lambdas/core/config';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

const config: DeploymentConfig = { ...DEFAULT_CONFIG, maxRunCostUsd: 1 };
let serve: Serve;
let clock: VirtualClock;

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, config, sweepIntervalMs: 0, scheduleIntervalMs: 0, random: mulberry32(31) });
});
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

/** 4 runners of 1 vCPU and 2 GiB, no timeouts.run: the test may run the 24 h total leaves after prepare and ready. */
const overCap = k6Spec({
  name: 'too-dear',
  parallelism: 4,
  runner: { resources: { requests: { cpu: '1', memory: '2Gi' } } },
  timeouts: { prepare: '10m', ready: '10m', total: '24h20m' },
} as Parameters<typeof k6Spec>[0]);

const REFUSED =
  "the runners' estimated cost $3.32 is over the deployment's maxRunCostUsd $1.00: 4 runners × 1 vCPU and 2 GiB requested × 24h " +
  '(what timeouts.total leaves after prepare and ready) at $0.02835 per vCPU-hour and $0.003113 per GiB-hour; ' +
  'lower parallelism or the requests, or bound the test with timeouts.run';

async function post(spec: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${serve.url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  return { status: res.status, body: await res.json() };
}

describe('maxRunCostUsd', () => {
  it('POST /runs over the cap: 400 naming the estimate and the cap, nothing written', async () => {
    const answer = await post(overCap);
    expect(answer.status).toBe(400);
    expect(errorBodySchema.parse(answer.body).errors).toEqual([{ path: '(root)', message: REFUSED }]);
    expect((await serve.runtime.ledger.listRuns({ name: 'too-dear' })).runs).toEqual([]);
  });

  it('a console start over the cap is refused at Admit with the same reason (SpecInvalid), no run, nothing on the cluster', async () => {
    const ended = await serve.runtime.startExecution({ name: 'console-too-dear', input: { spec: overCap, source: 'console' } }).result;
    expect(ended.status).toBe('FAILED');
    expect(ended.error).toBe('SpecInvalid');
    expect(ended.cause).toContain(REFUSED);
    expect((await serve.runtime.ledger.listRuns({ name: 'too-dear' })).runs).toEqual([]);
    expect(serve.runtime.kubeSim!.list('Job', 'loadplane')).toEqual([]);
  });

  it('the same runners bounded by timeouts.run 5m ($0.0115) are within the cap: 201', async () => {
    const answer = await post({ ...overCap, name: 'bounded', timeouts: { prepare: '10m', ready: '10m', run: '5m', total: '1h' } });
    expect(answer.status).toBe(201);
  });
});
