/**
 * Acquire (architecture §3, concurrency groups): a run whose spec names `concurrency: { group, limit,
 * whenBusy }` takes a slot in its group before it launches anything. The slot is a ledger semaphore
 * (ledger/groups.ts): held by run id, freed by the run's Cleanup, by the reaper (which runs Cleanup)
 * and by the sweeper once the holder's run has ended.
 *
 * - a free slot: taken, and the run's deadlines are fixed now (a wait in the queue must not eat the
 *   test's own time): recorded as this stage's output, which every later stage reads (`admission`);
 * - busy, `whenBusy: queue`: the run waits its turn (FIFO) in a Wait → Acquire → Choice loop until
 *   `queueTimeout`, then ends TIMED_OUT naming the group and its holders;
 * - busy, `whenBusy: skip` (and `reject` for a run the API did not start: the API answers 409 itself,
 *   api/submit-run.ts): the run ends SKIPPED, naming the holder.
 * An abort request while queued ends the run ABORTED and leaves the queue.
 *
 * A retried or duplicated invocation is harmless: a holder acquiring again is told it holds the slot,
 * and the stage's record is written once (run-once.ts).
 */
import { admitDeadlines, type AdmitDeadlines } from '../core/deadlines';
import { formatDuration } from '../core/duration';
import { queuePollSeconds } from '../core/polling';
import type { RunSpecWithoutScript } from '../core/spec';
import { done, endsRun, StepPhase, waiting, type StepResult } from '../core/step';
import { Outcome, RunStatus, Stage, WhenBusy } from '../core/status';
import type { RunView } from '../ledger/ledger';
import { describeBusy } from '../ledger/groups';
import type { AdmitRecord } from './admit';
import type { StageDeps } from './deps';
import { abortRequest, loadRun, outputOf, requireOpenRun, requireOutput } from './run-context';
import { runOnce } from './run-once';

/** Recorded when the slot is taken: the run's admission to the cluster, as Admit's record is for a run without a group. */
export interface AcquireRecord extends AdmitRecord {
  group: string;
  /** How long the run waited in the queue (cluster clock). */
  waitedSeconds: number;
}

export async function acquire(deps: StageDeps, runId: string): Promise<StepResult> {
  const run = await loadRun(deps, runId);
  if (outputOf<AcquireRecord>(run.view, Stage.Acquire)) return done();
  const concurrency = run.spec.concurrency;
  // No group, nothing to take: the state machine never comes here for such a run (Admit's `queued`),
  // and a stray invocation records nothing, so Admit's deadlines stay the run's.
  if (!concurrency) return done();
  requireOpenRun(run.view, Stage.Acquire);
  const admitted = requireOutput<AdmitRecord>(run.view, Stage.Admit, Stage.Acquire);
  const { group, limit, whenBusy } = concurrency;

  const abort = abortRequest(run);
  if (abort) {
    await deps.ledger.releaseSlot(group, runId);
    return endsRun(StepPhase.aborted, Outcome.ABORTED, `queued: aborted by ${abort.by} while waiting for a slot in group ${group}`);
  }
  const slot = await deps.ledger.acquireSlot({ group, runId, limit, queue: whenBusy === WhenBusy.queue });
  // The run may have ended while this invocation was on its way (stopped hard, the reaper's Cleanup
  // already freed its slot): a slot or queue place taken now would outlive it. Give it back.
  const after = slot.kind === 'busy' ? undefined : await deps.ledger.getRun(runId);
  if (after?.run.outcome !== undefined) {
    await deps.ledger.releaseSlot(group, runId);
    requireOpenRun(after!, Stage.Acquire);
  }
  switch (slot.kind) {
    case 'acquired':
      return record(deps, runId, run.spec, group, admitted);
    case 'busy':
      return endsRun(
        StepPhase.skipped,
        Outcome.SKIPPED,
        slot.queueFull
          ? `group ${group} is busy and its queue is full (${Object.keys(slot.item.waiting).length} runs waiting)`
          : `group ${group} is busy (limit ${limit}): ${describeBusy(slot.holders, slot.item, limit)}; whenBusy: ${whenBusy}`,
      );
    case 'queued': {
      const now = deps.now();
      const queueBy = admitted.queueBy ?? admitted.admittedAt + concurrency.queueTimeout * 1000;
      if (now >= queueBy) {
        // Only this run's own acquireSlot makes it a holder: releasing now just leaves the queue.
        await deps.ledger.releaseSlot(group, runId);
        return endsRun(
          StepPhase.timed_out,
          Outcome.TIMED_OUT,
          `queued: no slot in group ${group} (limit ${limit}) within ${formatDuration(concurrency.queueTimeout)}; ${describeBusy(slot.holders, slot.item, limit)}`,
        );
      }
      deps.log({ runId, stage: Stage.Acquire, message: 'queued', group, position: slot.position, holders: slot.holders });
      return waiting(queuePollSeconds({ now, queuedAt: admitted.admittedAt, queueBy }));
    }
  }
  throw new Error(`acquire: unexpected slot answer ${JSON.stringify(slot).slice(0, 200)}`);
}

/** The slot is the run's: deadlines from now, status PREPARING. */
async function record(deps: StageDeps, runId: string, spec: RunSpecWithoutScript, group: string, admitted: AdmitRecord): Promise<StepResult> {
  await runOnce<AcquireRecord>(deps, runId, Stage.Acquire, async () => {
    const admittedAt = deps.now();
    const deadlines: AdmitDeadlines = admitDeadlines(admittedAt, spec.timeouts, deps.config);
    await deps.ledger.setStatus(runId, RunStatus.PREPARING);
    return { admittedAt, deadlines, group, waitedSeconds: Math.max(0, Math.round((admittedAt - admitted.admittedAt) / 1000)) };
  });
  return done();
}

/**
 * When the run was admitted to the cluster and its deadlines: the Acquire stage's record for a run
 * that waited for a slot in a concurrency group, else Admit's. Every stage after them reads this.
 */
export function admission(view: RunView, by: Stage): AdmitRecord {
  return outputOf<AcquireRecord>(view, Stage.Acquire) ?? requireOutput<AdmitRecord>(view, Stage.Admit, by);
}
