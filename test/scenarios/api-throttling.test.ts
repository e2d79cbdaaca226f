/**
 * Runs at a large parallelism against a kube-sim that throttles as API Priority and Fairness does
 * (local/kube-sim/api-throttle.ts): Launch, AwaitReady and Start still succeed, each call waiting out
 * the 429's Retry-After where it was refused (architecture §7), and every object is created once.
 *
 * The throttle must bite for the test to mean anything, so it asserts that 429s were sent. A
 * standard EKS control plane gives loadplane's priority level 49 seats and 300 queue places, which a
 * run at parallelism 100 never fills; the level is shrunk here (8 seats, 30 queued) so that Launch's
 * first burst overflows it: on the virtual clock the first 38 requests of a stage arrive at one
 * simulated instant, so the 39th is refused whatever the machine's speed. 1,000 runners against
 * the EKS preset also pass Launch, AwaitReady and Start, but take about 46 s of real time, too long
 * for this suite (README of local/kube-sim, "Throttling").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** Retry-After waits pass on the harness's clock; what is asserted is the outcome and the requests. */
const TIMEOUTS = { prepare: '10m', ready: '10m', run: '30m', total: '1h' };

/** One VU per runner at least: k6 refuses runners without a VU. */
function script(vus: number): string {
  return `import http from 'k6/http';
export const options = { vus: ${vus}, duration: '30s' };
export default function () {
  http.get(__ENV.TARGET_URL);
}
`;
}

const WATCHED = [Stage.Launch, Stage.AwaitReady, Stage.Start] as const;
type Watched = (typeof WATCHED)[number];

/** The request log of each watched state, from its first entry to its last exit (retries included). */
function stageWindows(): { onEvent: (e: HistoryEvent) => void; requests: (stage: Watched) => RequestLogEntry[] } {
  const from = new Map<string, number>();
  const to = new Map<string, number>();
  return {
    onEvent: (e) => {
      const name = e.state?.name;
      if (!name || !(WATCHED as readonly string[]).includes(name)) return;
      if (e.type === 'StateEntered' && !from.has(name)) from.set(name, h.kubeSim.requestLog.length);
      if (e.type === 'StateExited') to.set(name, h.kubeSim.requestLog.length);
    },
    requests: (stage) => h.kubeSim.requestLog.slice(from.get(stage), to.get(stage)),
  };
}

const isCreate = (r: RequestLogEntry) => r.method === 'POST' && !r.path.includes('/proxy/');
const throttled = (r: RequestLogEntry) => r.throttled !== undefined;

async function throttledRun(parallelism: number) {
  const runId = newRunId();
  const before = h.kubeSim.requestLog.length;
  const stats = h.kubeSim.throttleStats();
  const windows = stageWindows();
  const started = Date.now();
  const { view } = await h.run(k6Spec({ name: `throttled-${parallelism}`, parallelism, script: { inline: script(parallelism) }, timeouts: TIMEOUTS }), {
    name: runId,
    onEvent: windows.onEvent,
  });
  const realMs = Date.now() - started;
  const requests = h.kubeSim.requestLog.slice(before);
  const after = h.kubeSim.throttleStats();
  const per = Object.fromEntries(WATCHED.map((s) => [s, windows.requests(s).filter(throttled).length]));
  console.info(
    `parallelism ${parallelism}: ${requests.filter(throttled).length} of ${requests.length} requests throttled ` +
      `(${JSON.stringify(per)}); queued ${after.queued - stats.queued}, longest wait ${after.longestWaitMs} ms, ` +
      `highest Retry-After ${after.highestRetryAfterSeconds} s; ${realMs} ms real`,
  );
  return { runId, view, requests, windows };
}

describe('runs survive API Priority and Fairness throttling', () => {
  it('100 runners against a level of 8 seats and 30 queued: SUCCEEDED, every stage once, 429s in Launch, every object created once', async () => {
    h.kubeSim.faults.setThrottle({ seats: 8, handSize: 1, queueLengthLimit: 30 });
    try {
      const { runId, view, requests, windows } = await throttledRun(100);
      expect(`${view.run.outcome}: ${view.run.outcomeReason ?? ''}`).toMatch(/^SUCCEEDED/);
      expect(h.leftovers(runId)).toEqual({});
      // The throttle bit, Launch included, and every refused call was retried where it failed.
      expect(windows.requests(Stage.Launch).filter(throttled).length).toBeGreaterThan(0);
      for (const stage of WATCHED) expect(view.stages[stage]).toMatchObject({ state: 'completed', attempts: 1 });
      // Prepare's anchor, script ConfigMap and initializer, Launch's Job per runner and the coordinator's: once each.
      const creates = requests.filter(isCreate);
      expect(creates.filter((r) => r.status === 201)).toHaveLength(4 + 100);
      expect(creates.filter((r) => r.status === 409)).toHaveLength(0);
    } finally {
      h.kubeSim.faults.clearThrottle();
    }
  }, 120_000);
});
