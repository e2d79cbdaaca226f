import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { StageBusy, StageOwnershipLost } from '../../lambdas/core/errors';
import { Stage } from '../../lambdas/core/status';
import { stageKey } from '../../lambdas/ledger/keys';
import { callerOf, holderFor, leaseOwner } from '../../lambdas/ledger/stages';
import { MAX_ATTEMPTS } from '../../lambdas/ledger/store';
import { describeOnLedgerBackends, type LedgerTable } from '../support/dynamo-backends';
import { RACERS, countBy, errorNames, ledgerInterleaved, ledgerOn, newRunId, race, testClock, type TestClock } from './fixtures';

const LEASE_MS = 30_000;

/** beginStage's own writes, told apart by their update: the begin itself, and a re-entering owner's renewal. */
const BEGIN_WRITE = /^SET #runId = :runId/;
const RENEW_WRITE = 'SET #leaseUntil = :lease';

/**
 * A ledger whose re-entering `owner` meets another writer `steals` times: before each of its renewals
 * the stage's owner becomes `thief`, and before its next begin it is `owner`'s again (live, in
 * progress), so the begin fails on a live lease that is its own and the renewal fails its fence. Each
 * round is one of beginStage's attempts that the item read back does not explain. Counts the writes.
 */
function ledgerRenewalsStolen(table: LedgerTable, clock: TestClock, runId: string, stage: Stage, owner: string, steals: number) {
  const writes = { begins: 0, renewals: 0 };
  const setOwner = (to: string) =>
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: stageKey(runId, stage),
        UpdateExpression: 'SET #owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': to },
      }),
    );
  const ledger = ledgerInterleaved(table, clock, {
    update: async (input) => {
      if (BEGIN_WRITE.test(input.UpdateExpression ?? '')) {
        writes.begins++;
        if (writes.begins > 1 && writes.renewals <= steals) await setOwner(owner);
      } else if (input.UpdateExpression === RENEW_WRITE) {
        writes.renewals++;
        if (writes.renewals <= steals) await setOwner('thief');
      }
    },
  });
  return { ledger, writes };
}

describe('owners: the caller named in an owner, and whose a lease is seen by a caller', () => {
  const arn = 'arn:aws:states:local:0:execution:loadplane-run:a';
  it.each([
    // [caller, attempt id, owner written, caller read back]
    [arn, 'req-1', `${arn} | req-1`, arn],
    [undefined, 'req-1', 'req-1', undefined],
    ['', 'req-1', 'req-1', undefined],
  ] as const)('leaseOwner(%j, %j) is %j; callerOf it is %j', (caller, attempt, owner, back) => {
    expect(leaseOwner(caller, attempt)).toBe(owner);
    expect(callerOf(owner)).toBe(back);
  });

  it.each([
    [undefined, undefined],
    ['req-1', undefined],
    // The separator at the very start names no caller: an empty one is none.
    [' | req-1', undefined],
    // One character before it is a caller.
    ['a | req-1', 'a'],
    // The last separator ends the caller (an attempt id never has one; a caller's own would be kept whole).
    ['x | y | req-1', 'x | y'],
    ['a |req-1', undefined],
  ] as const)('callerOf(%j) is %j', (owner, caller) => {
    expect(callerOf(owner)).toBe(caller);
  });

  it.each([
    [arn, arn, 'own'],
    [arn, 'arn:other', 'other'],
    [undefined, arn, 'unknown'],
    [arn, undefined, 'unknown'],
    [undefined, undefined, 'unknown'],
  ] as const)('holderFor(%j, %j) is %j', (caller, holder, expected) => {
    expect(holderFor(caller, holder)).toBe(expected);
  });
});

describeOnLedgerBackends((table, backend) => {
  it('begin → complete records owner, lease, attempt, times and output; a later begin returns the output', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    expect(await ledger.beginStage(runId, Stage.Prepare, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: [] });
    clock.advance(5_000);
    const completed = await ledger.completeStage(runId, Stage.Prepare, 'owner-a', { configMap: 'lp-x-script' });
    expect(completed.kind).toBe('completed');
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
    const again = await ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 3 });
    expect(again.kind).toBe('completed');
    expect(again.stage.output).toEqual({ jobs: 2 });
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
    for (const call of [
      () => ledger.failStage(runId, Stage.Start, 'owner-a', { name: 'X', message: 'y' }),
      () => ledger.markStage(runId, Stage.Start, 'owner-a', 'setup:sent'),
    ]) {
      const lost = await call().catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.current).toBeUndefined();
    }
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
    // A stale owner (or any other) cannot record a step; the error shows whose the attempt is.
    const lost = await ledger.markStage(runId, Stage.Start, 'owner-x', 'setup:done').catch((e) => e);
    expect(lost).toBeInstanceOf(StageOwnershipLost);
    expect(lost.current).toMatchObject({ owner: 'owner-a', state: 'in_progress', marks: ['setup:sent'] });
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

  it(`a re-entering owner whose renewal is fenced out retries up to MAX_ATTEMPTS (${MAX_ATTEMPTS}) times: the last allowed attempt renews`, async () => {
    const clock = testClock();
    const runId = newRunId();
    await ledgerOn(table(), clock).beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS);
    clock.advance(1_000);
    const { ledger, writes } = ledgerRenewalsStolen(table(), clock, runId, Stage.Watch, 'owner-a', MAX_ATTEMPTS - 1);
    expect(await ledger.beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: [] });
    expect(writes).toEqual({ begins: 3, renewals: 3 });
    // The renewal that got through set the lease from the re-entry's time.
    const after = await ledgerOn(table(), clock).completeStage(runId, Stage.Watch, 'owner-a', { ok: true });
    expect(after.stage.leaseUntil).toBe(Date.parse('2026-03-15T12:00:01.000Z') + LEASE_MS);
  });

  it(`one stolen renewal more than MAX_ATTEMPTS allows → StageBusy after exactly ${MAX_ATTEMPTS} attempts, naming the item last read`, async () => {
    const clock = testClock();
    const runId = newRunId();
    const execution = 'arn:aws:states:local:0:execution:loadplane-run:a';
    const owner = leaseOwner(execution, 'attempt-1');
    await ledgerOn(table(), clock).beginStage(runId, Stage.Watch, owner, LEASE_MS);
    clock.advance(4_000);
    const { ledger, writes } = ledgerRenewalsStolen(table(), clock, runId, Stage.Watch, owner, MAX_ATTEMPTS);
    const busy = await ledger.beginStage(runId, Stage.Watch, owner, LEASE_MS).catch((e) => e);
    expect(writes).toEqual({ begins: 3, renewals: 3 });
    expect(busy).toBeInstanceOf(StageBusy);
    expect(busy.current).toMatchObject({ owner, state: 'in_progress', attempts: 1, leaseUntil: Date.parse('2026-03-15T12:00:00.000Z') + LEASE_MS });
    // The lease read last was begun at 12:00:00 for 30 s; it is 12:00:04: 26 s left.
    expect(busy.detail).toEqual({ holder: 'own', leaseLeftMs: 26_000 });
    expect(busy.message).toBe(
      `stage Watch of run ${runId} is still held by an earlier attempt of this execution (it crashed, timed out or is still finishing); its lease expires in 26 s, then a retry takes over`,
    );
  });

  // dynalite returns no item with a failed condition: the ledger reads it back (store.ts), and what it
  // reads may be later than what the condition met. Each case changes the item just before that read.
  describe.runIf(backend === 'dynalite')('a read-back later than the failed condition (dynalite)', () => {
    const deleteItem = (runId: string) => table().client.send(new DeleteCommand({ TableName: table().tableName, Key: stageKey(runId, Stage.Watch) }));
    async function beginAfter(runId: string, before: { read: (reads: number) => Promise<unknown>; begin?: (begins: number) => Promise<unknown> }) {
      const clock = testClock();
      const writes = { begins: 0, reads: 0 };
      const ledger = ledgerInterleaved(table(), clock, {
        update: async (input) => {
          if (BEGIN_WRITE.test(input.UpdateExpression ?? '') && ++writes.begins > 1) await before.begin?.(writes.begins);
        },
        read: async () => {
          await before.read(++writes.reads);
        },
      });
      const result = await ledger.beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS).catch((e) => e);
      return { result, writes };
    }

    it('the holder failed in between: the read shows a failed stage, and the next attempt begins it as a retry', async () => {
      const runId = newRunId();
      const x = ledgerOn(table());
      await x.beginStage(runId, Stage.Watch, 'owner-x', LEASE_MS);
      const { result, writes } = await beginAfter(runId, { read: () => x.failStage(runId, Stage.Watch, 'owner-x', { name: 'Crashed', message: 'oom' }) });
      expect(result).toEqual({ kind: 'begun', attempt: 2, tookOver: false, marks: [], previousError: { name: 'Crashed', message: 'oom' } });
      expect(writes).toEqual({ begins: 2, reads: 1 });
    });

    it('the item expired (TTL) in between: the read finds none, and the next attempt begins afresh', async () => {
      const runId = newRunId();
      await ledgerOn(table()).beginStage(runId, Stage.Watch, 'owner-x', LEASE_MS);
      const { result, writes } = await beginAfter(runId, { read: () => deleteItem(runId) });
      expect(result).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: [] });
      expect(writes).toEqual({ begins: 2, reads: 1 });
    });

    it('a caller whose clock is behind began in between: its lease, expired by ours, is taken over on the next attempt', async () => {
      const runId = newRunId();
      const x = ledgerOn(table());
      // 1 s behind the others, with a 500 ms lease: it ends 500 ms before owner-a's now.
      const behind = testClock('2026-03-15T11:59:59.000Z');
      await x.beginStage(runId, Stage.Watch, 'owner-x', LEASE_MS);
      const { result, writes } = await beginAfter(runId, {
        read: async () => {
          await x.failStage(runId, Stage.Watch, 'owner-x', { name: 'Crashed', message: 'oom' });
          await ledgerOn(table(), behind).beginStage(runId, Stage.Watch, 'owner-z', 500);
        },
      });
      expect(result).toEqual({ kind: 'begun', attempt: 3, tookOver: true, marks: [] });
      expect(writes).toEqual({ begins: 2, reads: 1 });
    });

    it(`no read finds the item, ${MAX_ATTEMPTS} times: StageBusy naming no holder and no item`, async () => {
      const runId = newRunId();
      const x = ledgerOn(table());
      await x.beginStage(runId, Stage.Watch, 'owner-x', LEASE_MS);
      const { result, writes } = await beginAfter(runId, { read: () => deleteItem(runId), begin: () => x.beginStage(runId, Stage.Watch, 'owner-x', LEASE_MS) });
      expect(writes).toEqual({ begins: 3, reads: 3 });
      expect(result).toBeInstanceOf(StageBusy);
      expect(result.current).toBeUndefined();
      expect(result.detail).toBeUndefined();
      expect(result.message).toBe(`stage Watch of run ${runId} is in progress under another owner`);
    });
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

  it.each([
    [LEASE_MS - 1, 'busy'],
    [LEASE_MS, 'busy'],
    [LEASE_MS + 1, 'taken over'],
  ] as const)('another owner %i ms after a %i ms lease began: %s, with one write', async (after, expected) => {
    const clock = testClock();
    const runId = newRunId();
    await ledgerOn(table(), clock).beginStage(runId, Stage.Watch, 'owner-a', LEASE_MS);
    clock.advance(after);
    const { ledger, writes } = ledgerRenewalsStolen(table(), clock, runId, Stage.Watch, 'owner-a', 0);
    const result = await ledger.beginStage(runId, Stage.Watch, 'owner-b', LEASE_MS).catch((e) => e);
    expect(writes).toEqual({ begins: 1, renewals: 0 });
    if (expected === 'taken over') expect(result).toEqual({ kind: 'begun', attempt: 2, tookOver: true, marks: [] });
    else {
      expect(result).toBeInstanceOf(StageBusy);
      expect(result.detail).toEqual({ holder: 'unknown', leaseLeftMs: LEASE_MS - after });
    }
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

  it('fencing after a failure: only the owner that failed may fail again; another owner → StageOwnershipLost naming the failed item', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Launch, 'owner-a', LEASE_MS);
    await ledger.failStage(runId, Stage.Launch, 'owner-a', { name: 'ClusterUnavailable', message: '503' });

    for (const call of [
      () => ledger.failStage(runId, Stage.Launch, 'owner-b', { name: 'Late', message: 'late' }),
      () => ledger.completeStage(runId, Stage.Launch, 'owner-b', { jobs: 1 }),
      // A failed stage is no one's to complete, not even the owner that failed it.
      () => ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 1 }),
    ]) {
      const lost = await call().catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.message).toBe(`stage Launch of run ${runId} is no longer owned by this caller (lease taken over)`);
      expect(lost.current).toMatchObject({ owner: 'owner-a', state: 'failed', error: { name: 'ClusterUnavailable', message: '503' } });
    }
  });

  it('fencing after a completion: the owner that completed cannot fail it, nor can another', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Launch, 'owner-a', LEASE_MS);
    await ledger.completeStage(runId, Stage.Launch, 'owner-a', { jobs: 2 });
    for (const owner of ['owner-a', 'owner-b']) {
      const lost = await ledger.failStage(runId, Stage.Launch, owner, { name: 'Late', message: 'late' }).catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.current).toMatchObject({ owner: 'owner-a', state: 'completed', output: { jobs: 2 } });
    }
  });

  it('an expired lease taken over by its own former owner is a new attempt', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.AwaitReady, 'owner-a', LEASE_MS);
    clock.advance(LEASE_MS + 1);
    expect(await ledger.beginStage(runId, Stage.AwaitReady, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 2, tookOver: true, marks: [] });
  });

  it('a failure that says which deliveries are unknown records it, and the retry learns it', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Notify, 'owner-a', LEASE_MS);
    const error = { name: 'NotificationNotDelivered', message: 'slack: delivery unknown (timeout)', deliveryUnknown: { slack: 'timeout' } };
    expect((await ledger.failStage(runId, Stage.Notify, 'owner-a', error)).stage.error).toEqual(error);
    expect(await ledger.beginStage(runId, Stage.Notify, 'owner-b', LEASE_MS)).toEqual({
      kind: 'begun',
      attempt: 2,
      tookOver: false,
      marks: [],
      previousError: error,
    });
  });

  it('the same owner re-entering keeps the steps it recorded', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Start, 'owner-a', LEASE_MS);
    await ledger.markStage(runId, Stage.Start, 'owner-a', 'setup:sent');
    expect(await ledger.beginStage(runId, Stage.Start, 'owner-a', LEASE_MS)).toEqual({ kind: 'begun', attempt: 1, tookOver: false, marks: ['setup:sent'] });
  });

  it('a failed stage records the error and is retried by the next begin as a new attempt', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Prepare, 'owner-a', LEASE_MS);
    clock.advance(1_000);
    const failed = await ledger.failStage(runId, Stage.Prepare, 'owner-a', { name: 'ClusterUnavailable', message: '503' });
    expect(failed.kind).toBe('failed');
    expect(failed.stage).toMatchObject({ state: 'failed', error: { name: 'ClusterUnavailable', message: '503' }, endedAt: '2026-03-15T12:00:01.000Z' });
    const again = await ledger.failStage(runId, Stage.Prepare, 'owner-a', { name: 'Again', message: 'again' });
    expect(again.kind).toBe('failed');
    expect(again.stage.error?.name).toBe('ClusterUnavailable');

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
