/**
 * A channel's `when` (notify/when.ts) against a real ledger: the run a `change` channel compares with
 * (its last word before the run, in decision order, of the name or the schedule) read from the byName
 * index, in flight and SKIPPED runs passed over, the look-back's bound; and the decision recorded with
 * the claim (ledger/notifications.ts), once, whoever races for it. Overlapping runs, notified in every
 * order: change-interleavings.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { NotificationInProgress, StageOwnershipLost } from '../../lambdas/core/errors';
import { NotificationState, NotifyPolicy, NotifyWhen, Outcome, TriggerKind } from '../../lambdas/core/status';
import type { Ledger, RunTrigger } from '../../lambdas/ledger/ledger';
import { LOOK_BACK_RUNS, decideChannel, decideWhen, lastWordBefore, type ThisRun, type WhenDecision } from '../../lambdas/notify/when';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { errorNames, givenRun, ledgerOn, newRunId, race, testClock, type TestClock } from '../ledger/fixtures';
import { storedSpec } from '../support/stored-spec';

const { SUCCEEDED, FAILED, THRESHOLDS_FAILED, SKIPPED, TIMED_OUT } = Outcome;
const LEASE_MS = 10_000;
const claimOptions = { leaseMs: LEASE_MS, policy: NotifyPolicy.atMostOnce, outcome: FAILED };
const CHANNEL = 'webhook';

describe('decideWhen (no history)', () => {
  it('always speaks; failure speaks for every outcome but SUCCEEDED and SKIPPED', () => {
    for (const outcome of Object.values(Outcome)) {
      expect(decideWhen(NotifyWhen.always, outcome).send).toBe(true);
      expect(decideWhen(NotifyWhen.failure, outcome).send).toBe(outcome !== SUCCEEDED && outcome !== SKIPPED);
    }
    expect(decideWhen(NotifyWhen.failure, TIMED_OUT)).toEqual({ when: 'failure', send: true, reason: 'TIMED_OUT is a failure' });
  });

  it('change: a flip speaks, the same outcome does not, a first run speaks only when it failed, a skipped run never', () => {
    const previous = { runId: 'r1', outcome: SUCCEEDED };
    expect(decideWhen(NotifyWhen.change, THRESHOLDS_FAILED, previous)).toEqual({
      when: 'change',
      send: true,
      reason: 'SUCCEEDED (run r1) → THRESHOLDS_FAILED',
      previous,
    });
    expect(decideWhen(NotifyWhen.change, SUCCEEDED, previous)).toMatchObject({ send: false, reason: 'SUCCEEDED, as run r1', previous });
    expect(decideWhen(NotifyWhen.change, FAILED)).toMatchObject({ send: true, reason: 'no previous finished run: a first FAILED is news' });
    expect(decideWhen(NotifyWhen.change, SUCCEEDED).send).toBe(false);
    expect(decideWhen(NotifyWhen.change, SKIPPED, { runId: 'r1', outcome: FAILED }).send).toBe(false);
    expect(decideWhen(NotifyWhen.change, SKIPPED).send).toBe(false);
  });
});

describeOnLedgerBackends((table) => {
  /**
   * Runs of one name, created a second apart on the ledger's clock, each finished (or not) as told;
   * their specs name the channel with `when: change`. `notify` claims the channel for a run as the
   * Notify stage does (deciding with the claim), and records a message when the claim says send.
   */
  function history(clock: TestClock = testClock()) {
    const ledger = ledgerOn(table(), clock);
    const name = `when-${newRunId().slice(-8)}`;
    const runs: ThisRun[] = [];
    const sent: string[] = [];
    return {
      ledger,
      name,
      runs,
      /** The run ids the channel got a message for, in order. */
      sent,
      async add(outcome: Outcome | undefined, trigger: RunTrigger = { kind: TriggerKind.api }, runName = name): Promise<ThisRun & { outcome: Outcome }> {
        const runId = newRunId();
        const notify = { channels: [CHANNEL], policy: NotifyPolicy.atMostOnce, when: { [CHANNEL]: NotifyWhen.change } };
        const created = await ledger.createRun({ runId, spec: storedSpec({ name: runName, engine: 'k6', notify }), specHash: 'h', trigger });
        clock.advance(1_000);
        const decided = outcome === undefined ? undefined : (await ledger.decideOutcome(runId, outcome, 'test')).run;
        const run = { runId, name: runName, createdAt: created.run.createdAt, decidedAt: decided?.decidedAt ?? '9999', trigger, outcome: outcome ?? SUCCEEDED };
        runs.push(run);
        return run;
      },
      /** The channel's claim for `run`, deciding with it; the recorded decision. */
      async notify(run: ThisRun): Promise<WhenDecision> {
        const claim = await ledger.claimNotification(run.runId, CHANNEL, {
          ...claimOptions,
          outcome: run.outcome,
          decide: () => decide(ledger, NotifyWhen.change, run),
        });
        if (claim.kind === 'claimed') {
          sent.push(run.runId);
          const { item } = await ledger.markNotificationSent(run.runId, CHANNEL, claim.token, { status: 200 });
          return { send: true, ...item.decision! };
        }
        if (claim.kind !== 'suppressed') throw new Error(`claimed already: ${claim.kind}`);
        return { send: false, ...claim.item.decision! };
      },
    };
  }
  const decide = (ledger: Ledger, when: NotifyWhen, run: ThisRun): Promise<WhenDecision> => decideChannel(ledger, CHANNEL, when, run);

  it('SUCCEEDED, SUCCEEDED, THRESHOLDS_FAILED, THRESHOLDS_FAILED, SUCCEEDED, FAILED, FAILED, SUCCEEDED, each notified as it ends: change speaks at the flips, failure at the failures', async () => {
    const h = history();
    const outcomes = [SUCCEEDED, SUCCEEDED, THRESHOLDS_FAILED, THRESHOLDS_FAILED, SUCCEEDED, FAILED, FAILED, SUCCEEDED];
    const change: WhenDecision[] = [];
    for (const outcome of outcomes) change.push(await h.notify(await h.add(outcome)));
    const failure = await Promise.all(h.runs.map((run) => decide(h.ledger, NotifyWhen.failure, run)));
    const spoke = (decisions: WhenDecision[]) => decisions.flatMap((d, i) => (d.send ? [i + 1] : []));
    expect(spoke(change)).toEqual([3, 5, 6, 8]);
    expect(h.sent).toEqual([3, 5, 6, 8].map((n) => h.runs[n - 1]!.runId));
    expect(spoke(failure)).toEqual([3, 4, 6, 7]);
    expect(change[0]).toEqual({ when: 'change', send: false, reason: 'no previous finished run: a first SUCCEEDED is not news' });
    expect(change[2]).toEqual({
      when: 'change',
      send: true,
      reason: `SUCCEEDED (run ${h.runs[1]!.runId}) → THRESHOLDS_FAILED`,
      previous: { runId: h.runs[1]!.runId, outcome: SUCCEEDED },
    });
    expect(change[3]).toMatchObject({ send: false, previous: { runId: h.runs[2]!.runId, outcome: THRESHOLDS_FAILED } });
  });

  it('runs in flight and SKIPPED runs are passed over; other names do not count', async () => {
    const h = history();
    const first = await h.add(SUCCEEDED);
    await h.notify(first);
    await h.add(undefined); // still in flight
    await h.notify(await h.add(SKIPPED));
    await h.notify(await h.add(FAILED, { kind: TriggerKind.api }, `${h.name}-other`));
    const last = await h.add(FAILED);
    expect(await h.notify(last)).toMatchObject({ send: true, previous: { runId: first.runId, outcome: SUCCEEDED } });
    // The skipped run itself is not a change, though it differs from SUCCEEDED.
    expect((await decide(h.ledger, NotifyWhen.change, h.runs[2]!)).send).toBe(false);
  });

  it('a first run: FAILED is news, SUCCEEDED is not', async () => {
    const failed = history();
    expect(await failed.notify(await failed.add(FAILED))).toEqual({ when: 'change', send: true, reason: 'no previous finished run: a first FAILED is news' });
    const succeeded = history();
    expect((await succeeded.notify(await succeeded.add(SUCCEEDED))).send).toBe(false);
  });

  it('a run decided before this one counts though it was created after it; one decided after does not, though it was created before', async () => {
    const clock = testClock();
    const g = history(clock);
    // Created in the order long, short; decided short (FAILED), then long (SUCCEEDED).
    const long = await g.add(undefined);
    const short = await g.add(FAILED);
    clock.advance(1_000);
    const longDone = { ...long, outcome: SUCCEEDED, decidedAt: (await g.ledger.decideOutcome(long.runId, SUCCEEDED, 'test')).run.decidedAt! };
    expect(await g.notify(short)).toMatchObject({ send: true, reason: 'no previous finished run: a first FAILED is news' });
    expect(await g.notify(longDone)).toMatchObject({ send: true, previous: { runId: short.runId, outcome: FAILED } });
    expect(g.sent).toEqual([short.runId, long.runId]);
  });

  it('a scheduled run is compared with the previous run of its own schedule only; an API run with any run of its name', async () => {
    const h = history();
    const nightly = { kind: TriggerKind.schedule, schedule: 'nightly', scheduledTime: '2026-03-15T00:00:00Z' } as const;
    const hourly = { kind: TriggerKind.schedule, schedule: 'hourly' } as const;
    const nightlyOk = await h.add(SUCCEEDED, nightly);
    await h.notify(nightlyOk);
    await h.notify(await h.add(FAILED, hourly));
    await h.notify(await h.add(FAILED, { kind: TriggerKind.api }));
    const nightlyAgain = await h.add(SUCCEEDED, nightly);
    expect(await h.notify(nightlyAgain)).toMatchObject({ send: false, previous: { runId: nightlyOk.runId, outcome: SUCCEEDED } });
    const byHand = await h.add(SUCCEEDED, { kind: TriggerKind.api });
    expect(await h.notify(byHand)).toMatchObject({ send: false, previous: { runId: nightlyAgain.runId } });
    const hourlyOk = await h.add(SUCCEEDED, hourly);
    expect(await h.notify(hourlyOk)).toMatchObject({ send: true, previous: { outcome: FAILED } });
  });

  it(`the look-back reads at most ${LOOK_BACK_RUNS} runs (newer ones included); a finished run past it counts as none`, async () => {
    const h = history();
    const finished = await h.add(SUCCEEDED);
    await h.notify(finished);
    for (let i = 0; i < 3; i++) await h.add(undefined);
    const run = await h.add(FAILED);
    await h.add(undefined); // created after the run: read, passed over, counted
    expect(await lastWordBefore(h.ledger, CHANNEL, run, 5)).toBeUndefined();
    expect(await lastWordBefore(h.ledger, CHANNEL, run, 6)).toEqual({ runId: finished.runId, outcome: SUCCEEDED });
    expect(await decide(h.ledger, NotifyWhen.change, run)).toMatchObject({ send: true, previous: { runId: finished.runId } });
  });

  it(`by default: a previous finished run ${LOOK_BACK_RUNS}th in the listing is found, one pushed to the ${LOOK_BACK_RUNS + 1}st by a newer run is not`, async () => {
    const h = history();
    const finished = await h.add(FAILED);
    await h.notify(finished);
    for (let i = 0; i < LOOK_BACK_RUNS - 2; i++) await h.add(undefined);
    const run = await h.add(FAILED);
    // The run and the ones before it: exactly LOOK_BACK_RUNS read.
    expect(await decide(h.ledger, NotifyWhen.change, run)).toMatchObject({ send: false, previous: { runId: finished.runId, outcome: FAILED } });
    await h.add(undefined);
    expect(await decide(h.ledger, NotifyWhen.change, run)).toMatchObject({ send: true, reason: 'no previous finished run: a first FAILED is news' });
  });

  describe('the decision is recorded with the claim', () => {
    const suppress =
      (reason = 'FAILED, as run r0') =>
      async () => ({ when: NotifyWhen.change, send: false, reason, previous: { runId: 'r0', outcome: FAILED } });
    const send = async () => ({ when: NotifyWhen.failure, send: true, reason: 'FAILED is a failure' });

    it('suppressed: one item with the decision; later claims, with or without a decision, follow it and never send', async () => {
      const ledger = ledgerOn(table());
      const runId = newRunId();
      const first = await ledger.claimNotification(runId, 'webhook', { ...claimOptions, decide: suppress() });
      expect(first).toMatchObject({
        kind: 'suppressed',
        item: {
          state: NotificationState.suppressed,
          claims: 0,
          decision: { when: 'change', reason: 'FAILED, as run r0', previous: { runId: 'r0', outcome: FAILED } },
        },
      });
      let asked = 0;
      const later = await ledger.claimNotification(runId, 'webhook', { ...claimOptions, decide: async () => (asked++, send()) });
      expect(later.kind).toBe('suppressed');
      expect(asked).toBe(0);
      for (const policy of Object.values(NotifyPolicy)) {
        expect((await ledger.claimNotification(runId, 'webhook', { ...claimOptions, policy })).kind).toBe('suppressed');
      }
      if (first.kind !== 'suppressed') throw new Error('unreachable');
      await expect(ledger.markNotificationSent(runId, 'webhook', first.item.token, { status: 200 })).rejects.toBeInstanceOf(StageOwnershipLost);
      await expect(ledger.releaseNotification(runId, 'webhook', first.item.token, 'x')).rejects.toBeInstanceOf(StageOwnershipLost);
    });

    it('send: the claim carries the decision; it survives a release and a re-claim, which does not decide again', async () => {
      const ledger = ledgerOn(table());
      const runId = newRunId();
      const claim = await ledger.claimNotification(runId, 'webhook', { ...claimOptions, decide: send });
      if (claim.kind !== 'claimed') throw new Error(`expected a claim, got ${claim.kind}`);
      await ledger.releaseNotification(runId, 'webhook', claim.token, 'HTTP 503');
      let asked = 0;
      const again = await ledger.claimNotification(runId, 'webhook', { ...claimOptions, decide: async () => (asked++, suppress()()) });
      if (again.kind !== 'claimed') throw new Error(`expected a claim, got ${again.kind}`);
      expect(asked).toBe(0);
      const { item } = await ledger.markNotificationSent(runId, 'webhook', again.token, { status: 200 });
      expect(item).toMatchObject({ state: 'sent', claims: 2, decision: { when: 'failure', reason: 'FAILED is a failure' } });
      expect(item.decision).not.toHaveProperty('previous');
    });

    it('an entry claimed without a decision (a channel that always speaks) is followed as it is', async () => {
      const ledger = ledgerOn(table());
      const runId = newRunId();
      await ledger.claimNotification(runId, 'webhook', claimOptions);
      await expect(ledger.claimNotification(runId, 'webhook', { ...claimOptions, decide: suppress() })).rejects.toBeInstanceOf(NotificationInProgress);
    });

    it('50 callers deciding differently at once: one decision is recorded, and everyone follows it', async () => {
      const ledger = ledgerOn(table());
      const runId = await givenRun(ledger);
      const { values, errors } = await race((caller) =>
        ledger.claimNotification(runId, 'webhook', {
          ...claimOptions,
          holder: `caller-${caller}`,
          decide: caller % 2 === 0 ? send : suppress(`caller ${caller}`),
        }),
      );
      const item = (await ledger.getRun(runId))!.notifications.webhook!;
      if (item.state === NotificationState.suppressed) {
        // Suppressed first: nobody claimed, nobody may send.
        expect(values.map((v) => v.kind)).toEqual(Array(values.length).fill('suppressed'));
        expect(values.length + errors.length).toBe(50);
        expect(errors).toEqual([]);
        expect(item.decision?.reason).toMatch(/^caller \d*[13579]$/);
      } else {
        // A send was recorded first: exactly one caller holds the claim; the others are told it is in progress.
        expect(item).toMatchObject({ state: 'claimed', decision: { reason: 'FAILED is a failure' } });
        expect(values.map((v) => v.kind)).toEqual(['claimed']);
        expect(errorNames(errors)).toEqual({ NotificationInProgress: 49 });
      }
    });
  });
});
