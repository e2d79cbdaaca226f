/**
 * Every condition the ledger's writes are guarded by, in one place: each is an expression with the
 * `:values` it uses (store.ts merges them with the write's own). `#names` are not listed: store.ts
 * derives them from the text (`#state` → `state`).
 */
import { NotificationState, StageState } from '../core/status';

export interface Condition {
  expression: string;
  values?: Record<string, unknown>;
}

/** The item does not exist yet: a create that only the first writer wins. */
export const ITEM_ABSENT: Condition = { expression: 'attribute_not_exists(#pk)' };

/** The item is still at the version the writer read (optimistic locking: groups, schedule pointers). */
export const atVersion = (version: number): Condition => ({ expression: '#version = :version', values: { ':version': version } });

// Runs (runs.ts).

/** The run exists and no execution owns it, or `executionArn` does (a retried adopt). */
export const adoptableBy = (executionArn: string): Condition => ({
  expression: 'attribute_exists(#pk) AND (attribute_not_exists(#executionArn) OR #executionArn = :arn)',
  values: { ':arn': executionArn },
});

/** The run exists and its status ranks below `rank`: statuses only move forward. */
export const statusBelow = (rank: number): Condition => ({
  expression: 'attribute_exists(#pk) AND #statusRank < :rank',
  values: { ':rank': rank },
});

/** The run exists and has no outcome yet: the first outcome is the only one. */
export const OUTCOME_UNDECIDED: Condition = { expression: 'attribute_exists(#pk) AND attribute_not_exists(#outcome)' };

/** The run exists, has no outcome, and no execution adopted it (an adoption wins over endUnstartedRun). */
export const UNADOPTED_AND_UNDECIDED: Condition = {
  expression: 'attribute_exists(#pk) AND attribute_not_exists(#outcome) AND attribute_not_exists(#executionArn)',
};

/** The run exists, has no outcome, and nobody asked to abort it yet (the first request stays). */
export const ABORT_NOT_REQUESTED: Condition = {
  expression: 'attribute_exists(#pk) AND attribute_not_exists(#outcome) AND attribute_not_exists(#abortRequestedAt)',
};

// Stages (stages.ts).

/** A stage may begin: it never began, its last attempt failed, or its lease expired before `nowMs`. */
export const stageBeginnable = (nowMs: number): Condition => ({
  expression: 'attribute_not_exists(#pk) OR #state = :failed OR (#state = :inProgress AND #leaseUntil < :nowMs)',
  values: { ':failed': StageState.failed, ':inProgress': StageState.in_progress, ':nowMs': nowMs },
});

/** The stage's attempt is still `owner`'s and in progress: the fence of renew, mark, complete and fail. */
export const ownersLiveAttempt = (owner: string): Condition => ({
  expression: '#owner = :owner AND #state = :inProgress',
  values: { ':owner': owner, ':inProgress': StageState.in_progress },
});

// Notifications (notifications.ts).

/** The channel has no entry, or its last claim was released after a definite non-delivery. */
export const CLAIMABLE: Condition = {
  expression: 'attribute_not_exists(#pk) OR #state = :released',
  values: { ':released': NotificationState.released },
};

/** The expired claim is still the one read (token `oldToken`): one caller takes it over or declares it unknown. */
export const stillClaimedWith = (oldToken: string): Condition => ({
  expression: '#state = :claimed AND #token = :oldToken',
  values: { ':claimed': NotificationState.claimed, ':oldToken': oldToken },
});

/** The claim is `token`'s, claimed or declared unknown (a late sender resolves the doubt): it may be marked sent. */
export const sendableWith = (token: string): Condition => ({
  expression: '#token = :token AND (#state = :claimed OR #state = :unknown)',
  values: { ':token': token, ':claimed': NotificationState.claimed, ':unknown': NotificationState.unknown },
});

/** The claim is `token`'s and still claimed: it may be released. */
export const releasableWith = (token: string): Condition => ({
  expression: '#token = :token AND #state = :claimed',
  values: { ':token': token, ':claimed': NotificationState.claimed },
});
