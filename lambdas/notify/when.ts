/**
 * When a channel speaks (spec `notify.channels[].when`, architecture §5): `always`; `failure` — any
 * outcome but SUCCEEDED and SKIPPED; `change` — the outcome differs from what the channel last said
 * (or would have said) about the runs of the same schedule (a run a schedule started) or else of the
 * same name.
 *
 * This file only decides. The Notify stage asks for the decision when it claims a channel that has no
 * ledger entry yet, and the ledger records the answer in the same conditional write as the claim
 * (ledger/notifications.ts), so every later caller follows the first decision whatever a later
 * look-back would say. The run history is read through RunHistory, which the Ledger satisfies: this
 * layer imports nothing outside core (architecture §2, Layers).
 *
 * `change` is about the channel's state, and the runs of a name may overlap: a long run created first
 * can end after a short one created later, and Notify for a run decided earlier can come after a
 * later run's. So:
 * - **Order: decision.** Runs are ordered by when their outcome was recorded (`decidedAt`, then run
 *   id), not by creation: the run decided last is the current truth. SKIPPED runs did not run and are
 *   not in the order; runs still in flight are not yet in it (they will be decided after this one).
 * - **Previous: the channel's last word.** A run is compared with the latest run decided before it
 *   whose outcome the channel said, or would have said: one whose entry for this channel is a claim
 *   or a send (any `when`), or a `change` decision (sent or not: a run that repeated the state, or a
 *   first success, leaves the state at its outcome). Passed over, as the channel heard nothing of
 *   them: runs whose entry is a `failure` channel's suppression or a superseded one, and runs whose
 *   spec does not name the channel. A run with no entry yet is taken by its spec: `always` will speak,
 *   `failure` will if it failed, `change` is superseded (next point).
 * - **Superseded.** A `change` run decided before this one but not yet notified would, when its
 *   Notify comes, announce a state that is no longer the truth (this run's is) after this run's
 *   message. So this look-back records its entry first, as `suppressed` with `supersededBy` (one
 *   conditional put, `attribute_not_exists`: ledger recordSuppression) and passes it over. Its own
 *   Notify may be deciding at the same moment: its claim and this put are conditional writes on one
 *   key, so exactly one is recorded, and this look-back reads back which and follows it.
 *
 * Hence the invariant: once every run of the name is notified, the last message in decision order
 * states the latest-decided run's outcome (or no message was sent and it SUCCEEDED); and no decision
 * recorded after a later-decided run's is a send for an earlier run, since every earlier-decided
 * `change` run has an entry by then (its own, or a supersession). What is not ordered is delivery:
 * two sends in flight at once (or one re-sent after a definite non-delivery) may arrive in either
 * order; each message carries its run's end time. A channel that always speaks, or speaks on failure,
 * follows its own rule and is never superseded.
 *
 * A run that is itself SKIPPED is never a change, and reads no history.
 */
import { NotificationState, NotifyPolicy, NotifyWhen, Outcome, TriggerKind } from '../core/status';

/** The run a change is measured against: the one whose outcome the channel last said (or would have). */
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
  /** `change`, a suppression only: the later-decided run whose look-back superseded this one. */
  supersededBy?: string;
}

/** A run as the look-back's listing shows it: the fields of the ledger's run listing (RunSummary) it reads. */
export interface PastRun {
  runId: string;
  createdAt: string;
  /** When the outcome was recorded (absent while in flight). */
  decidedAt?: string;
  outcome?: Outcome;
  trigger: { kind: string; schedule?: string };
}

/** A channel's ledger entry for a past run, as far as the look-back reads it. */
export interface PastEntry {
  state: NotificationState;
  decision?: { when: NotifyWhen; supersededBy?: string };
}

/** A past run read consistently (Ledger.getRun fits): its outcome, its spec's channels, its entries. */
export interface PastRunView {
  run: PastRun & { spec: Record<string, unknown> };
  notifications: Record<string, PastEntry>;
}

/** The ledger as the look-back uses it; the Ledger satisfies it. */
export interface RunHistory {
  /** The runs of one name, newest created first, a page at a time. */
  listRuns(input: { name: string; limit: number; nextToken?: string }): Promise<{ runs: PastRun[]; nextToken?: string }>;
  /** One run and its entries, read consistently; undefined when it is gone. */
  getRun(runId: string): Promise<PastRunView | undefined>;
  /** A `suppressed` entry for the channel unless it has one; returns the entry that stands. */
  recordSuppression(
    runId: string,
    channel: string,
    input: { outcome: Outcome; policy: NotifyPolicy; decision: { when: NotifyWhen; reason: string; supersededBy?: string } },
  ): Promise<{ item: PastEntry }>;
}

/** The run being notified: where it sits in its name's history, and how it ended. */
export interface ThisRun {
  runId: string;
  /** The spec's name (the byName index's key). */
  name: string;
  createdAt: string;
  /** When its outcome was recorded: its place in the decision order. */
  decidedAt: string;
  trigger: { kind: string; schedule?: string };
  outcome: Outcome;
}

/**
 * How many runs of the name the look-back reads at most (the newest created first; runs created
 * after this one, and runs in flight, count). A previous run beyond them is treated as none: the
 * channel then speaks only if this run failed, as for a first run.
 */
export const LOOK_BACK_RUNS = 100;

/** The listing's page size (listRuns allows up to 100). */
const PAGE = 100;

/** Listed runs still in flight are re-read consistently (the index may lag a decision) this many at a time. */
const REREAD_AT_ONCE = 10;

/** `failure`'s test: every outcome but SUCCEEDED and SKIPPED. */
export function isFailure(outcome: Outcome): boolean {
  return outcome !== Outcome.SUCCEEDED && outcome !== Outcome.SKIPPED;
}

/**
 * The decision from what is known: `previous` is the run whose outcome the channel last said or would
 * have said (`change` only: lastWordBefore; undefined when there is none within the look-back).
 */
export function decideWhen(when: NotifyWhen, outcome: Outcome, previous?: PreviousRun): WhenDecision {
  switch (when) {
    case NotifyWhen.always:
      return { when, send: true, reason: 'the channel speaks for every outcome' };
    case NotifyWhen.failure:
      return isFailure(outcome) ? { when, send: true, reason: `${outcome} is a failure` } : { when, send: false, reason: `${outcome} is not a failure` };
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
 * The run whose outcome the channel last said (or would have said) before `run`, in decision order,
 * among the newest `lookBack` runs of the name (of `run`'s schedule, for a scheduled run); undefined
 * when there is none. On the way it supersedes the earlier-decided `change` runs not yet notified
 * (see the header): each gets its `suppressed` entry, unless its own decision is recorded first.
 */
export async function lastWordBefore(
  history: RunHistory,
  channel: string,
  run: Omit<ThisRun, 'outcome'>,
  lookBack = LOOK_BACK_RUNS,
): Promise<PreviousRun | undefined> {
  const position = decisionKey(run);
  const listed = await listedRuns(history, run, lookBack);
  // The index may not show a decision yet: a listed run in flight is read again, consistently.
  const views = new Map<string, PastRunView | undefined>();
  const inFlight = listed.filter((past) => past.outcome === undefined);
  for (let i = 0; i < inFlight.length; i += REREAD_AT_ONCE) {
    await Promise.all(inFlight.slice(i, i + REREAD_AT_ONCE).map(async (past) => views.set(past.runId, await history.getRun(past.runId))));
  }
  const decidedBefore = listed
    .map((past) => (past.outcome === undefined ? views.get(past.runId)?.run : past))
    .filter((past): past is PastRun & { outcome: Outcome } => past?.outcome !== undefined && past.outcome !== Outcome.SKIPPED && decisionKey(past) < position)
    .sort((a, b) => (decisionKey(a) < decisionKey(b) ? 1 : -1));
  for (const past of decidedBefore) {
    const view = views.has(past.runId) ? views.get(past.runId) : await history.getRun(past.runId);
    if (await channelSpokeFor(history, channel, past, view, run.runId)) return { runId: past.runId, outcome: past.outcome };
  }
  return undefined;
}

/** The decision for one channel of `run`; reads the history only for `change`. */
export async function decideChannel(history: RunHistory, channel: string, when: NotifyWhen, run: ThisRun): Promise<WhenDecision> {
  if (when !== NotifyWhen.change || run.outcome === Outcome.SKIPPED) return decideWhen(when, run.outcome);
  return decideWhen(when, run.outcome, await lastWordBefore(history, channel, run));
}

/** The newest `lookBack` runs of the name (each counts), less `run` itself and, for a scheduled run, other triggers'. */
async function listedRuns(history: RunHistory, run: Omit<ThisRun, 'outcome'>, lookBack: number): Promise<PastRun[]> {
  const schedule = run.trigger.kind === TriggerKind.schedule ? run.trigger.schedule : undefined;
  const runs: PastRun[] = [];
  let read = 0;
  let nextToken: string | undefined;
  do {
    const page = await history.listRuns({ name: run.name, limit: Math.min(PAGE, lookBack - read), ...(nextToken !== undefined ? { nextToken } : {}) });
    for (const past of page.runs) {
      if (++read > lookBack) return runs;
      if (past.runId === run.runId) continue;
      if (schedule !== undefined && (past.trigger.kind !== TriggerKind.schedule || past.trigger.schedule !== schedule)) continue;
      runs.push(past);
    }
    nextToken = page.nextToken;
  } while (nextToken !== undefined && read < lookBack);
  return runs;
}

/**
 * Whether the channel said (or would have said) `past`'s outcome, which then is its last word before
 * the run `by`. A run without an entry for the channel is taken by its spec; a `change` one is
 * superseded by `by` unless its own decision gets recorded first (whichever stands is followed).
 */
async function channelSpokeFor(
  history: RunHistory,
  channel: string,
  past: PastRun & { outcome: Outcome },
  view: PastRunView | undefined,
  by: string,
): Promise<boolean> {
  // Gone since the listing (its retention ended): taken by the outcome the listing shows.
  if (!view) return true;
  let entry = view.notifications[channel];
  if (!entry) {
    const notify = notifyOf(view.run.spec);
    const when = whenOf(notify, channel);
    if (when === undefined) return false;
    if (when === NotifyWhen.always) return true;
    if (when === NotifyWhen.failure) return isFailure(past.outcome);
    const decision = { when, reason: `superseded by run ${by}, decided after this one and notified first`, supersededBy: by };
    entry = (await history.recordSuppression(past.runId, channel, { outcome: past.outcome, policy: notify.policy, decision })).item;
  }
  if (entry.state !== NotificationState.suppressed) return true;
  // A `change` channel that kept quiet left the state at this outcome (it repeated it, or was a first success).
  return entry.decision?.when === NotifyWhen.change && entry.decision.supersededBy === undefined;
}

/** A stored spec's notify section, read defensively (runs of old versions, or fixtures, may lack it). */
function notifyOf(spec: Record<string, unknown>): { channels: unknown[]; when: Record<string, unknown>; policy: NotifyPolicy } {
  const notify = (typeof spec.notify === 'object' && spec.notify !== null ? spec.notify : {}) as Record<string, unknown>;
  const policy = Object.values(NotifyPolicy).find((p) => p === notify.policy) ?? NotifyPolicy.atMostOnce;
  const when = typeof notify.when === 'object' && notify.when !== null ? (notify.when as Record<string, unknown>) : {};
  return { channels: Array.isArray(notify.channels) ? notify.channels : [], when, policy };
}

/** The channel's `when` in a stored spec (channels are names, `when` holds those not `always`); undefined when it is not one of its channels. */
function whenOf(notify: ReturnType<typeof notifyOf>, channel: string): NotifyWhen | undefined {
  for (const entry of notify.channels) {
    const name = typeof entry === 'string' ? entry : (entry as { name?: unknown } | null)?.name;
    if (name !== channel) continue;
    const given = notify.when[channel] ?? (typeof entry === 'object' ? (entry as { when?: unknown }).when : undefined);
    return Object.values(NotifyWhen).find((w) => w === given) ?? NotifyWhen.always;
  }
  return undefined;
}

/** The decision order: when the outcome was recorded (creation, for a run recorded without it), then run id. */
const decisionKey = (run: { decidedAt?: string; createdAt: string; runId: string }) => `${run.decidedAt ?? run.createdAt}#${run.runId}`;
