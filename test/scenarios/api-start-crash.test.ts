/**
 * AWS Distributed Load Testing's retried start launches a second run; here the API writes the run,
 * then starts its execution named by the run id (architecture §2 Entry points). A crash between the two — StartExecution
 * failing, or the API Lambda dying while it waits — leaves a PENDING run that the caller's retry (the
 * same Idempotency-Key) or the sweeper starts, exactly once, whichever comes first or both.
 */
import { ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executions } from '../../lambdas/core/executions';
import { runResourceSchema } from '../../lambdas/api/resources';
import { makeApiHandler } from '../../lambdas/api/router';
import { Outcome, RunStatus } from '../../lambdas/core/status';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { mulberry32 } from '../../local/kube-sim/seeded-random';
import { startServe, type Serve } from '../../local/serve/serve';
import { proxyEvent } from '../support/api-gateway-events';
import { k6Spec } from '../support/local-runs';

let serve: Serve;
let clock: VirtualClock;

beforeAll(async () => {
  clock = new VirtualClock();
  serve = await startServe({ clock, sweepIntervalMs: 0, random: mulberry32(3) });
});
afterAll(async () => {
  await serve?.close();
  clock?.close();
});

type Crash = 'start fails' | 'api dies';

/** The API handler over serve's ledger, whose first StartExecution crashes as `crash` says; every start is counted. */
function crashingApi(crash: Crash) {
  const starts: string[] = [];
  let crashed = false;
  const executions: Executions = {
    ...serve.executions,
    start: (runId) => {
      starts.push(runId);
      if (!crashed) {
        crashed = true;
        // 'api dies': the Lambda is gone mid-call; the caller sees API Gateway's timeout, nothing more.
        if (crash === 'api dies') return new Promise<never>(() => undefined);
        return Promise.reject(Object.assign(new Error('connect ECONNRESET'), { name: 'TimeoutError' }));
      }
      return serve.executions.start(runId);
    },
  };
  const handler = makeApiHandler({ ledger: serve.runtime.ledger, config: serve.runtime.deps.config, executions, now: () => clock.now(), log: () => undefined });
  return { handler, starts };
}

const submit = (handler: ReturnType<typeof crashingApi>['handler'], name: string) =>
  handler(
    proxyEvent({
      method: 'POST',
      path: '/runs',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `crash-${name}` },
      body: JSON.stringify(k6Spec({ name, parallelism: 2 })),
    }),
    {} as Context,
  );

async function pendingRun(name: string): Promise<string> {
  for (;;) {
    const page = await serve.runtime.ledger.listRuns({ name });
    if (page.runs[0]) return page.runs[0].runId;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Executions of the run state machine for this run, as Step Functions lists them (the local engine's API). */
async function executionsOf(runId: string): Promise<number> {
  const sfn = new SFNClient({ endpoint: serve.stepFunctions.endpoint, region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  try {
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn: serve.stepFunctions.stateMachineArn, maxResults: 1000 }));
    return (executions ?? []).filter((e) => e.name === runId).length;
  } finally {
    sfn.destroy();
  }
}

async function ended(runId: string) {
  for (;;) {
    const view = await serve.runtime.ledger.getRun(runId);
    if (view?.run.outcome && view.stages.Cleanup?.state === 'completed') return view;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each<Crash>(['start fails', 'api dies'])('a crash between the ledger write and StartExecution (%s)', (crash) => {
  const slug = crash.replace(' ', '-');

  it('the same request retried starts the run once', async () => {
    const api = crashingApi(crash);
    const first = submit(api.handler, `retried-${slug}`);
    if (crash === 'start fails') expect((await first).statusCode).toBe(202);
    const runId = await pendingRun(`retried-${slug}`);
    expect((await serve.runtime.ledger.getRun(runId))?.run.status).toBe(RunStatus.PENDING);

    const retry = await submit(api.handler, `retried-${slug}`);
    expect(retry.statusCode).toBe(200);
    expect(runResourceSchema.parse(JSON.parse(retry.body)).runId).toBe(runId);
    const view = await ended(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    // A sweep afterwards and a late retry start nothing new: one execution, one run.
    clock.advance(10 * 60_000);
    expect((await serve.sweep()).started).toEqual([]);
    expect((await submit(api.handler, `retried-${slug}`)).statusCode).toBe(200);
    expect((await serve.runtime.ledger.listRuns({ name: `retried-${slug}` })).runs).toHaveLength(1);
    expect(view.run.executionArn).toMatch(new RegExp(`:${runId}$`));
    expect(await executionsOf(runId)).toBe(1);
    expect(view.stages.Admit?.attempts).toBe(1);
  }, 60_000);

  it('without a retry, the sweeper starts it once, after its grace', async () => {
    const api = crashingApi(crash);
    const first = submit(api.handler, `swept-${slug}`);
    if (crash === 'start fails') expect((await first).statusCode).toBe(202);
    const runId = await pendingRun(`swept-${slug}`);
    // Within the grace the API's own start may still be on its way: the sweeper leaves the run alone.
    expect((await serve.sweep()).started).not.toContain(runId);
    clock.advance(3 * 60_000);
    const sweeps = await Promise.all([serve.sweep(), serve.sweep()]);
    expect(sweeps.flatMap((s) => s.started).filter((id) => id === runId).length).toBeGreaterThanOrEqual(1);
    const view = await ended(runId);
    expect(view.run.outcome).toBe(Outcome.SUCCEEDED);
    expect(view.run.trigger).toMatchObject({ kind: 'api', idempotencyKey: `crash-swept-${slug}` });
    expect((await serve.sweep()).started).not.toContain(runId);
    // The caller's late retry finds the run, and starts nothing.
    const late = await submit(api.handler, `swept-${slug}`);
    expect(late.statusCode).toBe(200);
    expect(await executionsOf(runId)).toBe(1);
    expect(runResourceSchema.parse(JSON.parse(late.body)).outcome).toBe(Outcome.SUCCEEDED);
  }, 60_000);
});
