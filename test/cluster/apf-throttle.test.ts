/**
 * The cluster client against API Priority and Fairness's 429 (kube-sim's throttle,
 * local/kube-sim/api-throttle.ts): a plain-text body, not a Status, with Retry-After. The client
 * reads the header, waits it out on the simulated clock and retries the call where it was refused
 * (call-retry.ts); a level that stays full past the attempts surfaces as ClusterThrottled, which the
 * state machine retries.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClusterClient, type ClusterClient } from '../../lambdas/cluster/cluster-client';
import { ClusterThrottled, isRetryable } from '../../lambdas/core/errors';
import type { KubeSim } from '../../local/kube-sim/index';
import { closeKubeSim, http, NS, startVirtualKubeSim } from '../kube-sim/helpers';

let sim: KubeSim;
let client: ClusterClient;
/** Every wait the client asked for, in ms; each is slept on kube-sim's clock, so seats come free meanwhile. */
let slept: number[] = [];

beforeAll(async () => {
  sim = await startVirtualKubeSim();
  client = createClusterClient(sim.kubeConfig(), {
    random: () => 0.5,
    sleep: (ms) => {
      slept.push(ms);
      return sim.clock.sleep(ms);
    },
  });
});
afterAll(() => closeKubeSim(sim));
beforeEach(() => {
  sim.faults.clear();
  slept = [];
});

const LIST = `/apis/batch/v1/namespaces/${NS}/jobs`;

describe('a call refused by APF', () => {
  it('waits out Retry-After and retries until a seat is free: the only seat busy for 1.5 s costs two 429s and two 1 s waits', async () => {
    sim.faults.setThrottle({ seats: 1, handSize: 1, queueLengthLimit: 0, serviceMs: { list: 1500 } });
    expect((await http(sim, 'GET', LIST)).status).toBe(200);
    const before = sim.requestLog.length;
    expect(await client.listByRun('Job', NS, 'whatever')).toEqual([]);
    expect(sim.requestLog.slice(before).map((r) => [r.status, r.throttled])).toEqual([
      [429, 'queue-full'],
      [429, 'queue-full'],
      [200, undefined],
    ]);
    expect(slept).toEqual([1000, 1000]);
  });

  it('a level full past the attempts surfaces as ClusterThrottled (retryable, HTTP 429) after 5 requests', async () => {
    sim.faults.setThrottle({ seats: 1, handSize: 1, queueLengthLimit: 0, serviceMs: { list: 600_000 } });
    await http(sim, 'GET', LIST);
    const before = sim.requestLog.length;
    const err = await client.listByRun('Job', NS, 'whatever').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterThrottled);
    expect(isRetryable(err)).toBe(true);
    expect((err as ClusterThrottled).message).toBe('list Job in loadplane for run whatever: HTTP 429');
    expect(sim.requestLog.length - before).toBe(5);
  });

  it('a Retry-After above the policy ceiling (30 s) is waited only up to 10 s', async () => {
    sim.faults.setThrottle({ seats: 1, handSize: 1, queueLengthLimit: 0, retryAfter: 30, serviceMs: { list: 15_000 } });
    await http(sim, 'GET', LIST);
    expect(await client.listByRun('Job', NS, 'whatever')).toEqual([]);
    expect(slept).toEqual([10_000, 10_000]);
  });
});
