/**
 * A run at parallelism 100 against an API server that fails a small fraction of
 * requests (1 % HTTP 500, or 2 % HTTP 429 with Retry-After) succeeds. Each Kubernetes call is
 * retried where it failed (architecture §7), so Launch is not retried as a whole; and were it retried, it
 * would create only what is missing — every object is created exactly once either way.
 * kube-sim's error rate is seeded: the same requests fail on every run of this file.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Stage } from '../../lambdas/core/status';
import type { HistoryEvent } from '../../local/engine/local-execution';
import type { RequestLogEntry } from '../../local/kube-sim';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
afterEach(() => h.kubeSim.faults.clear());

const PARALLELISM = 100;
/** What Prepare and Launch create: the run's anchor, the script ConfigMap and the initializer, then a Job per runner and the coordinator's. */
const OBJECTS = 4 + PARALLELISM;

/** Retry-After waits pass on the harness's clock; what is asserted is the outcome and the requests, not time. */
const TIMEOUTS = { prepare: '10m', ready: '10m', run: '30m', total: '1h' };

/** One VU per runner at least: k6 refuses runners without a VU. */
const SCRIPT = `import http from 'k6/http';
export const options = { vus: ${PARALLELISM}, duration: '30s' };
export default function () {
  http.get(__ENV.TARGET_URL);
}
`;

/** The request log from the moment the run's Launch state is entered until it is left. */
function launchWindow(): { onEvent: (e: HistoryEvent) => void; requests: () => RequestLogEntry[] } {
  let from: number | undefined;
  let to: number | undefined;
  return {
    onEvent: (e) => {
      if (e.state?.name !== 'Launch') return;
      if (e.type === 'StateEntered' && from === undefined) from = h.kubeSim.requestLog.length;
      if (e.type === 'StateExited') to = h.kubeSim.requestLog.length;
    },
    requests: () => h.kubeSim.requestLog.slice(from, to),
  };
}

/** An object create: a POST to a collection (a POST through pods/proxy is k6's setup() or teardown(), no object). */
const isCreate = (r: RequestLogEntry) => r.method === 'POST' && !r.path.includes('/proxy/');
const injected = (status: number) => (r: RequestLogEntry) => r.status === status;

describe('a run at parallelism 100 survives API server errors', () => {
  it.each([
    [500, 0.01],
    [429, 0.02],
  ] as const)(
    'HTTP %i on a fraction %s of requests: SUCCEEDED, nothing left, every object created once, Launch not retried',
    async (status, rate) => {
      const runId = newRunId();
      h.kubeSim.faults.setErrorRate(rate, status);
      const before = h.kubeSim.requestLog.length;
      const launch = launchWindow();
      const { view } = await h.run(k6Spec({ name: `error-rate-${status}`, parallelism: PARALLELISM, script: { inline: SCRIPT }, timeouts: TIMEOUTS }), {
        name: runId,
        onEvent: launch.onEvent,
      });
      h.kubeSim.faults.clear();

      const requests = h.kubeSim.requestLog.slice(before);
      const failed = requests.filter(injected(status));
      const creates = requests.filter(isCreate);
      const launchCreates = launch.requests().filter(isCreate);
      const launchFailed = launchCreates.filter(injected(status));
      console.info(
        `HTTP ${status} at ${rate * 100} %: ${failed.length} of ${requests.length} requests failed; ` +
          `Launch made ${launchCreates.length} create requests for ${2 * PARALLELISM} objects (${launchFailed.length} failed and were retried)`,
      );

      expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
      expect(h.leftovers(runId)).toEqual({});
      // The error rate did bite, Launch included ...
      expect(failed.length).toBeGreaterThan(0);
      expect(launchFailed.length).toBeGreaterThan(0);
      // ... and cost one request each: no stage retry, no object created twice or found already there.
      expect(view.stages[Stage.Launch]).toMatchObject({ state: 'completed', attempts: 1 });
      expect(creates.filter((r) => r.status === 201)).toHaveLength(OBJECTS);
      expect(creates.filter((r) => r.status === 409)).toHaveLength(0);
      expect(creates.length).toBeLessThanOrEqual(OBJECTS + creates.filter(injected(status)).length);
      expect(launchCreates.length).toBeLessThanOrEqual(PARALLELISM + 1 + launchFailed.length);
    },
    120_000,
  );
});

describe('a stage retried by the state machine creates only what is missing', () => {
  it("Prepare fails after creating its objects (the anchor's adoption by the initializer fails every attempt); the retry creates nothing again", async () => {
    const runId = newRunId();
    // More failures than one call's attempts: the call gives up, Prepare fails, Step Functions retries it.
    h.kubeSim.faults.failNextRequests(5, 500, { method: 'PATCH', pathIncludes: '/configmaps/' });
    const before = h.kubeSim.requestLog.length;
    const { view } = await h.run(k6Spec({ name: 'converge', parallelism: 6 }), { name: runId });
    expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
    expect(view.stages[Stage.Prepare]).toMatchObject({ state: 'completed', attempts: 2 });
    const creates = h.kubeSim.requestLog.slice(before).filter(isCreate);
    const to = (kind: string) => creates.filter((r) => r.path.endsWith(`/${kind}`)).map((r) => r.status);
    expect(to('configmaps')).toEqual([201, 201]); // the anchor and the script ConfigMap, once each
    expect(to('jobs')).toEqual(Array.from({ length: 8 }, () => 201)); // initializer + 6 runners + coordinator, once each: no 409
    expect(to('services')).toEqual([]);
    expect(h.leftovers(runId)).toEqual({});
  });
});
