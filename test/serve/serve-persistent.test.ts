/**
 * `serve`'s store (architecture §9): in memory by default, on disk with `dataDir`. On disk, runs and
 * schedules survive a restart, a run in flight at a stop is finished by the reaper and kept, and one
 * data directory has one serve; in memory, a run id of a serve that stopped is a 404 that says so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { errorBodySchema, runResourceSchema, scheduleDetailSchema } from '../../lambdas/api/resources';
import { dispatchStage } from '../../lambdas/stages/dispatch';
import type { StageDeps } from '../../lambdas/stages/deps';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { SERVE_STORE_HEADER } from '../../local/serve/api-gateway-event';
import { startServe, type Serve, type ServeOptions } from '../../local/serve/serve';
import { k6Spec } from '../support/local-runs';

const root = mkdtempSync(join(tmpdir(), 'loadplane-serve-store-'));
let dirs = 0;
const newDataDir = () => join(root, `data-${++dirs}`);

const open: { serve: Serve; clock: VirtualClock }[] = [];
async function start(options: ServeOptions = {}): Promise<Serve> {
  const clock = new VirtualClock();
  const serve = await startServe({ clock, sweepIntervalMs: 0, scheduleIntervalMs: 0, random: mulberry32(3), ...options });
  open.push({ serve, clock });
  return serve;
}
async function stop(serve: Serve) {
  const i = open.findIndex((o) => o.serve === serve);
  const [entry] = open.splice(i, 1);
  const summary = await serve.close();
  entry!.clock.close();
  return summary;
}
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.serve.close();
    o.clock.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function submit(serve: Serve, spec: object): Promise<string> {
  const res = await fetch(`${serve.url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) });
  expect(res.status).toBe(201);
  return runResourceSchema.parse(await res.json()).runId;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 25));
}

const finished = (serve: Serve, runId: string) => async () => {
  const view = await serve.runtime.ledger.getRun(runId);
  // Cleanup's record is not the execution's end (the stage's cost is recorded after it, then the
  // execution ends): a stop in between would find the run in flight.
  return view?.run.outcome !== undefined && view.stages.Cleanup?.state === 'completed' && serve.openExecutions().length === 0;
};

describe('serve --data-dir', () => {
  it('runs and schedules survive a restart; every answer says the store is on disk', async () => {
    const dataDir = newDataDir();
    const first = await start({ dataDir });
    expect(first.store).toBe('disk');
    const put = await fetch(`${first.url}/schedules/nightly`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', spec: k6Spec({ name: 'nightly', parallelism: 1 }) }),
    });
    expect(put.status).toBe(201);
    expect(put.headers.get(SERVE_STORE_HEADER)).toBe('disk');
    const runId = await submit(first, k6Spec({ name: 'kept', parallelism: 1 }));
    await until(finished(first, runId));
    expect((await stop(first)).inFlight).toEqual([]);

    const second = await start({ dataDir });
    expect(second.leftRuns).toEqual([]);
    const run = runResourceSchema.parse(await (await fetch(`${second.url}/runs/${runId}`)).json());
    expect(run).toMatchObject({ runId, status: 'SUCCEEDED', name: 'kept' });
    const schedule = scheduleDetailSchema.parse(await (await fetch(`${second.url}/schedules/nightly`)).json());
    expect(schedule).toMatchObject({ name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin' });
  }, 60_000);

  it('a run in flight when serve stops is finished ABORTED by the reaper before it closes, and kept', async () => {
    const dataDir = newDataDir();
    // The run's Watch is held as a working actor (simulated time stands still, the test runs on)
    // until the reaper has decided the stopped run; then it never returns, as a Lambda cut off.
    const invokeStage = async (deps: StageDeps, payload: unknown) => {
      const { stage, runId } = payload as { stage?: string; runId?: string };
      if (stage === 'Watch' && runId) {
        while ((await deps.ledger.getRun(runId))?.stages.Decide?.state !== 'completed') await new Promise((r) => setTimeout(r, 20));
        await open.at(-1)!.clock.waitFor(new Promise(() => undefined));
      }
      return dispatchStage(deps, payload);
    };
    const first = await start({ dataDir, invokeStage });
    const runId = await submit(first, k6Spec({ name: 'in-flight', parallelism: 1 }));
    await until(async () => (await first.runtime.ledger.getRun(runId))?.run.status === 'RUNNING');
    expect(first.openExecutions()).toEqual([runId]);
    const summary = await stop(first);
    expect(summary).toEqual({ store: 'disk', inFlight: [{ execution: runId, runId, outcome: 'ABORTED' }] });

    const second = await start({ dataDir });
    expect(second.leftRuns).toEqual([]);
    const view = await second.runtime.ledger.getRun(runId);
    expect(view?.run.outcome).toBe('ABORTED');
    expect(view?.stages.Notify?.state).toBe('completed');
    expect(view?.stages.Cleanup?.state).toBe('completed');
  }, 60_000);

  it('one serve per data directory: a second is refused, naming the directory', async () => {
    const dataDir = newDataDir();
    await start({ dataDir });
    await expect(start({ dataDir })).rejects.toMatchObject({
      name: 'DataDirInUse',
      message: expect.stringContaining(`${dataDir} is in use by another loadplane serve (this process)`),
    });
  }, 60_000);
});

describe('serve in memory', () => {
  it("a run of a serve that stopped is a 404 saying runs live in this serve's memory; answers say the store is memory", async () => {
    const first = await start();
    const runId = await submit(first, k6Spec({ name: 'forgotten', parallelism: 1 }));
    await until(finished(first, runId));
    await stop(first);
    const second = await start();
    for (const path of [`/runs/${runId}`, `/runs/${runId}/report`]) {
      const res = await fetch(`${second.url}${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get(SERVE_STORE_HEADER)).toBe('memory');
      const [problem] = errorBodySchema.parse(await res.json()).errors;
      expect(problem).toEqual({
        path: 'id',
        message: expect.stringMatching(
          new RegExp(`^no run ${runId} on this serve, which keeps runs in memory since it started at \\S+Z: a run of a serve that stopped ended with it`),
        ),
      });
    }
    // Other 404s are the API's own.
    const unknown = errorBodySchema.parse(await (await fetch(`${second.url}/nowhere`)).json());
    expect(unknown.errors[0]?.path).toBe('(path)');
  }, 60_000);
});
