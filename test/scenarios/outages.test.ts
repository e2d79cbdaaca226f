/**
 * After an outage (architecture §6 Outages) of any length of the ledger, of the execution API or of the
 * cluster's API, every run ends in one outcome, one notification and nothing left on the cluster,
 * within minutes of recovery and with no human action. Before the sweeper's finishing step
 * (lambdas/stages/sweep-ended.ts) a ledger outage past the reaper's retries left a run RUNNING for
 * good, unnotified, its objects on the cluster.
 *
 * Each case, on the virtual clock (test/support/outages.ts): a k6 run in the middle of its test when
 * the outage begins; a console execution started during it (not while the execution API is down:
 * the console could not start it then); and, while the ledger is up, an API run recorded during it,
 * whose StartExecution fails while the execution API is down (the API answers 202: lambdas/api/submit-run.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Stage, StageState } from '../../lambdas/core/status';
import { IDEMPOTENCY_KEY_HEADER } from '../../lambdas/notify/webhook';
import { k6Spec, recordAsApi } from '../support/local-runs';
import { startOutageHarness, SWEEP_EVERY_MS, type OutageHarness, type OutagePart } from '../support/outages';

const MINUTE = 60_000;
/** Every run is finished this long after the outage ends, at the latest (see the figures the cases print). */
const BOUND_AFTER_RECOVERY_MS = 20 * MINUTE;
const POLL_EVERY_MS = 30_000;

const script = (duration: string) =>
  `import http from 'k6/http';\nexport const options = { vus: 8, duration: '${duration}' };\nexport default function () { http.get(__ENV.TARGET_URL); }\n`;
const spec = (name: string, duration: string) =>
  k6Spec({
    name,
    parallelism: 2,
    script: { inline: script(duration) },
    notify: { channels: ['webhook'] },
    timeouts: { prepare: '5m', ready: '5m', run: '1h', total: '2h' },
  });

/** Real-time polling while the virtual clock runs on (it moves whenever every actor waits). */
const tick = () => new Promise((r) => setTimeout(r, 20));

describe.each<OutagePart>(['ledger', 'execution API', 'cluster API'])('an outage of the %s', (part) => {
  let o: OutageHarness;
  beforeAll(async () => {
    o = await startOutageHarness();
  });
  afterAll(async () => o?.close());

  it.each([
    { label: '15 min', ms: 15 * MINUTE },
    { label: '1 h', ms: 60 * MINUTE },
    { label: '3 h', ms: 180 * MINUTE },
  ])(
    'of $label: every run ends in one outcome, one notification, nothing left, soon after recovery',
    async ({ label, ms }) => {
      const { h } = o;
      const slug = `${part.toLowerCase().replaceAll(' ', '-')}-${label.replace(' ', '')}`;
      // The setup is an actor: time stands still while it starts the runs and schedules the outage.
      const { runs, recovery, during } = await h.clock.actor(() => setUp(o, part, slug, ms));
      await Promise.all(during);

      // Until every run is finished by the ledger (never read while the ledger is down), or 6 h pass.
      // Read every 30 s of platform time at most: finishedAt comes from the stages' own times, and the
      // ledger reads of a poll every tick were most of this file's cost.
      const finishedAt = new Map<string, number>();
      let polledAt = -Infinity;
      while (finishedAt.size < runs.length && h.clock.now() < recovery + 6 * 60 * MINUTE) {
        await tick();
        if (o.down || h.clock.now() - polledAt < POLL_EVERY_MS) continue;
        polledAt = h.clock.now();
        for (const runId of runs) {
          if (finishedAt.has(runId)) continue;
          const view = await h.runtime.ledger.getRun(runId);
          const notify = view?.stages[Stage.Notify];
          const cleanup = view?.stages[Stage.Cleanup];
          if (view?.run.outcome && notify?.state === StageState.completed && cleanup?.state === StageState.completed) {
            finishedAt.set(runId, Math.max(Date.parse(notify.endedAt!), Date.parse(cleanup.endedAt!)));
          }
        }
      }

      const figures = [];
      for (const runId of runs) {
        const view = (await h.runtime.ledger.getRun(runId))!;
        expect(view, `${runId} is in the ledger`).toBeDefined();
        expect(view.run.outcome, `${runId} has an outcome`).toBeDefined();
        expect(finishedAt.has(runId), `${runId} finished (Notify and Cleanup completed)`).toBe(true);
        const messages = o.receiver.requests.filter((r) => String(r.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]).startsWith(`${runId}:`));
        expect(messages, `${runId}: exactly one notification`).toHaveLength(1);
        expect(h.leftovers(runId), `${runId}: nothing left on the cluster`).toEqual({});
        const afterRecovery = finishedAt.get(runId)! - recovery;
        expect(afterRecovery).toBeLessThanOrEqual(BOUND_AFTER_RECOVERY_MS);
        figures.push(
          `${view.run.runName}: ${view.run.outcome}, finished ${Math.abs(Math.round(afterRecovery / 1000))} s ${afterRecovery < 0 ? 'before' : 'after'} recovery`,
        );
      }
      // No message is sent again later: a few more sweeps change nothing.
      const sent = o.receiver.requests.length;
      const later = h.clock.now() + 3 * SWEEP_EVERY_MS;
      while (h.clock.now() < later) await tick();
      expect(o.receiver.requests.length).toBe(sent);
      console.log(`outage of the ${part}, ${label}: ${figures.join('; ')}`);
    },
    240_000,
  );
});

/** Starts the runs and schedules the outage and what happens during it; time stands still meanwhile. */
async function setUp(o: OutageHarness, part: OutagePart, slug: string, ms: number) {
  const { h } = o;
  const t0 = h.clock.now();
  const outageStart = t0 + 10 * MINUTE;
  const recovery = outageStart + ms;
  o.outage(part, outageStart, recovery);

  const runs: string[] = [];
  // In the middle of its 40-minute test when the outage begins.
  const midTest = newRunId(t0);
  runs.push(midTest);
  await o.startExecution(midTest, { spec: spec(`mid-test-${slug}`, '40m'), source: 'local' });

  const during: Promise<void>[] = [];
  const at = (when: number, work: () => Promise<void>) =>
    during.push(
      new Promise<void>((resolve, reject) => {
        h.clock.at(when, () => void h.clock.actor(work).then(resolve, reject));
      }),
    );
  if (part !== 'execution API') {
    const consoleRun = newRunId(outageStart + 2 * MINUTE);
    runs.push(consoleRun);
    at(outageStart + 2 * MINUTE, async () => {
      await o.startExecution(consoleRun, { spec: spec(`console-${slug}`, '5m'), source: 'local' });
    });
  }
  if (part !== 'ledger') {
    at(outageStart + 3 * MINUTE, async () => {
      const apiRun = await recordAsApi(h.runtime, spec(`api-${slug}`, '5m'));
      runs.push(apiRun);
      // The API's start, as submit-run.ts makes it: a failure leaves the run PENDING for the sweeper.
      await o.executions.start(apiRun).catch(() => undefined);
    });
  }
  return { runs, recovery, during };
}
