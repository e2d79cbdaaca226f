import { expect, it } from 'vitest';
import { StageBusy, StageOwnershipLost } from '../../lambdas/core/errors';
import { Stage } from '../../lambdas/core/status';
import { leaseOwner } from '../../lambdas/ledger/stages';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { RACERS, countBy, errorNames, ledgerOn, newRunId, race, testClock } from './fixtures';

const LEASE_MS = 30_000;

describeOnLedgerBackends((table) => {
  it('begin → complete records owner, lease, attempt, times and output; a later begin returns the output', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    expect(await ledger.beginStage(runId, Stage.Prepare, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: [] });
    clock.advance(5_000);
    const completed = await ledger.completeStage(runId, Stage.Prepare, 'owner-a', { configMap: 'lp-x-script' });
    expect(completed.stage).toMatchObject({
      runId,
      stage: Stage.Prepare,
      state: 'completed',
      owner: 'owner-a',
      attempts: 1,
      leaseUntil: Date.parse('2026-03-15T12:00:00.000Z') + LEASE_MS,
      startedAt: '2026-03-15T12:00:00.000Z',
      endedAt: '2026-03-15T12:00:05.000Z',
      output: { configMap: 'lp-x-script' },
    });
    expect(await ledger.beginStage(runId, Stage.Prepare, 'owner-b', LEASE_MS)).toEqual({
      kind: 'completed',
      output: { configMap: 'lp-x-script' },
    });
  });

  it('completing again by the same owner is idempotent and keeps the first output; by another owner → StageOwnershipLost', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Launch, 'owner-a', LEASE_MS);
    await ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 2 });
    expect((await ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 3 })).stage.output).toEqual({ jobs: 2 });
    const error = await ledger.completeStage(runId, Stage.Launch, 'owner-b', { jobs: 3 }).catch((e) => e);
    expect(error).toBeInstanceOf(StageOwnershipLost);
    expect(error.current).toMatchObject({ owner: 'owner-a', state: 'completed' });
  });

  it('a stage without output completes with output null', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Cleanup, 'owner-a', LEASE_MS);
    expect((await ledger.completeStage(runId, Stage.Cleanup, 'owner-a', undefined)).stage.output).toBeNull();
    expect(await ledger.beginStage(runId, Stage.Cleanup, 'owner-b', LEASE_MS)).toEqual({ kind: 'completed', output: null });
  });

  it('completing or failing a stage nobody began → StageOwnershipLost with no current item', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const complete = await ledger.completeStage(runId, Stage.Start, 'owner-a', {}).catch((e) => e);
    expect(complete).toBeInstanceOf(StageOwnershipLost);
    expect(complete.current).toBeUndefined();
    await expect(ledger.failStage(runId, Stage.Start, 'owner-a', { name: 'X', message: 'y' })).rejects.toBeInstanceOf(StageOwnershipLost);
  });

  it('marks: a step recorded by one attempt is handed to the next (after a failure or a takeover), removed ones are not; only the live owner may mark', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Start, 'owner-a', LEASE_MS);
    await ledger.markStage(runId, Stage.Start, 'owner-a', 'setup:sent');
    await ledger.markStage(runId, Stage.Start, 'owner-a', 'setup:sent');
    await ledger.markStage(runId, Stage.Start, 'owner-a', 'other');
    await ledger.markStage(runId, Stage.Start, 'owner-a', 'other', false);
    // A stale owner (or any other) cannot record a step.
    await expect(ledger.markStage(runId, Stage.Start, 'owner-x', 'setup:done')).rejects.toBeInstanceOf(StageOwnershipLost);
    await ledger.failStage(runId, Stage.Start, 'owner-a', { name: 'ClusterUnavailable', message: 'cut off' });

    const retry = await ledger.beginStage(runId, Stage.Start, 'owner-b', LEASE_MS);
    expect(retry).toMatchObject({ kind: 'begun', attempt: 2, marks: ['setup:sent'] });
    await ledger.markStage(runId, Stage.Start, 'owner-b', 'setup:done');
    // owner-b dies holding the lease; the takeover sees both steps.
    clock.advance(LEASE_MS + 1);
    expect(await ledger.beginStage(runId, Stage.Start, 'owner-c', LEASE_MS)).toEqual({
      kind: 'begun',
      attempt: 3,
      tookOver: true,
      marks: ['setup:done', 'setup:sent'],
    });
    // The item as read back (what a later stage sees in the run's view) carries them too.
    expect((await ledger.completeStage(runId, Stage.Start, 'owner-c', { ok: true })).stage.marks).toEqual(['setup:done', 'setup:sent']);
    await expect(ledger.markStage(runId, Stage.Start, 'owner-c', 'late')).rejects.toBeInstanceOf(StageOwnershipLost);
  });

  it('a live lease: another owner gets StageBusy carrying the holder; the same owner re-enters with the same attempt and a renewed lease', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS);
    const busy = await ledger.beginStage(runId, Stage.Watch, 'owner-b', LEASE_MS).catch((e) => e);
    expect(busy).toBeInstanceOf(StageBusy);
    expect(busy).toMatchObject({ runId, stage: Stage.Watch, retryable: true, current: { owner: 'owner-a', state: 'in_progress' } });

    clock.advance(LEASE_MS - 1);
    expect(await ledger.beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: [] });
    clock.advance(LEASE_MS - 1);
    // Still live only because the re-entry renewed it.
    await expect(ledger.beginStage(runId, Stage.Watch, 'owner-b', LEASE_MS)).rejects.toBeInstanceOf(StageBusy);
  });

  it('StageBusy says whose the lease is: an earlier attempt of the same caller, another caller, or unknown; and the time left', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const execution = 'arn:aws:states:local:0:execution:loadplane-run:a';
    await ledger.beginStage(runId, Stage.Cleanup, leaseOwner(execution, 'attempt-1'), LEASE_MS);
    clock.advance(2_000);

    const own = await ledger.beginStage(runId, Stage.Cleanup, leaseOwner(execution, 'attempt-2'), LEASE_MS).catch((e) => e);
    expect(own).toBeInstanceOf(StageBusy);
    expect(own.detail).toEqual({ holder: 'own', leaseLeftMs: LEASE_MS - 2_000 });
    expect(own.message).toBe(
      `stage Cleanup of run ${runId} is still held by an earlier attempt of this execution (it crashed, timed out or is still finishing); its lease expires in ${(LEASE_MS - 2_000) / 1000} s, then a retry takes over`,
    );
    expect(own.message).not.toMatch(/another/);

    const other = await ledger.beginStage(runId, Stage.Cleanup, leaseOwner('arn:aws:states:local:0:execution:loadplane-run:b', 'x'), LEASE_MS).catch((e) => e);
    expect(other.detail).toMatchObject({ holder: 'other' });
    expect(other.message).toMatch(/is in progress under another caller; its lease expires in \d+ s$/);

    const unknown = await ledger.beginStage(runId, Stage.Cleanup, 'owner-without-caller', LEASE_MS).catch((e) => e);
    expect(unknown.detail).toMatchObject({ holder: 'unknown' });
  });

  it('a stale owner completing after a takeover is rejected (fencing); the new owner completes', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Launch, 'owner-a', LEASE_MS);
    clock.advance(LEASE_MS + 1);
    expect(await ledger.beginStage(runId, Stage.Launch, 'owner-b', LEASE_MS)).toEqual({ kind: 'begun', attempt: 2, tookOver: true, marks: [] });

    const stale = await ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 1 }).catch((e) => e);
    expect(stale).toBeInstanceOf(StageOwnershipLost);
    expect(stale.current).toMatchObject({ owner: 'owner-b', state: 'in_progress', attempts: 2 });
    await expect(ledger.failStage(runId, Stage.Launch, 'owner-a', { name: 'Late', message: 'late' })).rejects.toBeInstanceOf(StageOwnershipLost);

    expect((await ledger.completeStage(runId, Stage.Launch, 'owner-b', { jobs: 2 })).stage).toMatchObject({ owner: 'owner-b', output: { jobs: 2 } });
  });

  it('an expired lease taken over by its own former owner is a new attempt', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.AwaitReady, 'owner-a', LEASE_MS);
    clock.advance(LEASE_MS + 1);
    expect(await ledger.beginStage(runId, Stage.AwaitReady, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 2, tookOver: true, marks: [] });
  });

  it('a failed stage records the error and is retried by the next begin as a new attempt', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Prepare, 'owner-a', LEASE_MS);
    clock.advance(1_000);
    const failed = await ledger.failStage(runId, Stage.Prepare, 'owner-a', { name: 'ClusterUnavailable', message: '503' });
    expect(failed.stage).toMatchObject({ state: 'failed', error: { name: 'ClusterUnavailable', message: '503' }, endedAt: '2026-03-15T12:00:01.000Z' });
    expect((await ledger.failStage(runId, Stage.Prepare, 'owner-a', { name: 'Again', message: 'again' })).stage.error?.name).toBe('ClusterUnavailable');

    // The retry learns what the previous attempt failed with (a busy retry explains its wait with it).
    expect(await ledger.beginStage(runId, Stage.Prepare, 'owner-b', LEASE_MS)).toEqual({
      kind: 'begun',
      attempt: 2,
      tookOver: false,
      marks: [],
      previousError: { name: 'ClusterUnavailable', message: '503' },
    });
    const retried = (await ledger.completeStage(runId, Stage.Prepare, 'owner-b', { ok: true })).stage;
    expect(retried).toMatchObject({ state: 'completed', attempts: 2, startedAt: '2026-03-15T12:00:01.000Z' });
    expect(retried).not.toHaveProperty('error');
  });

  it(`beginStage race: ${RACERS} owners → exactly 1 begun, ${RACERS - 1} StageBusy`, async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const { values, errors } = await race((i) => ledger.beginStage(runId, Stage.Start, `owner-${i}`, LEASE_MS));
    expect(countBy(values, (v) => v.kind)).toEqual({ begun: 1 });
    expect(errorNames(errors)).toEqual({ StageBusy: RACERS - 1 });
    const holder = (errors[0] as StageBusy).current as { owner: string };
    for (const e of errors) expect((e as StageBusy).current).toMatchObject({ owner: holder.owner });
  });

  it(`takeover race: ${RACERS} owners on an expired lease → exactly 1 takes over`, async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Collect, 'crashed', LEASE_MS);
    clock.advance(LEASE_MS + 1);
    const { values, errors } = await race((i) => ledger.beginStage(runId, Stage.Collect, `owner-${i}`, LEASE_MS));
    expect(values).toEqual([{ kind: 'begun', attempt: 2, tookOver: true, marks: [] }]);
    expect(errorNames(errors)).toEqual({ StageBusy: RACERS - 1 });
  });
});
