/**
 * The reaper's contract (architecture §3, §6): an execution that ended FAILED, TIMED_OUT or ABORTED
 * without its fail path is finished here — Decide, Notify, Cleanup under the same ledger keys — so
 * the run gets its outcome, exactly one notification and no leftovers. It finishes only the runs its
 * execution owns, and takes over a run no execution ever created or adopted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRunId } from '../../lambdas/core/run-id';
import type { RunSpecInput } from '../../lambdas/core/spec';
import { Outcome, Stage, StageState } from '../../lambdas/core/status';
import { admit } from '../../lambdas/stages/admit';
import { reap, type ExecutionStatusChange } from '../../lambdas/stages/reap';
import { executionArnFor } from '../../local/engine/local-execution';
import { k6Spec, startHarness, type Harness } from '../support/local-runs';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { admitPayload, createdOnly, driveTo, markRequests, viewOf } from './stage-fixture';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startHarness(undefined, { channels: { webhook: { url: `${receiver.url}/hooks/reaper` } } });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => receiver.reset());

const TEN_MINUTES = `export const options = { vus: 8, duration: '10m' };\nexport default function () {}\n`;
const spec = (name: string) =>
  k6Spec({
    name,
    parallelism: 2,
    script: { inline: TEN_MINUTES },
    notify: { channels: ['webhook'] },
    timeouts: { prepare: '2m', ready: '2m', run: '30m', total: '1h' },
  });

/** The event EventBridge sends when an execution ends, for an execution named `runId` started with `input`. */
const ended = (status: string, runId: string, input: unknown, extra: Partial<ExecutionStatusChange> = {}): ExecutionStatusChange => ({
  executionArn: executionArnFor(runId),
  name: runId,
  status,
  input: JSON.stringify(input),
  ...extra,
});
const localInput = (s: RunSpecInput) => ({ spec: s, source: 'local' });
const FINISHING = [Stage.Decide, Stage.Notify, Stage.Cleanup] as const;
/**
 * The longest an execution can spend in Admit (architecture §6), worked out from its Task: 1 + 6
 * transient + 5 busy attempts of 30 s each (360 s), the transient waits 2 + 4 + 8 + 16 + 30 + 30 (90 s)
 * and the busy waits 5 + 7.5 + 11.25 + 16.875 + 25.3125 (65.9375 s): 515.9375 s. The ledger's
 * clock counts whole ms, so 515_938 ms is the first moment no execution can still adopt a run.
 */
const ADMIT_GAVE_UP_MS = 515_938;

describe('reap', () => {
  it('finishes an execution stopped mid-run (ABORTED): outcome recorded, one notification, nothing left', async () => {
    const s = spec('reap-stopped');
    const { runId } = await driveTo(h, s, Stage.Start); // the runners are generating load
    expect(h.leftovers(runId)).toMatchObject({ Job: 4 }); // initializer, 2 runners, the coordinator

    const result = await reap(h.runtime.deps, ended('ABORTED', runId, localInput(s)));

    expect(result).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.ABORTED, reason: 'the execution was stopped' });
    const view = await viewOf(h, runId);
    expect(view.run).toMatchObject({ outcome: Outcome.ABORTED, status: Outcome.ABORTED, outcomeReason: 'the execution was stopped' });
    for (const stage of FINISHING) expect(view.stages[stage], stage).toMatchObject({ state: StageState.completed, attempts: 1 });
    expect(receiver.requests.map((r) => r.headers['idempotency-key'])).toEqual([`${runId}:${Outcome.ABORTED}`]);
    expect(h.leftovers(runId)).toEqual({});
  });

  it("an ABORTED execution's reason carries StopExecution's cause (who stopped it and why)", async () => {
    const s = spec('reap-stopped-cause');
    const { runId } = await driveTo(h, s, Stage.Start);
    const cause = 'abort requested by arn:aws:iam::1:user/alice at 2026-12-01T10:00:00Z did not end the run within 600 s';
    const result = await reap(h.runtime.deps, ended('ABORTED', runId, localInput(s), { error: 'AbortGraceExpired', cause }));
    expect(result).toMatchObject({ kind: 'reaped', outcome: Outcome.ABORTED, reason: `the execution was stopped: ${cause}` });
  });

  it('an event that left the input out (too large for it) reads it back from the execution; without a way to, it fails for a retry rather than leave the run in flight', async () => {
    const s = spec('reap-no-input');
    const { runId } = await driveTo(h, s, Stage.Start);
    const event = ended('ABORTED', runId, localInput(s), { input: undefined });
    const asked: string[] = [];

    await expect(reap(h.runtime.deps, event)).rejects.toMatchObject({ name: 'ExecutionInputUnavailable' });
    expect((await viewOf(h, runId)).run.outcome).toBeUndefined();

    const result = await reap({ ...h.runtime.deps, executionInput: async (arn) => (asked.push(arn), JSON.stringify(localInput(s))) }, event);
    expect(asked).toEqual([event.executionArn]);
    expect(result).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.ABORTED });
    expect(h.leftovers(runId)).toEqual({});
  });

  it('a duplicate event for a run already reaped changes nothing: no request, no second notification', async () => {
    const s = spec('reap-twice');
    const { runId } = await driveTo(h, s, Stage.Launch);
    const event = ended('TIMED_OUT', runId, localInput(s));
    const first = await reap(h.runtime.deps, event);
    const before = await viewOf(h, runId);
    const requests = markRequests(h);

    expect(await reap(h.runtime.deps, event)).toEqual(first);

    expect(requests.since()).toEqual([]);
    expect(receiver.deliveries).toBe(1);
    expect(await viewOf(h, runId)).toEqual(before);
  });

  it('ignores the failure of an execution that does not own the run (a rejected edit), touching nothing', async () => {
    const key = { idempotencyKey: `reap-${newRunId()}`, caller: 'ci' };
    const original = spec('reap-owned');
    const owner = admitPayload(original, { input: { spec: original, ...key } });
    const { runId } = await admit(h.runtime.deps, owner);
    const before = await viewOf(h, runId);
    const requests = markRequests(h);

    const rejected = newRunId(); // the second execution's name; its input names the same run through the key
    const result = await reap(h.runtime.deps, ended('FAILED', rejected, { spec: spec('reap-edited'), ...key }, { error: 'RunConflict' }));

    expect(result).toEqual({ kind: 'ignored', why: expect.stringMatching(/belongs to another execution/) });
    expect(await viewOf(h, runId)).toEqual(before);
    expect(before.run.executionArn).toBe(owner.execution);
    expect(requests.since()).toEqual([]);
    expect(receiver.deliveries).toBe(0);
  });

  it('creates and adopts a run Admit never created (a hard stop right after the start); a late Admit is then a duplicate', async () => {
    const runId = newRunId();
    const s = spec('reap-uncreated');
    const event = ended('TIMED_OUT', runId, localInput(s));

    // Another execution with the same input could still be in Admit: the reaper waits until none can be.
    await expect(reap(h.runtime.deps, event)).rejects.toMatchObject({ name: 'StageBusy', retryable: true });
    expect((await viewOf(h, runId)).run.executionArn).toBeUndefined();
    h.clock.advance(ADMIT_GAVE_UP_MS);
    const result = await reap(h.runtime.deps, event);

    expect(result).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.TIMED_OUT });
    const view = await viewOf(h, runId);
    expect(view.run).toMatchObject({ executionArn: event.executionArn, outcome: Outcome.TIMED_OUT, spec: { name: 'reap-uncreated' } });
    expect(view.stages.Admit).toBeUndefined();
    for (const stage of FINISHING) expect(view.stages[stage]?.state, stage).toBe(StageState.completed);
    expect(receiver.deliveries).toBe(1);

    const requests = markRequests(h);
    expect(await admit(h.runtime.deps, admitPayload(s, { runId, execution: event.executionArn }))).toEqual({ runId, duplicate: true, queued: false });
    expect(await viewOf(h, runId)).toEqual(view);
    expect(requests.since()).toEqual([]);
  });

  it('takes over an unadopted run only from 515.9375 s after its creation: at 515.937 s Admit may still adopt it', async () => {
    const s = spec('reap-admit-boundary');
    const runId = await createdOnly(h, s);
    const event = ended('FAILED', runId, localInput(s), { error: 'States.TaskFailed', cause: 'boom' });
    h.clock.advance(ADMIT_GAVE_UP_MS - 1);
    await expect(reap(h.runtime.deps, event)).rejects.toMatchObject({ name: 'StageBusy', retryable: true });
    expect((await viewOf(h, runId)).run.executionArn).toBeUndefined();
    h.clock.advance(1);
    expect(await reap(h.runtime.deps, event)).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.FAILED });
  });

  it('never takes over a run of another spec: an execution whose Admit met a RunConflict leaves the unadopted run to its own execution', async () => {
    const s = spec('reap-owner');
    const runId = await createdOnly(h, s);
    h.clock.advance(ADMIT_GAVE_UP_MS);
    const edited = { ...spec('reap-owner'), parallelism: 3 };
    const result = await reap(h.runtime.deps, ended('FAILED', runId, localInput(edited), { error: 'RunConflict' }));
    expect(result).toMatchObject({ kind: 'ignored', why: expect.stringMatching(/RunConflict/) });
    const view = await viewOf(h, runId);
    expect(view.run.executionArn).toBeUndefined();
    expect(view.run.outcome).toBeUndefined();
    expect(receiver.deliveries).toBe(0);
  });

  it('adopts a run that was created but never adopted, and finishes it FAILED with the execution’s error', async () => {
    const s = spec('reap-unadopted');
    const runId = await createdOnly(h, s);
    expect((await viewOf(h, runId)).run.executionArn).toBeUndefined();

    const event = ended('FAILED', runId, localInput(s), { error: 'States.TaskFailed', cause: 'boom' });
    await expect(reap(h.runtime.deps, event)).rejects.toMatchObject({ name: 'StageBusy' });
    h.clock.advance(ADMIT_GAVE_UP_MS);
    const result = await reap(h.runtime.deps, event);

    expect(result).toMatchObject({ kind: 'reaped', runId, outcome: Outcome.FAILED, reason: 'the execution failed (States.TaskFailed: boom)' });
    expect((await viewOf(h, runId)).run).toMatchObject({ executionArn: executionArnFor(runId), outcome: Outcome.FAILED });
  });

  it.each([
    ['an execution that succeeded', (runId: string) => ended('SUCCEEDED', runId, localInput(spec('ok'))), /status SUCCEEDED needs no reaping/],
    ['an input that is not JSON', (runId: string) => ({ ...ended('FAILED', runId, null), input: '{not json' }), /not JSON/],
    ['an input that is no run input', (runId: string) => ended('FAILED', runId, { hello: 'world' }), /not a run input/],
    ['an API run that was never created', (runId: string) => ended('FAILED', runId, { runId }), /was never created/],
    [
      'a spec Admit rejected',
      (runId: string) => ended('FAILED', runId, localInput(k6Spec({ name: 'huge', parallelism: 10_000 }))),
      /Admit rejected its input: SpecInvalid/,
    ],
  ])('ignores %s, creating nothing', async (_label, event, why) => {
    const runId = newRunId();
    const requests = markRequests(h);
    expect(await reap(h.runtime.deps, event(runId))).toEqual({ kind: 'ignored', why: expect.stringMatching(why) });
    expect(await h.runtime.ledger.getRun(runId)).toBeUndefined();
    expect(requests.since()).toEqual([]);
    expect(receiver.deliveries).toBe(0);
  });
});
