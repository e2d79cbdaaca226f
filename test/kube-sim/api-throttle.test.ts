/**
 * kube-sim's API Priority and Fairness throttle (local/kube-sim/api-throttle.ts, README "Throttling"):
 * seats held for a service time in simulated time, bounded queues, and the API server's 429 beyond
 * them (server/filters/priority-and-fairness.go: plain text, Retry-After, the matched FlowSchema's and
 * priority level's UIDs). kube-sim runs on a VirtualClock that stands still between the requests of a
 * test until the test sleeps on it, so sequential requests arrive at one simulated instant: the
 * expected statuses follow from the seats, the queue and the service time alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KubeSim, ThrottleStats } from '../../local/kube-sim/index';
import { closeKubeSim, createConfigMap, http, NS, simSleep, startVirtualKubeSim, type HttpResult } from './helpers';

let sim: KubeSim;
beforeAll(async () => {
  sim = await startVirtualKubeSim();
  await createConfigMap(sim, { metadata: { name: 'target' } });
});
afterAll(() => closeKubeSim(sim));
beforeEach(() => {
  sim.faults.clear();
  sim.clearRequestLog();
});

const GET = `/api/v1/namespaces/${NS}/configmaps/target`;
const LIST = `/api/v1/namespaces/${NS}/configmaps`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Two seats, one queue of three, each get holds its seat 100 sim ms: five get in at one instant, then 429. */
const SMALL = { seats: 2, handSize: 1, queueLengthLimit: 3, serviceMs: { get: 100, list: 100, mutating: 100, watch: 100 } };

async function sequential(n: number, path = GET, method = 'GET'): Promise<HttpResult[]> {
  const out: HttpResult[] = [];
  for (let i = 0; i < n; i++) out.push(await http(sim, method, path));
  return out;
}

/** The counts since `before`; the two maxima (longest wait, highest Retry-After) as they stand, since the kube-sim started. */
function statsDelta(before: ThrottleStats): ThrottleStats {
  const now = sim.throttleStats();
  const maxima = new Set(['longestWaitMs', 'highestRetryAfterSeconds']);
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, maxima.has(k) ? v : v - before[k as keyof ThrottleStats]])) as unknown as ThrottleStats;
}

describe('off by default', () => {
  it('a flood is served, without APF headers', async () => {
    const answers = await sequential(20);
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(answers[0]!.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBeNull();
  });
});

describe('beyond its seats and queue, a priority level answers 429', () => {
  it('two seats and a queue of three: five requests are served at one instant, the rest get the API server 429', async () => {
    sim.faults.setThrottle(SMALL);
    const before = sim.throttleStats();
    const answers = await sequential(9);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429]);

    const rejected = answers[5]!;
    expect(rejected.headers.get('retry-after')).toBe('1');
    expect(rejected.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(rejected.headers.get('x-content-type-options')).toBe('nosniff');
    expect(rejected.text).toBe('Too many requests, please try again later.\n');
    // The matched UIDs are on every answer of the level, served or rejected.
    const level = rejected.headers.get('x-kubernetes-pf-prioritylevel-uid');
    const schema = rejected.headers.get('x-kubernetes-pf-flowschema-uid');
    expect(level).toMatch(UUID);
    expect(schema).toMatch(UUID);
    expect(level).not.toBe(schema);
    expect(answers[0]!.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBe(level);
    expect(answers[4]!.headers.get('x-kubernetes-pf-flowschema-uid')).toBe(schema);

    // The request log and the stats count what was throttled; the served ones carry no mark.
    expect(sim.requestLog.map((r) => r.throttled)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      'queue-full',
      'queue-full',
      'queue-full',
      'queue-full',
    ]);
    // Queued: dispatched at +100, +100 and +200 ms as the two seats free.
    expect(statsDelta(before)).toEqual({
      admitted: 5,
      queued: 3,
      rejected: 4,
      rejectedQueueFull: 4,
      rejectedTimeOut: 0,
      longestWaitMs: 200,
      highestRetryAfterSeconds: 1,
    });
  });

  it('a request retried after Retry-After finds the seats free and succeeds; one retried at once is refused again', async () => {
    sim.faults.setThrottle(SMALL);
    const flood = await sequential(6);
    expect(flood.at(-1)!.status).toBe(429);
    expect((await http(sim, 'GET', GET)).status).toBe(429);
    await simSleep(sim, Number(flood.at(-1)!.headers.get('retry-after')) * 1000);
    const retried = await http(sim, 'GET', GET);
    expect(retried.status).toBe(200);
    expect(retried.body.metadata.name).toBe('target');
  });

  it('a request that would wait longer than the queue wait limit is refused (time-out) though the queue has room', async () => {
    sim.faults.setThrottle({ seats: 1, handSize: 1, queueLengthLimit: 10, queueWaitLimitMs: 15_000, serviceMs: { get: 10_000 } });
    const before = sim.throttleStats();
    // Dispatched now, at +10 s (waits 10 s), at +20 s: over the 15 s limit.
    expect((await sequential(3)).map((a) => a.status)).toEqual([200, 200, 429]);
    expect(sim.requestLog.at(-1)!.throttled).toBe('time-out');
    expect(statsDelta(before)).toMatchObject({ admitted: 2, queued: 1, rejectedTimeOut: 1, longestWaitMs: 10_000 });
  });

  it('mutating requests take seats too: a create beyond them is refused and creates nothing', async () => {
    sim.faults.setThrottle({ ...SMALL, queueLengthLimit: 0 });
    await sequential(2);
    const create = await http(sim, 'POST', LIST, { metadata: { name: 'refused' } });
    expect(create.status).toBe(429);
    expect(sim.list('ConfigMap', NS).map((c) => c.metadata.name)).not.toContain('refused');
  });

  it('a fixed Retry-After is sent as set', async () => {
    sim.faults.setThrottle({ ...SMALL, retryAfter: 7 });
    const answers = await sequential(6);
    expect(answers[5]!.headers.get('retry-after')).toBe('7');
  });
});

describe('Retry-After grows while rejections go on (dropped_requests_tracker.go)', () => {
  it('1 s; after a second with at least 3 rejections the next rejection says 2 s; a quiet stretch brings it back to 1', async () => {
    sim.faults.setThrottle(SMALL);
    // Start on a whole simulated second, so the flood below stays within one.
    await simSleep(sim, 1000 - (sim.now() % 1000));
    const first = await sequential(9);
    expect(first.filter((a) => a.status === 429).map((a) => a.headers.get('retry-after'))).toEqual(['1', '1', '1', '1']);
    await simSleep(sim, 1000);
    const second = await sequential(6);
    expect(second[5]!.status).toBe(429);
    expect(second[5]!.headers.get('retry-after')).toBe('2');
    // Three seconds later one rejection finds fewer than 2 in the 2 s before it: back down to 1.
    await simSleep(sim, 3000);
    const third = await sequential(6);
    expect(third[5]!.headers.get('retry-after')).toBe('1');
  });
});

describe('what APF does not count, and what costs more', () => {
  it('pods/log and pods/proxy are long-running and pass uncounted (no headers); throttleLongRunning counts them', async () => {
    sim.faults.setThrottle({ ...SMALL, queueLengthLimit: 0 });
    expect((await sequential(3)).map((a) => a.status)).toEqual([200, 200, 429]);
    const log = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/absent/log`);
    const proxy = await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/absent:6565/proxy/v1/status`);
    expect([log.status, proxy.status]).toEqual([404, 404]);
    expect(log.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBeNull();

    sim.faults.setThrottle({ ...SMALL, queueLengthLimit: 0, throttleLongRunning: true });
    await sequential(2);
    expect((await http(sim, 'GET', `/api/v1/namespaces/${NS}/pods/absent/log`)).status).toBe(429);
  });

  it('health probes go to the exempt level: served when the level is full, with other UIDs', async () => {
    sim.faults.setThrottle({ ...SMALL, queueLengthLimit: 0 });
    const answers = await sequential(3);
    const probe = await http(sim, 'GET', '/readyz');
    expect(probe.status).toBe(200);
    expect(probe.headers.get('x-kubernetes-pf-prioritylevel-uid')).toMatch(UUID);
    expect(probe.headers.get('x-kubernetes-pf-prioritylevel-uid')).not.toBe(answers[0]!.headers.get('x-kubernetes-pf-prioritylevel-uid'));
  });

  it('a list takes one seat per 100 stored objects of its resource: with 150 ConfigMaps it takes both seats', async () => {
    const stored = sim.list('ConfigMap').length;
    for (let i = stored; i < 150; i++) await createConfigMap(sim, { metadata: { name: `filler-${i}` } });
    sim.faults.setThrottle({ ...SMALL, queueLengthLimit: 0 });
    expect((await http(sim, 'GET', LIST)).status).toBe(200);
    expect((await http(sim, 'GET', GET)).status).toBe(429);
    await simSleep(sim, 100);
    // A get takes one seat: two fit.
    expect((await sequential(3)).map((a) => a.status)).toEqual([200, 200, 429]);
  });
});

describe('settings', () => {
  it.each([
    [{ seats: 0 }, 'throttle seats must be an integer >= 1, got 0'],
    [{ handSize: 1.5 }, 'throttle handSize must be an integer >= 1, got 1.5'],
    [{ queueLengthLimit: -1 }, 'throttle queueLengthLimit must be an integer >= 0, got -1'],
    [{ serviceMs: { list: -5 } }, 'throttle serviceMs.list must be >= 0, got -5'],
    [{ retryAfter: 0 }, 'throttle retryAfter must be an integer >= 1, got 0'],
  ])('%j is refused: %s', (settings, message) => {
    expect(() => sim.faults.setThrottle(settings)).toThrow(message);
  });

  it("'eks-standard' is 49 seats and 6 × 50 queued: 349 requests at one instant are served, the 350th is refused", async () => {
    sim.faults.setThrottle('eks-standard');
    const answers = await sequential(350);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(349);
    expect(answers[349]!.status).toBe(429);
  });
});
