/**
 * Admit's contract (architecture §3.1): validate the input, create or find the run, adopt it for this
 * execution, record the deadlines; a second execution for the same run is a duplicate that touches
 * nothing. Admit never talks to the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import { Outcome, RunStatus, Stage, StageState, TriggerKind } from '../../lambdas/core/status';
import { admit, type AdmitRecord } from '../../lambdas/stages/admit';
import { executionArnFor } from '../../local/engine/local-execution';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { admitPayload, driveTo, endRun, markRequests, viewOf } from './stage-fixture';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const MINUTE = 60_000;

describe('Admit', () => {
  it('creates the run, adopts it for the execution, moves it to PREPARING and records the deadlines, without a Kubernetes request', async () => {
    const requests = markRequests(h);
    const spec = k6Spec({ name: 'admit', timeouts: { prepare: '3m', ready: '2m', run: '5m', total: '1h' } });
    const payload = admitPayload(spec);
    const admittedAt = h.clock.now();

    const result = await admit(h.runtime.deps, payload);

    expect(result).toEqual({ runId: payload.executionName, duplicate: false, queued: false });
    const view = await viewOf(h, result.runId);
    expect(view.run).toMatchObject({
      runId: result.runId,
      status: RunStatus.PREPARING,
      executionArn: payload.execution,
      trigger: { kind: TriggerKind.local },
      spec: { name: 'admit', engine: 'k6', parallelism: 4 },
    });
    expect(view.run.outcome).toBeUndefined();
    expect(view.stages.Admit).toMatchObject({ state: StageState.completed, attempts: 1 });
    expect(view.stages.Admit?.output).toEqual({
      admittedAt,
      deadlines: { prepareBy: admittedAt + 3 * MINUTE, totalBy: admittedAt + 60 * MINUTE },
    } satisfies AdmitRecord);
    // Only Admit ran: no other stage entry exists yet.
    expect(Object.keys(view.stages)).toEqual([Stage.Admit]);
    expect(requests.since()).toEqual([]);
  });

  it('without a total timeout, the run must end by its phases together', async () => {
    const payload = admitPayload(k6Spec({ name: 'admit-no-total', timeouts: { prepare: '3m', ready: '2m', run: '5m' } }));
    const admittedAt = h.clock.now();
    const { runId } = await admit(h.runtime.deps, payload);
    const record = (await viewOf(h, runId)).stages.Admit?.output as AdmitRecord;
    expect(record.deadlines).toEqual({ prepareBy: admittedAt + 3 * MINUTE, totalBy: admittedAt + 10 * MINUTE });
  });

  it('invoked again by the same execution (a retried Task) returns the same answer and keeps the first record', async () => {
    const payload = admitPayload(k6Spec({ name: 'admit-retry' }));
    const first = await admit(h.runtime.deps, payload);
    const before = await viewOf(h, first.runId);
    h.clock.advance(5 * MINUTE); // a late retry: the deadlines must not move with it
    const requests = markRequests(h);

    const again = await admit(h.runtime.deps, payload);

    expect(again).toEqual(first);
    const after = await viewOf(h, first.runId);
    expect(after.stages.Admit).toMatchObject({ attempts: 1, output: before.stages.Admit?.output });
    expect(after.run).toMatchObject({ status: RunStatus.PREPARING, executionArn: payload.execution, adoptedAt: before.run.adoptedAt });
    expect(requests.since()).toEqual([]);
  });

  it('a second execution for the same run (a scheduler double delivery) is a duplicate and touches nothing', async () => {
    const spec = k6Spec({ name: 'nightly' });
    const input = { spec, schedule: { name: 'nightly', scheduledTime: '2026-12-01T02:00:00Z' } };
    const first = await admit(h.runtime.deps, admitPayload(spec, { input, runId: newRunId() }));
    const before = await viewOf(h, first.runId);
    const requests = markRequests(h);

    const second = await admit(h.runtime.deps, admitPayload(spec, { input, runId: newRunId() }));

    expect(first.duplicate).toBe(false);
    expect(second).toEqual({ runId: first.runId, duplicate: true, queued: false });
    const after = await viewOf(h, first.runId);
    expect(after.run).toEqual(before.run); // still owned by the first execution, nothing updated
    expect(after.stages).toEqual(before.stages);
    expect(requests.since()).toEqual([]);
  });

  it('a late Admit of a run that already ended is a duplicate, even from its own execution', async () => {
    const spec = k6Spec({ name: 'admit-late', parallelism: 1 });
    const run = await driveTo(h, spec, Stage.Admit);
    await endRun(h, run.runId, Outcome.SUCCEEDED);
    const before = await viewOf(h, run.runId);
    expect(before.run.status).toBe(Outcome.SUCCEEDED);
    const requests = markRequests(h);

    const late = await admit(h.runtime.deps, admitPayload(spec, { runId: run.runId, execution: run.execution }));

    expect(late).toEqual({ runId: run.runId, duplicate: true, queued: false });
    expect(await viewOf(h, run.runId)).toEqual(before);
    expect(requests.since()).toEqual([]);
  });

  it('an invalid spec is SpecInvalid and creates nothing', async () => {
    const runId = newRunId();
    const spec = k6Spec({ name: 'too-many', parallelism: 10_000 });
    await expect(admit(h.runtime.deps, admitPayload(spec, { runId }))).rejects.toMatchObject({ name: 'SpecInvalid', retryable: false });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
  });

  it('an input that is no run input is SpecInvalid and creates nothing', async () => {
    const runId = newRunId();
    const payload = { request: { hello: 'world' }, execution: executionArnFor(runId), executionName: runId };
    await expect(admit(h.runtime.deps, payload)).rejects.toMatchObject({ name: 'SpecInvalid' });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
  });

  it('`{ runId }` of a run the API never created is RunNotFound', async () => {
    const runId = newRunId();
    const payload = { request: { runId }, execution: executionArnFor(runId), executionName: runId };
    await expect(admit(h.runtime.deps, payload)).rejects.toMatchObject({ name: 'RunNotFound', runId });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
  });

  it('the same idempotency key with another spec is RunConflict, and the run keeps its spec and owner', async () => {
    const key = { idempotencyKey: `release-${newRunId()}`, caller: 'ci' };
    const original = k6Spec({ name: 'release', parallelism: 2 });
    const first = await admit(h.runtime.deps, admitPayload(original, { input: { spec: original, ...key } }));
    const before = await viewOf(h, first.runId);

    const edited = k6Spec({ name: 'release', parallelism: 3 });
    await expect(admit(h.runtime.deps, admitPayload(edited, { input: { spec: edited, ...key } }))).rejects.toMatchObject({
      name: 'RunConflict',
      runId: first.runId,
    });
    expect((await viewOf(h, first.runId)).run).toEqual(before.run);
  });
});
