import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { NotificationInProgress, StageOwnershipLost, TransientStoreError } from '../../lambdas/core/errors';
import { NotifyPolicy, NotifyWhen, Outcome } from '../../lambdas/core/status';
import { notificationKey } from '../../lambdas/ledger/keys';
import { MAX_ATTEMPTS } from '../../lambdas/ledger/store';
import { describeOnLedgerBackends, type LedgerTable } from '../support/dynamo-backends';
import { RACERS, countBy, errorNames, ledgerInterleaved, ledgerOn, newRunId, race, testClock, type TestClock } from './fixtures';

const LEASE_MS = 10_000;
const atMostOnce = { leaseMs: LEASE_MS, policy: NotifyPolicy.atMostOnce, outcome: Outcome.SUCCEEDED };
const atLeastOnce = { ...atMostOnce, policy: NotifyPolicy.atLeastOnce };

/** claimNotification's writes, told apart by their update: the claim, and the takeover of an expired claim (give up, resend). */
const CLAIM_WRITE = /^SET #runId = :runId, #channel/;
const TAKEOVER_WRITE = /^SET #state = :unknown|^SET #token = :token/;

/**
 * A ledger whose claims of an expired claim meet another writer `swaps` times: before each of its
 * takeovers (give up or resend) the claim's token changes (still claimed, still expired), so the
 * takeover's fence on the token it read fails. Each round is one of the claim's attempts. Counts the writes.
 */
function ledgerTakeoversRaced(table: LedgerTable, clock: TestClock, runId: string, channel: string, swaps: number) {
  const writes = { claims: 0, takeovers: 0 };
  const ledger = ledgerInterleaved(table, clock, {
    update: async (input) => {
      if (CLAIM_WRITE.test(input.UpdateExpression ?? '')) writes.claims++;
      else if (TAKEOVER_WRITE.test(input.UpdateExpression ?? '') && ++writes.takeovers <= swaps) {
        await table.client.send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: notificationKey(runId, channel),
            UpdateExpression: 'SET #token = :token',
            ExpressionAttributeNames: { '#token': 'token' },
            ExpressionAttributeValues: { ':token': `swapped-${writes.takeovers}` },
          }),
        );
      }
    },
  });
  return { ledger, writes };
}

const lostMessage = (runId: string, channel: string) => `stage notify#${channel} of run ${runId} is no longer owned by this caller (lease taken over)`;

describeOnLedgerBackends((table, backend) => {
  it('claim → mark sent: the claim carries a token and the dedupe key; after it, claims answer sent (do not send)', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const claim = await ledger.claimNotification(runId, 'slack', atMostOnce);
    expect(claim).toMatchObject({ kind: 'claimed', dedupeKey: `${runId}:SUCCEEDED`, resend: false });
    if (claim.kind !== 'claimed') throw new Error('unreachable');

    clock.advance(500);
    const sent = await ledger.markNotificationSent(runId, 'slack', claim.token, { status: 200 });
    expect(sent.kind).toBe('sent');
    expect(sent.item).toMatchObject({ state: 'sent', token: claim.token, response: { status: 200 }, sentAt: '2026-03-15T12:00:00.500Z', claims: 1 });
    expect((await ledger.markNotificationSent(runId, 'slack', claim.token, { status: 200 })).kind).toBe('sent');

    for (const options of [atMostOnce, atLeastOnce]) {
      expect(await ledger.claimNotification(runId, 'slack', options)).toMatchObject({ kind: 'sent', item: { state: 'sent' } });
    }
    clock.advance(LEASE_MS * 10);
    expect((await ledger.claimNotification(runId, 'slack', atLeastOnce)).kind).toBe('sent');
  });

  it('channels are independent entries', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    expect((await ledger.claimNotification(runId, 'slack', atMostOnce)).kind).toBe('claimed');
    expect((await ledger.claimNotification(runId, 'webhook', atMostOnce)).kind).toBe('claimed');
  });

  it('a live claim → NotificationInProgress carrying the claim', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const first = await ledger.claimNotification(runId, 'slack', atMostOnce);
    clock.advance(LEASE_MS - 1);
    const error = await ledger.claimNotification(runId, 'slack', atMostOnce).catch((e) => e);
    expect(error).toBeInstanceOf(NotificationInProgress);
    expect(error).toMatchObject({ runId, channel: 'slack', retryable: true, current: { state: 'claimed', token: (first as { token: string }).token } });
  });

  it('a live claim says whose it is (the claim records its holder) and how long it has left', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const execution = 'arn:aws:states:local:0:execution:loadplane-run:a';
    await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, holder: execution });
    clock.advance(3_000);

    const own = await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, holder: execution }).catch((e) => e);
    expect(own).toBeInstanceOf(NotificationInProgress);
    expect(own.detail).toEqual({ holder: 'own', leaseLeftMs: LEASE_MS - 3_000 });
    // Its own earlier attempt: never "being sent by another caller".
    expect(own.message).toBe(
      'webhook: an earlier attempt of this execution claimed the notification and recorded no result (it crashed, timed out or is still sending), ' +
        'so delivery is unknown; waiting 7 s for the claim to expire before deciding whether to send again',
    );

    const other = await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, holder: 'arn:other' }).catch((e) => e);
    expect(other.detail).toMatchObject({ holder: 'other' });
    expect(other.message).toBe(`notification webhook of run ${runId} is being sent by another caller; its claim expires in 7 s`);

    const unknown = await ledger.claimNotification(runId, 'webhook', atMostOnce).catch((e) => e);
    expect(unknown.detail).toMatchObject({ holder: 'unknown' });
  });

  it('release after a definite non-delivery lets the next claim send, with the same dedupe key', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const first = await ledger.claimNotification(runId, 'webhook', atMostOnce);
    if (first.kind !== 'claimed') throw new Error('unreachable');
    const released = await ledger.releaseNotification(runId, 'webhook', first.token, 'HTTP 503');
    expect(released.kind).toBe('released');
    expect(released.item).toMatchObject({ state: 'released', releaseReason: 'HTTP 503' });
    const again = await ledger.releaseNotification(runId, 'webhook', first.token, 'again');
    expect(again.kind).toBe('released');
    expect(again.item.releaseReason).toBe('HTTP 503');

    const second = await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, outcome: Outcome.FAILED });
    expect(second).toMatchObject({ kind: 'claimed', dedupeKey: `${runId}:SUCCEEDED`, resend: false });
    if (second.kind !== 'claimed') throw new Error('unreachable');
    expect(second.token).not.toBe(first.token);

    // The released holder is fenced out of the new claim.
    await expect(ledger.markNotificationSent(runId, 'webhook', first.token, { status: 200 })).rejects.toBeInstanceOf(StageOwnershipLost);
    await expect(ledger.releaseNotification(runId, 'webhook', first.token, 'x')).rejects.toBeInstanceOf(StageOwnershipLost);
    const item = (await ledger.markNotificationSent(runId, 'webhook', second.token, { status: 204 })).item;
    expect(item).toMatchObject({ state: 'sent', claims: 2 });
    expect(item).not.toHaveProperty('releaseReason');
  });

  it('a wrong token cannot mark or release (StageOwnershipLost naming notify#<channel>)', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.claimNotification(runId, 'slack', atMostOnce);
    const error = await ledger.markNotificationSent(runId, 'slack', 'not-my-token', { status: 200 }).catch((e) => e);
    expect(error).toBeInstanceOf(StageOwnershipLost);
    expect(error).toMatchObject({ stage: 'notify#slack', current: { state: 'claimed' } });
    await expect(ledger.releaseNotification(runId, 'slack', 'not-my-token', 'x')).rejects.toBeInstanceOf(StageOwnershipLost);
  });

  it('fencing after the end: once sent, a wrong token cannot mark it (nor release it); once released, a wrong token cannot release it, and the right one cannot mark it', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const sent = await ledger.claimNotification(runId, 'slack', atMostOnce);
    if (sent.kind !== 'claimed') throw new Error('unreachable');
    await ledger.markNotificationSent(runId, 'slack', sent.token, { status: 200 });
    for (const call of [
      () => ledger.markNotificationSent(runId, 'slack', 'not-my-token', { status: 200 }),
      () => ledger.releaseNotification(runId, 'slack', 'not-my-token', 'x'),
      // Sent is final: not even its own claim gives it back.
      () => ledger.releaseNotification(runId, 'slack', sent.token, 'x'),
    ]) {
      const lost = await call().catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.message).toBe(lostMessage(runId, 'slack'));
      expect(lost.current).toMatchObject({ state: 'sent', token: sent.token, response: { status: 200 } });
    }

    const released = await ledger.claimNotification(runId, 'webhook', atMostOnce);
    if (released.kind !== 'claimed') throw new Error('unreachable');
    await ledger.releaseNotification(runId, 'webhook', released.token, 'HTTP 503');
    for (const call of [
      () => ledger.releaseNotification(runId, 'webhook', 'not-my-token', 'x'),
      () => ledger.markNotificationSent(runId, 'webhook', 'not-my-token', { status: 200 }),
      // A released claim was definitely not delivered: its own token cannot say it was.
      () => ledger.markNotificationSent(runId, 'webhook', released.token, { status: 200 }),
    ]) {
      const lost = await call().catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.message).toBe(lostMessage(runId, 'webhook'));
      expect(lost.current).toMatchObject({ state: 'released', token: released.token, releaseReason: 'HTTP 503' });
    }
  });

  it('marking or releasing a channel nobody claimed → StageOwnershipLost with no current entry', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    for (const call of [() => ledger.markNotificationSent(runId, 'slack', 't', { status: 200 }), () => ledger.releaseNotification(runId, 'slack', 't', 'x')]) {
      const lost = await call().catch((e) => e);
      expect(lost).toBeInstanceOf(StageOwnershipLost);
      expect(lost.message).toBe(lostMessage(runId, 'slack'));
      expect(lost.current).toBeUndefined();
    }
  });

  it("a claim without a holder does not keep an earlier claim's: the earlier holder meets it as unknown, not as its own", async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const execution = 'arn:aws:states:local:0:execution:loadplane-run:a';
    const first = await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, holder: execution });
    if (first.kind !== 'claimed') throw new Error('unreachable');
    await ledger.releaseNotification(runId, 'webhook', first.token, 'HTTP 503');
    // Claimed again after the release, by a caller that names no holder.
    expect((await ledger.claimNotification(runId, 'webhook', atMostOnce)).kind).toBe('claimed');
    clock.advance(4_000);
    const busy = await ledger.claimNotification(runId, 'webhook', { ...atMostOnce, holder: execution }).catch((e) => e);
    expect(busy).toBeInstanceOf(NotificationInProgress);
    expect(busy.detail).toEqual({ holder: 'unknown', leaseLeftMs: LEASE_MS - 4_000 });
    expect(busy.message).toBe(`notification webhook of run ${runId} is being sent by another owner; its claim expires in 6 s`);
  });

  it("an expired claim taken over for a resend records the new holder, or none: the earlier holder meets it as another's or unknown", async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const a = 'arn:aws:states:local:0:execution:loadplane-run:a';
    const b = 'arn:aws:states:local:0:execution:loadplane-run:b';
    for (const [resender, seenByA] of [
      [b, 'other'],
      [undefined, 'unknown'],
    ] as const) {
      const runId = newRunId();
      await ledger.claimNotification(runId, 'webhook', { ...atLeastOnce, holder: a });
      clock.advance(LEASE_MS + 1);
      expect(await ledger.claimNotification(runId, 'webhook', { ...atLeastOnce, ...(resender && { holder: resender }) })).toMatchObject({
        kind: 'claimed',
        resend: true,
      });
      const busy = await ledger.claimNotification(runId, 'webhook', { ...atLeastOnce, holder: a }).catch((e) => e);
      expect(busy).toBeInstanceOf(NotificationInProgress);
      expect(busy.detail).toEqual({ holder: seenByA, leaseLeftMs: LEASE_MS });
      if (resender) {
        const own = await ledger.claimNotification(runId, 'webhook', { ...atLeastOnce, holder: resender }).catch((e) => e);
        expect(own.detail).toEqual({ holder: 'own', leaseLeftMs: LEASE_MS });
      }
    }
  });

  it.each([
    [NotifyPolicy.atMostOnce, { kind: 'unknown' }],
    [NotifyPolicy.atLeastOnce, { kind: 'claimed', resend: true }],
  ] as const)(
    `an expired claim whose takeover (%s) is raced retries up to MAX_ATTEMPTS (${MAX_ATTEMPTS}) times: the last allowed attempt takes it over`,
    async (policy, expected) => {
      const clock = testClock();
      const runId = newRunId();
      await ledgerOn(table(), clock).claimNotification(runId, 'slack', { ...atMostOnce, policy });
      clock.advance(LEASE_MS + 1);
      const { ledger, writes } = ledgerTakeoversRaced(table(), clock, runId, 'slack', MAX_ATTEMPTS - 1);
      expect(await ledger.claimNotification(runId, 'slack', { ...atMostOnce, policy })).toMatchObject(expected);
      expect(writes).toEqual({ claims: 3, takeovers: 3 });
    },
  );

  it.each([NotifyPolicy.atMostOnce, NotifyPolicy.atLeastOnce])(
    `an expired claim whose takeover (%s) is raced once more than MAX_ATTEMPTS allows → NotificationInProgress after exactly ${MAX_ATTEMPTS} attempts, naming the claim last read`,
    async (policy) => {
      const clock = testClock();
      const runId = newRunId();
      await ledgerOn(table(), clock).claimNotification(runId, 'slack', { ...atMostOnce, policy });
      clock.advance(LEASE_MS + 1);
      const { ledger, writes } = ledgerTakeoversRaced(table(), clock, runId, 'slack', MAX_ATTEMPTS);
      const busy = await ledger.claimNotification(runId, 'slack', { ...atMostOnce, policy }).catch((e) => e);
      expect(writes).toEqual({ claims: 3, takeovers: 3 });
      expect(busy).toBeInstanceOf(NotificationInProgress);
      expect(busy.current).toMatchObject({ state: 'claimed', token: 'swapped-2', claims: 1 });
      // The claim read last expired 1 ms ago: no time left, never a negative one.
      expect(busy.detail).toEqual({ holder: 'unknown', leaseLeftMs: 0 });
      expect(busy.message).toBe(`notification slack of run ${runId} is being sent by another owner; its claim expires in 0 s`);
    },
  );

  it("recordSuppression: the first entry is a suppressed one with the claim's dedupe key and no claims; an entry already there stands as it is", async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const decision = { when: NotifyWhen.change, reason: 'superseded', supersededBy: 'later-run' };
    const recorded = await ledger.recordSuppression(runId, 'slack', { outcome: Outcome.FAILED, policy: NotifyPolicy.atMostOnce, decision });
    expect(recorded).toMatchObject({
      kind: 'recorded',
      item: { state: 'suppressed', dedupeKey: `${runId}:FAILED`, outcome: 'FAILED', claims: 0, leaseUntil: 0, decision },
    });
    const again = await ledger.recordSuppression(runId, 'slack', {
      outcome: Outcome.SUCCEEDED,
      policy: NotifyPolicy.atLeastOnce,
      decision: { when: NotifyWhen.change, reason: 'x' },
    });
    expect(again).toMatchObject({ kind: 'existing', item: { state: 'suppressed', dedupeKey: `${runId}:FAILED`, decision } });
    const claimed = await ledger.claimNotification(runId, 'webhook', atMostOnce);
    expect(await ledger.recordSuppression(runId, 'webhook', { outcome: Outcome.FAILED, policy: NotifyPolicy.atMostOnce, decision })).toMatchObject({
      kind: 'existing',
      item: { state: 'claimed', token: (claimed as { token: string }).token },
    });
  });

  it('a decision without supersededBy or previous is recorded without them', async () => {
    const ledger = ledgerOn(table());
    const recorded = await ledger.recordSuppression(newRunId(), 'slack', {
      outcome: Outcome.FAILED,
      policy: NotifyPolicy.atMostOnce,
      decision: { when: NotifyWhen.change, reason: 'same outcome' },
    });
    expect(recorded.item.decision).toStrictEqual({ when: NotifyWhen.change, reason: 'same outcome' });
  });

  // dynalite returns no item with a failed condition: the ledger reads it back, and the entry may be gone (TTL) by then.
  describe.runIf(backend === 'dynalite')('a read-back that finds no entry (dynalite)', () => {
    const suppression = { outcome: Outcome.FAILED, policy: NotifyPolicy.atMostOnce, decision: { when: NotifyWhen.change, reason: 'superseded' } };
    const deleteEntry = (runId: string) => table().client.send(new DeleteCommand({ TableName: table().tableName, Key: notificationKey(runId, 'slack') }));

    it('recordSuppression tries again and records; a claim tries again and claims', async () => {
      const clock = testClock();
      const runId = newRunId();
      await ledgerOn(table(), clock).claimNotification(runId, 'slack', atMostOnce);
      let reads = 0;
      const ledger = ledgerInterleaved(table(), clock, { read: async () => void (++reads === 1 && (await deleteEntry(runId))) });
      expect((await ledger.recordSuppression(runId, 'slack', suppression)).kind).toBe('recorded');
      const other = newRunId();
      await ledgerOn(table(), clock).claimNotification(other, 'slack', atMostOnce);
      reads = 0;
      const retried = ledgerInterleaved(table(), clock, { read: async () => void (++reads === 1 && (await deleteEntry(other))) });
      expect(await retried.claimNotification(other, 'slack', atMostOnce)).toMatchObject({ kind: 'claimed', resend: false });
    });

    it('the live claim was released in between: the read shows it released, and the next attempt claims it', async () => {
      const clock = testClock();
      const runId = newRunId();
      const x = ledgerOn(table(), clock);
      const first = await x.claimNotification(runId, 'slack', atMostOnce);
      let reads = 0;
      const ledger = ledgerInterleaved(table(), clock, {
        read: async () => void (++reads === 1 && (await x.releaseNotification(runId, 'slack', (first as { token: string }).token, 'HTTP 503'))),
      });
      expect(await ledger.claimNotification(runId, 'slack', atMostOnce)).toMatchObject({ kind: 'claimed', resend: false });
      expect(reads).toBe(1);
    });

    it(`recordSuppression whose read-back finds nothing ${MAX_ATTEMPTS} times → TransientStoreError after exactly ${MAX_ATTEMPTS} puts`, async () => {
      const clock = testClock();
      const runId = newRunId();
      const x = ledgerOn(table(), clock);
      let puts = 0;
      const ledger = ledgerInterleaved(table(), clock, {
        put: async () => {
          puts++;
          await x.claimNotification(runId, 'slack', atMostOnce);
        },
        read: () => deleteEntry(runId).then(() => undefined),
      });
      const error = await ledger.recordSuppression(runId, 'slack', suppression).catch((e) => e);
      expect(puts).toBe(3);
      expect(error).toBeInstanceOf(TransientStoreError);
      expect(error.message).toBe(`recordSuppression ${runId} slack: the entry's condition failed, yet no entry is there`);
    });
  });

  it('a first caller whose channel says nothing: one put of a suppressed entry carrying the decision, and no claim write', async () => {
    const clock = testClock();
    const updates: string[] = [];
    const ledger = ledgerInterleaved(table(), clock, { update: async (input) => void updates.push(String(input.UpdateExpression)) });
    const runId = newRunId();
    const decision = { when: NotifyWhen.change, reason: 'superseded', supersededBy: 'later-run' };
    const result = await ledger.claimNotification(runId, 'slack', { ...atMostOnce, decide: async () => ({ ...decision, send: false }) });
    expect(result).toMatchObject({ kind: 'suppressed', item: { state: 'suppressed', dedupeKey: `${runId}:SUCCEEDED`, decision } });
    expect(updates).toEqual([]);
  });

  it.each([
    [LEASE_MS - 1, 'busy'],
    [LEASE_MS, 'busy'],
    [LEASE_MS + 1, 'unknown'],
  ] as const)('a claim %i ms after a %i ms claim: %s, with one claim write', async (after, expected) => {
    const clock = testClock();
    const runId = newRunId();
    await ledgerOn(table(), clock).claimNotification(runId, 'slack', atMostOnce);
    clock.advance(after);
    const { ledger, writes } = ledgerTakeoversRaced(table(), clock, runId, 'slack', 0);
    const result = await ledger.claimNotification(runId, 'slack', atMostOnce).catch((e) => e);
    expect(writes.claims).toBe(1);
    if (expected === 'unknown') expect(result.kind).toBe('unknown');
    else expect(result.detail).toEqual({ holder: 'unknown', leaseLeftMs: LEASE_MS - after });
  });

  it('atMostOnce: an expired unmarked claim becomes unknown and is never claimable again; its late sender may still mark it sent', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const first = await ledger.claimNotification(runId, 'slack', atMostOnce);
    if (first.kind !== 'claimed') throw new Error('unreachable');
    clock.advance(LEASE_MS + 1);

    const unknown = await ledger.claimNotification(runId, 'slack', atMostOnce);
    expect(unknown).toMatchObject({ kind: 'unknown', item: { state: 'unknown', unknownAt: '2026-03-15T12:00:10.001Z' } });
    clock.advance(LEASE_MS * 10);
    for (const options of [atMostOnce, atLeastOnce]) {
      expect((await ledger.claimNotification(runId, 'slack', options)).kind).toBe('unknown');
    }

    expect((await ledger.markNotificationSent(runId, 'slack', first.token, { status: 200 })).item.state).toBe('sent');
    expect((await ledger.claimNotification(runId, 'slack', atMostOnce)).kind).toBe('sent');
  });

  it('atLeastOnce: an expired unmarked claim is re-claimed for a resend with the same dedupe key; the old token is fenced out', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const first = await ledger.claimNotification(runId, 'webhook', atLeastOnce);
    if (first.kind !== 'claimed') throw new Error('unreachable');
    clock.advance(LEASE_MS + 1);

    const resend = await ledger.claimNotification(runId, 'webhook', atLeastOnce);
    expect(resend).toMatchObject({ kind: 'claimed', resend: true, dedupeKey: first.dedupeKey });
    if (resend.kind !== 'claimed') throw new Error('unreachable');
    expect(resend.token).not.toBe(first.token);
    await expect(ledger.claimNotification(runId, 'webhook', atLeastOnce)).rejects.toBeInstanceOf(NotificationInProgress);

    await expect(ledger.markNotificationSent(runId, 'webhook', first.token, { status: 200 })).rejects.toBeInstanceOf(StageOwnershipLost);
    expect((await ledger.markNotificationSent(runId, 'webhook', resend.token, { status: 200 })).item).toMatchObject({ state: 'sent', claims: 2 });
  });

  it(`claim race: ${RACERS} callers → exactly 1 claimed, ${RACERS - 1} NotificationInProgress`, async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const { values, errors } = await race(() => ledger.claimNotification(runId, 'slack', atMostOnce));
    expect(countBy(values, (v) => v.kind)).toEqual({ claimed: 1 });
    expect(errorNames(errors)).toEqual({ NotificationInProgress: RACERS - 1 });
  });

  it.each([NotifyPolicy.atMostOnce, NotifyPolicy.atLeastOnce])(
    `expired-claim race (%s): ${RACERS} callers → atMostOnce: all see unknown, none sends; atLeastOnce: exactly 1 resends`,
    async (policy) => {
      const clock = testClock();
      const ledger = ledgerOn(table(), clock);
      const runId = newRunId();
      await ledger.claimNotification(runId, 'slack', { ...atMostOnce, policy });
      clock.advance(LEASE_MS + 1);
      const { values, errors } = await race(() => ledger.claimNotification(runId, 'slack', { ...atMostOnce, policy }));
      if (policy === NotifyPolicy.atLeastOnce) {
        expect(countBy(values, (v) => v.kind)).toEqual({ claimed: 1 });
        expect(errorNames(errors)).toEqual({ NotificationInProgress: RACERS - 1 });
      } else {
        expect(countBy(values, (v) => v.kind)).toEqual({ unknown: RACERS });
        expect(errors).toEqual([]);
      }
    },
  );
});
