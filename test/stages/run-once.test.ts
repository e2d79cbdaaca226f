/**
 * runOnce and runOnceReading (stages/run-once.ts), every stage's guard, on a real ledger: begin, the
 * work with what it learns of the attempt, then complete, or fail and rethrow. The ledger's lease is
 * the stage's Task timeout plus 30 s of margin (core/stage-timing.ts): Watch's is 60 + 30 = 90 s.
 */
import { expect, it } from 'vitest';
import { StageBusy, StageOwnershipLost } from '../../lambdas/core/errors';
import { Stage } from '../../lambdas/core/status';
import type { StageDeps } from '../../lambdas/stages/deps';
import { runOnce, runOnceReading, type Attempt } from '../../lambdas/stages/run-once';
import type { Ledger } from '../../lambdas/ledger/ledger';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { ledgerOn, newRunId, testClock } from '../ledger/fixtures';

const EXECUTION = 'arn:aws:states:local:0:execution:loadplane-run:a';
const WATCH_LEASE_MS = 90_000;
const START = Date.parse('2026-03-15T12:00:00.000Z');

/** The deps runOnce uses: the ledger, the caller, and owner ids invocation-1, invocation-2, … */
function depsOn(ledger: Ledger, caller: string | null = EXECUTION): StageDeps {
  let invocations = 0;
  return { ledger, ...(caller !== null && { caller }), newOwner: () => `invocation-${++invocations}` } as unknown as StageDeps;
}

/** What the work saw of its attempt, with the marks as the list of those it was asked about. */
function seen(attempt: Attempt, asked: string[]) {
  return { first: attempt.first, previousError: attempt.previousError, has: asked.filter((m) => attempt.marks.has(m)) };
}

const refused = () => Object.assign(new Error('the cluster did not answer'), { name: 'ClusterUnavailable' });

describeOnLedgerBackends((table) => {
  it('a first invocation: the work is told it is first, gets the read, and its output is recorded under the caller’s owner with the stage’s lease', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    let attempt: Attempt | undefined;
    const output = await runOnceReading(
      depsOn(ledger),
      runId,
      Stage.Watch,
      async () => 'the run',
      async (a, read) => {
        attempt = a;
        return { read };
      },
    );
    expect(output).toEqual({ read: 'the run' });
    expect(attempt).toMatchObject({ first: true });
    expect(attempt).not.toHaveProperty('previousError');
    const again = await ledger.beginStage(runId, Stage.Watch, 'someone-else', 1_000);
    expect(again).toEqual({ kind: 'completed', output: { read: 'the run' } });
    const lost = await ledger.failStage(runId, Stage.Watch, `${EXECUTION} | invocation-1`, { name: 'X', message: 'y' }).catch((e) => e);
    expect(lost.current).toMatchObject({ state: 'completed', owner: `${EXECUTION} | invocation-1`, attempts: 1, leaseUntil: START + WATCH_LEASE_MS });
  });

  it('without a caller the owner is the invocation’s id alone', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await runOnce(depsOn(ledger, null), runId, Stage.Watch, async () => 'done');
    const lost = await ledger.failStage(runId, Stage.Watch, 'invocation-1', { name: 'X', message: 'y' }).catch((e) => e);
    expect(lost.current).toMatchObject({ state: 'completed', owner: 'invocation-1', output: 'done' });
  });

  it('a stage already completed hands back its recorded output: the work does not run, and a failed read is dropped unseen', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const deps = depsOn(ledger);
    expect(await runOnce(deps, runId, Stage.Watch, async () => ({ polls: 1 }))).toEqual({ polls: 1 });
    let ran = false;
    const again = await runOnceReading(
      deps,
      runId,
      Stage.Watch,
      () => Promise.reject(new Error('the read failed')),
      async () => {
        ran = true;
        return { polls: 2 };
      },
    );
    expect(again).toEqual({ polls: 1 });
    expect(ran).toBe(false);
  });

  it('a live lease of another invocation → StageBusy: the work does not run, and a failed read is dropped unseen', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Watch, `${EXECUTION} | crashed`, WATCH_LEASE_MS);
    let ran = false;
    const busy = await runOnceReading(
      depsOn(ledger),
      runId,
      Stage.Watch,
      () => Promise.reject(new Error('the read failed')),
      async () => {
        ran = true;
      },
    ).catch((e) => e);
    expect(busy).toBeInstanceOf(StageBusy);
    expect(busy.detail).toEqual({ holder: 'own', leaseLeftMs: WATCH_LEASE_MS });
    expect(ran).toBe(false);
  });

  it('a failed read fails the attempt with the read’s error, recorded for the next attempt', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const deps = depsOn(ledger);
    const error = await runOnceReading(
      deps,
      runId,
      Stage.Collect,
      () => Promise.reject(refused()),
      async () => 'never',
    ).catch((e) => e);
    expect(error).toMatchObject({ name: 'ClusterUnavailable', message: 'the cluster did not answer' });
    let attempt: Attempt | undefined;
    await runOnce(deps, runId, Stage.Collect, async (a) => {
      attempt = a;
    });
    expect(attempt).toMatchObject({ first: false, previousError: { name: 'ClusterUnavailable', message: 'the cluster did not answer' } });
  });

  it('work that throws: the failure is recorded, the error rethrown as it was; the retry is not first, learns the error and the marks recorded', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const deps = depsOn(ledger);
    const own = refused();
    const thrown = await runOnce(deps, runId, Stage.Start, async (a) => {
      expect(a.marks.has('setup:sent')).toBe(false);
      await a.marks.mark('setup:sent');
      expect(a.marks.has('setup:sent')).toBe(true);
      await a.marks.mark('other');
      await a.marks.unmark('other');
      expect(a.marks.has('other')).toBe(false);
      throw own;
    }).catch((e) => e);
    expect(thrown).toBe(own);

    const asked = ['setup:sent', 'other'];
    let retry: ReturnType<typeof seen> | undefined;
    await runOnce(deps, runId, Stage.Start, async (a) => {
      retry = seen(a, asked);
    });
    expect(retry).toEqual({ first: false, previousError: { name: 'ClusterUnavailable', message: 'the cluster did not answer' }, has: ['setup:sent'] });
  });

  it('a thrown non-Error is recorded as an Error with its text', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const deps = depsOn(ledger);
    await expect(
      runOnce(deps, runId, Stage.Decide, () => {
        throw 'plain text';
      }),
    ).rejects.toBe('plain text');
    let attempt: Attempt | undefined;
    await runOnce(deps, runId, Stage.Decide, async (a) => {
      attempt = a;
    });
    expect(attempt?.previousError).toEqual({ name: 'Error', message: 'plain text' });
  });

  it('a takeover of an expired lease is not first, and has no previous error', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = newRunId();
    await ledger.beginStage(runId, Stage.Watch, `${EXECUTION} | crashed`, WATCH_LEASE_MS);
    clock.advance(WATCH_LEASE_MS + 1);
    let attempt: Attempt | undefined;
    await runOnce(depsOn(ledger), runId, Stage.Watch, async (a) => {
      attempt = a;
    });
    expect(attempt?.first).toBe(false);
    expect(attempt).not.toHaveProperty('previousError');
  });

  it('a work that ends after its lease was taken over: the completion is fenced out (StageOwnershipLost); a failure there still rethrows the work’s own error', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const deps = depsOn(ledger);
    const late = async (runId: string, end: () => unknown) =>
      runOnce(deps, runId, Stage.Launch, async () => {
        // Launch's lease is 120 + 30 s: one millisecond past it, another invocation takes over.
        clock.advance(150_001);
        await ledger.beginStage(runId, Stage.Launch, 'took-over', 1_000);
        return end();
      }).catch((e) => e);

    const completed = await late(newRunId(), () => ({ jobs: 1 }));
    expect(completed).toBeInstanceOf(StageOwnershipLost);
    const own = refused();
    expect(
      await late(newRunId(), () => {
        throw own;
      }),
    ).toBe(own);
  });
});
