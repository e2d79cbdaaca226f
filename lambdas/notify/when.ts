/**
 * When a channel speaks (spec `notify.channels[].when`, architecture §5): `always`; `failure` — any
 * outcome but SUCCEEDED and SKIPPED; `change` — the outcome differs from the previous finished run of
 * the same schedule (a run a schedule started) or else of the same name.
 *
 * This file only decides. The Notify stage asks for the decision when it claims a channel that has no
 * ledger entry yet, and the ledger records the answer in the same conditional write as the claim
 * (ledger/notifications.ts), so every later caller follows the first decision whatever a later
 * look-back would say. The run history is read through RunHistory, which the ledger's listRuns
 * satisfies: this layer imports nothing outside core (architecture §2, Layers).
 *
 * "Previous finished run": the latest run of the name created before this one (createdAt, then run id:
 * the byName index's order) whose outcome is not SKIPPED — a skipped run did not run, so it neither is
 * a change nor hides one; runs still in flight are passed over. A run that is itself SKIPPED is never
 * a change for the same reason (the next run that runs is compared with the one before the skip).
 */
import { NotifyWhen, Outcome, TriggerKind } from '../core/status';

/** The run a change is measured against. */
export interface PreviousRun {
  runId: string;
  outcome: Outcome;
}

/** Whether a channel speaks for a run, and why: recorded with the channel's claim (or instead of it). */
export interface WhenDecision {
  when: NotifyWhen;
  send: boolean;
  reason: string;
  /** `change` only: the run compared with, when there was one. */
  previous?: PreviousRun;
}

/** A run as the look-back sees it: the fields of the ledger's run listing (RunSummary) it reads. */
export interface PastRun {
  runId: string;
  createdAt: string;
  outcome?: Outcome;
  trigger: { kind: string; schedule?: string };
}

/** The runs of one name, newest first, a page at a time (Ledger.listRuns({ name }) fits). */
export interface RunHistory {
  listRuns(input: { name: string; limit: number; nextToken?: string }): Promise<{ runs: PastRun[]; nextToken?: string }>;
}

/** The run being notified: where it sits in its name's history, and how it ended. */
export interface ThisRun {
  runId: string;
  /** The spec's name (the byName index's key). */
  name: string;
  createdAt: string;
  trigger: { kind: string; schedule?: string };
  outcome: Outcome;
}

/**
 * How many runs of the name the look-back reads at most (newest first; runs created after this one
 * are passed over but count). A previous finished run beyond them is treated as none: the channel
 * then speaks only if this run failed, as for a first run.
 */
export const LOOK_BACK_RUNS = 100;

/** The listing's page size (listRuns allows up to 100). */
const PAGE = 100;

/** `failure`'s test: every outcome but SUCCEEDED and SKIPPED. */
export function isFailure(outcome: Outcome): boolean {
  return outcome !== Outcome.SUCCEEDED && outcome !== Outcome.SKIPPED;
}

/**
 * The decision from what is known: `previous` is the previous finished run (`change` only; undefined
 * when there is none within the look-back).
 */
export function decideWhen(when: NotifyWhen, outcome: Outcome, previous?: PreviousRun): WhenDecision {
  switch (when) {
    case NotifyWhen.always:
      return { when, send: true, reason: 'the channel speaks for every outcome' };
    case NotifyWhen.failure:
      return isFailure(outcome)
        ? { when, send: true, reason: `${outcome} is a failure` }
        : { when, send: false, reason: `${outcome} is not a failure` };
    case NotifyWhen.change: {
      if (outcome === Outcome.SKIPPED) {
        return { when, send: false, reason: 'a skipped run is not a change', ...(previous ? { previous } : {}) };
      }
      if (!previous) {
        return isFailure(outcome)
          ? { when, send: true, reason: `no previous finished run: a first ${outcome} is news` }
          : { when, send: false, reason: `no previous finished run: a first ${outcome} is not news` };
      }
      return previous.outcome === outcome
        ? { when, send: false, reason: `${outcome}, as run ${previous.runId}`, previous }
        : { when, send: true, reason: `${previous.outcome} (run ${previous.runId}) → ${outcome}`, previous };
    }
  }
}

/**
 * The previous finished run of `run`'s schedule (a run a schedule started: same trigger.schedule) or
 * else of its name; undefined when none is within LOOK_BACK_RUNS runs of the name.
 */
export async function previousFinishedRun(history: RunHistory, run: Omit<ThisRun, 'outcome'>, lookBack = LOOK_BACK_RUNS): Promise<PreviousRun | undefined> {
  const position = orderKey(run);
  const schedule = run.trigger.kind === TriggerKind.schedule ? run.trigger.schedule : undefined;
  let read = 0;
  let nextToken: string | undefined;
  do {
    const page = await history.listRuns({ name: run.name, limit: Math.min(PAGE, lookBack - read), ...(nextToken !== undefined ? { nextToken } : {}) });
    for (const past of page.runs) {
      if (++read > lookBack) return undefined;
      // Newer runs (and this one) come first in the listing: only those created before it count.
      if (orderKey(past) >= position) continue;
      if (schedule !== undefined && (past.trigger.kind !== TriggerKind.schedule || past.trigger.schedule !== schedule)) continue;
      if (past.outcome === undefined || past.outcome === Outcome.SKIPPED) continue;
      return { runId: past.runId, outcome: past.outcome };
    }
    nextToken = page.nextToken;
  } while (nextToken !== undefined && read < lookBack);
  return undefined;
}

/** The decision for one channel of `run`; reads the history only for `change`. */
export async function decideChannel(history: RunHistory, when: NotifyWhen, run: ThisRun): Promise<WhenDecision> {
  if (when !== NotifyWhen.change || run.outcome === Outcome.SKIPPED) return decideWhen(when, run.outcome);
  return decideWhen(when, run.outcome, await previousFinishedRun(history, run));
}

/** The byName index's sort key (ledger createdKey): creation time, then run id for runs created in the same ms. */
const orderKey = (run: { createdAt: string; runId: string }) => `${run.createdAt}#${run.runId}`;
