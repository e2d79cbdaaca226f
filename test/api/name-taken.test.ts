/**
 * `POST /runs` (architecture §2 Entry points) answered 201 for a run that would never start, when an execution
 * already existed under the run id its Idempotency-Key maps to (one started by hand, with another
 * input): the run stayed PENDING for good, the sweeper logged "left to the reaper" every sweep, and a
 * `reject` group's slot stayed held. Now the API reads the execution (DescribeExecution) and answers
 * 409 naming it; the run ends FAILED and its slot is freed; the sweeper does the same for a run it
 * finds so. The executions are the local engine's behind its Step Functions API, called with the
 * real SFNClient (test/support/outages.ts's harness, here with no outage).
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApiHandler } from '../../lambdas/api/router';
import { runIdForIdempotencyKey } from '../../lambdas/core/run-id';
import { Outcome } from '../../lambdas/core/status';
import { endIfNameTaken } from '../../lambdas/stages/name-taken';
import { sweep } from '../../lambdas/stages/sweep';
import { ALICE, proxyEvent } from '../support/api-gateway-events';
import { k6Spec, recordAsApi } from '../support/local-runs';
import { startOutageHarness, type OutageHarness } from '../support/outages';

const CONTEXT = { awsRequestId: 'name-taken' } as unknown as Context;
let o: OutageHarness;
beforeAll(async () => {
  o = await startOutageHarness();
});
afterAll(async () => o?.close());

const api = () =>
  makeApiHandler({ ledger: o.h.runtime.ledger, config: o.h.runtime.deps.config, executions: o.executions, now: () => o.h.clock.now(), log: () => undefined });

const post = (key: string, spec: unknown) =>
  o.h.clock.actor(() =>
    api()(
      proxyEvent({ method: 'POST', path: '/runs', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: JSON.stringify(spec) }),
      CONTEXT,
    ),
  );

/** An execution started by hand under `name`, whose input makes another run (its own idempotency key). */
const startByHand = (name: string) =>
  o.h.clock.actor(() => o.startExecution(name, { spec: k6Spec({ name: 'by-hand', parallelism: 1 }), idempotencyKey: `by-hand-${name}` }));

describe('an execution under the run id, started by hand with another input', () => {
  it('POST /runs answers 409 naming the execution; the run ends FAILED at once; the group slot is free again', async () => {
    const key = 'taken-by-hand';
    const runId = runIdForIdempotencyKey(ALICE, key);
    const executionArn = await startByHand(runId);
    const spec = k6Spec({ name: 'name-taken', parallelism: 1, concurrency: { group: 'taken-group', limit: 1, whenBusy: 'reject' } });

    const answer = await post(key, spec);
    expect(answer.statusCode).toBe(409);
    const body = JSON.parse(answer.body) as { errors: { path: string; message: string }[]; run?: { runId: string } };
    expect(body.errors).toEqual([
      {
        path: 'Idempotency-Key',
        message: expect.stringMatching(
          new RegExp(
            `^execution name ${runId} is taken by another execution \\(${executionArn}, (RUNNING|SUCCEEDED)\\) started with another input, so this run can never start`,
          ),
        ),
      },
    ]);
    const view = (await o.h.runtime.ledger.getRun(runId))!;
    expect(view.run.status).toBe(Outcome.FAILED);
    expect(view.run.executionArn).toBeUndefined();
    expect(view.run.outcomeReason).toBe(body.errors[0]!.message);
    expect((await o.h.runtime.ledger.getGroup('taken-group'))?.holders ?? {}).not.toHaveProperty(runId);

    // Another run of the group gets the slot; the same request again finds the ended run.
    const next = await post('taken-next', { ...spec, name: 'name-taken-next' });
    expect(next.statusCode).toBe(201);
    expect((await post(key, spec)).statusCode).toBe(200);
  }, 60_000);

  it("a run's own execution that ran already is not taken: the answer stays the run (the reaper finishes it)", async () => {
    const runId = await o.h.clock.actor(() => recordAsApi(o.h.runtime, k6Spec({ name: 'own-execution', parallelism: 1 })));
    // Its own execution (input { runId }), started before this check.
    const executionArn = await o.h.clock.actor(() => o.startExecution(runId, { runId }));
    const verdict = await o.h.clock.actor(() => endIfNameTaken({ ledger: o.h.runtime.ledger, executions: o.executions }, runId, executionArn));
    expect(verdict).toEqual({ kind: 'ours' });
    expect((await o.h.runtime.ledger.getRun(runId))!.run.outcome).not.toBe(Outcome.FAILED);
  }, 60_000);

  it('the sweeper ends a PENDING run it finds so, instead of leaving it "to the reaper" every sweep', async () => {
    const runId = await o.h.clock.actor(() => recordAsApi(o.h.runtime, k6Spec({ name: 'swept-name-taken', parallelism: 1 })));
    await startByHand(runId);
    // Past the sweeper's start grace: it tries to start the run, and finds the name taken.
    await o.h.clock.actor(() => o.h.clock.sleep(3 * 60_000));
    const result = await o.h.clock.actor(() => sweep({ ...o.h.runtime.deps, executions: o.executions }));
    expect(result.started).not.toContain(runId);
    const view = (await o.h.runtime.ledger.getRun(runId))!;
    expect(view.run.status).toBe(Outcome.FAILED);
    expect(view.run.outcomeReason).toMatch(new RegExp(`^execution name ${runId} is taken by another execution`));
  }, 60_000);
});
