import { expect, it } from 'vitest';
import { NotificationInProgress, StageOwnershipLost } from '../../lambdas/core/errors';
import { NotifyPolicy, Outcome } from '../../lambdas/core/status';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { RACERS, countBy, errorNames, ledgerOn, newRunId, race, testClock } from './fixtures';

const LEASE_MS = 10_000;
const atMostOnce = { leaseMs: LEASE_MS, policy: NotifyPolicy.atMostOnce, outcome: Outcome.SUCCEEDED };
const atLeastOnce = { ...atMostOnce, policy: NotifyPolicy.atLeastOnce };

describeOnLedgerBackends((table) => {
  it('claim → mark sent: the claim carries a token and the dedupe key; after it, claims answer sent (do not send)', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    const claim = await ledger.claimNotification(runId, 'slack', atMostOnce);
    expect(claim).toMatchObject({ kind: 'claimed', dedupeKey: `${runId}:SUCCEEDED`, resend: false });
    if (claim.kind !== 'claimed') throw new Error('unreachable');

    clock.advance(500);
    const sent = await ledger.markNotificationSent(runId, 'slack', claim.token, { status: 200 });
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
    expect(released.item).toMatchObject({ state: 'released', releaseReason: 'HTTP 503' });
    expect((await ledger.releaseNotification(runId, 'webhook', first.token, 'again')).item.releaseReason).toBe('HTTP 503');

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
