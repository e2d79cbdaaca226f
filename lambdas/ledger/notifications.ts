/**
 * The run's one notification per channel (architecture §5): claim before sending, mark sent after,
 * release on a definite non-delivery. Each claim gets a fresh token; mark and release are fenced on it.
 * A claim records its holder (the caller: the execution, or the reaper acting for it), so a caller
 * that meets a live claim is told whether it is its own earlier attempt's or another caller's.
 *
 * A channel with a `when` (failure, change) may have nothing to say for a run. Whether it speaks is
 * decided once, by the first caller, and recorded in the same single conditional write as its claim:
 * claimNotification's `decide` is asked only when the channel has no entry yet (one consistent read
 * first), then either the claim is written carrying the decision (`attribute_not_exists OR released`,
 * as any claim) or a `suppressed` item is put (`attribute_not_exists`). A caller that loses that race,
 * and every later one (a retry, the reaper, the sweeper), meets the recorded entry and follows it: a
 * `suppressed` entry is never claimed, marked or released, so it is never sent, whatever a later
 * look-back would say; a send decision stays on the entry across releases and re-claims. Without
 * `decide` (a channel that always speaks, or the sweeper resolving a stale claim) nothing changes.
 *
 * recordSuppression writes the same `suppressed` entry for another run than the caller's: a `change`
 * look-back's decision that an earlier-decided run, not yet notified, is superseded (notify/when.ts).
 * It is the same put on the same key, so that run's own first decision and this one race as any two
 * deciders do, and one of them is recorded.
 */
import { randomUUID } from 'node:crypto';
import { NotificationInProgress, StageOwnershipLost, TransientStoreError } from '../core/errors';
import { holderFor } from './stages';
import { NotificationState, NotifyPolicy, type Outcome } from '../core/status';
import { parseNotificationItem, type NotificationDecision, type NotificationItem } from './items';
import { CLAIMABLE, ITEM_ABSENT, releasableWith, sendableWith, stillClaimedWith } from './conditions';
import { NOTIFY_SK_PREFIX, expiresAt, notificationKey } from './keys';
import { MAX_ATTEMPTS, conditionalPut, conditionalUpdate, getItem, isoNow, type LedgerContext } from './store';

export interface ClaimOptions {
  leaseMs: number;
  policy: NotifyPolicy;
  /** The recorded outcome the message reports; part of the dedupe key. */
  outcome: Outcome;
  /** Who claims (an execution ARN; StageDeps.caller), recorded with the claim. */
  holder?: string;
  /**
   * Whether the channel speaks at all (its `when`): asked only when the channel has no entry yet, and
   * recorded with the claim, or as a `suppressed` entry (see the header). Without it: always.
   */
  decide?: () => Promise<ClaimDecision>;
}
/** A channel's `when` decision as the claim records it (notify/when.ts's WhenDecision fits). */
export type ClaimDecision = NotificationDecision & { send: boolean };
export type ClaimNotificationResult =
  /** Send now, with `dedupeKey` as the Idempotency-Key. `resend`: a previous claim may have delivered it. */
  | { kind: 'claimed'; token: string; dedupeKey: string; resend: boolean }
  /** Already sent: do not send. */
  | { kind: 'sent'; item: NotificationItem }
  /** A claim expired unmarked under atMostOnce: it may or may not have been delivered; never re-sent. */
  | { kind: 'unknown'; item: NotificationItem }
  /** The channel's `when` said not to send for this run (item.decision says why): never sent. */
  | { kind: 'suppressed'; item: NotificationItem };
export type MarkSentResult = { kind: 'sent'; item: NotificationItem };
export type ReleaseResult = { kind: 'released'; item: NotificationItem };

/** Errors name the notification like a stage, so fencing looks the same for both. */
const fencedName = (channel: string) => NOTIFY_SK_PREFIX + channel;

export async function claimNotification(
  ctx: LedgerContext,
  runId: string,
  channel: string,
  { leaseMs, policy, outcome, holder, decide }: ClaimOptions,
): Promise<ClaimNotificationResult> {
  const operation = `claimNotification ${runId} ${channel}`;
  const key = notificationKey(runId, channel);
  const dedupeKey = `${runId}:${outcome}`;
  // The first caller decides; an entry already there carries the decision (or predates `when`).
  let decision: NotificationDecision | undefined;
  if (decide && (await getItem(ctx, operation, key)) === undefined) {
    const decided = await decide();
    decision = recordedDecision(decided);
    if (!decided.send) {
      const put = await putSuppressed(ctx, operation, runId, channel, { outcome, policy, decision });
      if (put.ok) return { kind: 'suppressed', item: parseNotificationItem(put.attributes) };
      // Another caller recorded its decision first: the claim below meets its entry and follows it.
      decision = undefined;
    }
  }
  const setDecision = decision === undefined ? '' : ', #decision = if_not_exists(#decision, :decision)';
  // Stryker disable next-line ConditionalExpression: the client drops an undefined value (removeUndefinedValues), so :decision is sent exactly when the update names it either way
  const decisionValue = decision === undefined ? {} : { ':decision': decision };
  // A claim without a holder must not keep an earlier claim's: it would name the wrong caller.
  const setHolder = holder === undefined ? '' : ', #holder = :holder';
  const removeHolder = holder === undefined ? ' REMOVE #holder' : '';
  // Stryker disable next-line ConditionalExpression: the client drops an undefined value (removeUndefinedValues), so :holder is sent exactly when the update names it either way
  const holderValue = holder === undefined ? {} : { ':holder': holder };
  let current: NotificationItem | undefined;
  let currentHolder: string | undefined;
  const busy = (item: NotificationItem | undefined, nowMs: number) =>
    new NotificationInProgress(runId, channel, item, item && { holder: holderFor(holder, currentHolder), leaseLeftMs: Math.max(0, item.leaseUntil - nowMs) });
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const nowMs = ctx.now();
    const token = randomUUID();
    const lease = { ':token': token, ':lease': nowMs + leaseMs, ':now': isoNow(ctx), ':policy': policy, ':one': 1 };
    const claim = await conditionalUpdate(ctx, operation, {
      key,
      update:
        'SET #runId = :runId, #channel = :channel, #state = :claimed, #token = :token, #leaseUntil = :lease, ' +
        '#dedupeKey = if_not_exists(#dedupeKey, :dedupeKey), #outcome = if_not_exists(#outcome, :outcome), ' +
        '#policy = :policy, #claimedAt = :now, #claims = if_not_exists(#claims, :zero) + :one, ' +
        `#expiresAt = if_not_exists(#expiresAt, :expiresAt)${setHolder}${setDecision} REMOVE #releasedAt, #releaseReason${holder === undefined ? ', #holder' : ''}`,
      condition: CLAIMABLE,
      values: {
        ...lease,
        ':runId': runId,
        ':channel': channel,
        ':claimed': NotificationState.claimed,
        ':dedupeKey': dedupeKey,
        ':outcome': outcome,
        ':zero': 0,
        ':expiresAt': expiresAt(nowMs),
        ...holderValue,
        ...decisionValue,
      },
      returnValues: 'ALL_NEW',
    });
    if (claim.ok) return { kind: 'claimed', token, dedupeKey: parseNotificationItem(claim.attributes).dedupeKey, resend: false };
    if (!claim.current) continue;
    current = parseNotificationItem(claim.current);
    // Stryker disable next-line ConditionalExpression: a claim writes its holder only as a string (ClaimOptions.holder), so a holder read back is a string or absent
    currentHolder = typeof claim.current.holder === 'string' ? claim.current.holder : undefined;
    if (current.state === NotificationState.sent) return { kind: 'sent', item: current };
    if (current.state === NotificationState.unknown) return { kind: 'unknown', item: current };
    if (current.state === NotificationState.suppressed) return { kind: 'suppressed', item: current };
    if (current.state !== NotificationState.claimed) continue;
    if (current.leaseUntil >= nowMs) throw busy(current, nowMs);

    // The claim expired unmarked: whoever held it died mid-send, or is still sending very late.
    if (policy === NotifyPolicy.atLeastOnce) {
      const resend = await conditionalUpdate(ctx, operation, {
        key,
        update: `SET #token = :token, #leaseUntil = :lease, #claimedAt = :now, #policy = :policy, #claims = #claims + :one${setHolder}${removeHolder}`,
        condition: stillClaimedWith(current.token),
        values: { ...lease, ...holderValue },
        returnValues: 'ALL_NEW',
      });
      if (resend.ok) return { kind: 'claimed', token, dedupeKey: current.dedupeKey, resend: true };
    } else {
      // The token stays, so a late sender can still mark it sent and resolve the doubt.
      const giveUp = await conditionalUpdate(ctx, operation, {
        key,
        update: 'SET #state = :unknown, #unknownAt = :now, #policy = :policy',
        condition: stillClaimedWith(current.token),
        values: { ':unknown': NotificationState.unknown, ':now': isoNow(ctx), ':policy': policy },
        returnValues: 'ALL_NEW',
      });
      if (giveUp.ok) return { kind: 'unknown', item: parseNotificationItem(giveUp.attributes) };
    }
  }
  throw busy(current, ctx.now());
}

/** What recordSuppression records: the entry's outcome and policy as a claim's would be, and why nothing is sent. */
export interface SuppressionInput {
  outcome: Outcome;
  policy: NotifyPolicy;
  decision: NotificationDecision;
}
export type RecordSuppressionResult =
  /** The `suppressed` entry was written by this call. */
  | { kind: 'recorded'; item: NotificationItem }
  /** The channel already had an entry (a claim, a send, a suppression): it stands, as it is. */
  | { kind: 'existing'; item: NotificationItem };

/**
 * Records that `channel` sends nothing for `runId` — unless the channel already has an entry, which
 * then stands: one conditional put (`attribute_not_exists`), as claimNotification's own suppression.
 * A `change` channel's look-back uses it for an earlier-decided run not yet notified (notify/when.ts,
 * `supersededBy`): whichever of that run's own decision and this put comes first is what holds.
 */
export async function recordSuppression(ctx: LedgerContext, runId: string, channel: string, input: SuppressionInput): Promise<RecordSuppressionResult> {
  const operation = `recordSuppression ${runId} ${channel}`;
  for (let attempt = 1; ; attempt++) {
    const put = await putSuppressed(ctx, operation, runId, channel, input);
    if (put.ok) return { kind: 'recorded', item: parseNotificationItem(put.attributes) };
    if (put.current) return { kind: 'existing', item: parseNotificationItem(put.current) };
    // The condition failed but the fallback read found nothing (the entry expired in between): again.
    if (attempt >= MAX_ATTEMPTS) throw new TransientStoreError(`${operation}: the entry's condition failed, yet no entry is there`);
  }
}

/** The `suppressed` entry, put only where the channel has none. */
function putSuppressed(ctx: LedgerContext, operation: string, runId: string, channel: string, { outcome, policy, decision }: SuppressionInput) {
  const nowMs = ctx.now();
  return conditionalPut(ctx, operation, {
    item: {
      ...notificationKey(runId, channel),
      runId,
      channel,
      state: NotificationState.suppressed,
      token: randomUUID(),
      leaseUntil: 0,
      dedupeKey: `${runId}:${outcome}`,
      outcome,
      policy,
      claims: 0,
      claimedAt: isoNow(ctx),
      decision,
      expiresAt: expiresAt(nowMs),
    },
    condition: ITEM_ABSENT,
  });
}

/** The decision as stored: without `send` (the entry's state says it) and without unset fields. */
function recordedDecision({ when, reason, previous, supersededBy }: ClaimDecision): NotificationDecision {
  return {
    when,
    reason,
    ...(previous ? { previous: { runId: previous.runId, outcome: previous.outcome } } : {}),
    // Stryker disable next-line ConditionalExpression: an undefined supersededBy is dropped on write (removeUndefinedValues) and by the item's parse, so the decision is the same without it
    ...(supersededBy !== undefined ? { supersededBy } : {}),
  };
}

/**
 * Records the delivery. Fenced on the token: a claim taken over for a resend rejects its former holder.
 * A claim declared `unknown` keeps its token, so its late sender turns it into `sent`.
 */
export async function markNotificationSent(
  ctx: LedgerContext,
  runId: string,
  channel: string,
  token: string,
  response: { status: number },
): Promise<MarkSentResult> {
  const write = await conditionalUpdate(ctx, `markNotificationSent ${runId} ${channel}`, {
    key: notificationKey(runId, channel),
    update: 'SET #state = :sent, #sentAt = :now, #response = :response',
    condition: sendableWith(token),
    values: {
      ':sent': NotificationState.sent,
      ':now': isoNow(ctx),
      ':response': { status: response.status },
    },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'sent', item: parseNotificationItem(write.attributes) };
  const current = write.current && parseNotificationItem(write.current);
  if (current?.state === NotificationState.sent && current.token === token) return { kind: 'sent', item: current };
  throw new StageOwnershipLost(runId, fencedName(channel), current);
}

/** Gives the claim back after a definite non-delivery, so a later claim may send. */
export async function releaseNotification(ctx: LedgerContext, runId: string, channel: string, token: string, reason: string): Promise<ReleaseResult> {
  const write = await conditionalUpdate(ctx, `releaseNotification ${runId} ${channel}`, {
    key: notificationKey(runId, channel),
    update: 'SET #state = :released, #releasedAt = :now, #releaseReason = :reason',
    condition: releasableWith(token),
    values: {
      ':released': NotificationState.released,
      ':now': isoNow(ctx),
      ':reason': reason,
    },
    returnValues: 'ALL_NEW',
  });
  if (write.ok) return { kind: 'released', item: parseNotificationItem(write.attributes) };
  const current = write.current && parseNotificationItem(write.current);
  if (current?.state === NotificationState.released && current.token === token) return { kind: 'released', item: current };
  throw new StageOwnershipLost(runId, fencedName(channel), current);
}
