/**
 * The one error hierarchy. Every error sets `name` to a string literal (Step Functions matches
 * Retry/Catch on it) and says whether a retry may succeed. The ASL Retry/Catch lists and the
 * CDK app are built from RETRYABLE_ERROR_NAMES / ERROR_NAMES, never from hand-written strings.
 */

export interface Problem {
  /** Dotted path of the offending field, e.g. `runner.image` or `arguments.3`. */
  path: string;
  /** What is wrong, naming the rule or limit. */
  message: string;
}

export abstract class LoadplaneError extends Error {
  abstract override readonly name: string;
  abstract readonly retryable: boolean;
}

/** A run spec (or other request input) broke the schema, a limit or an allow-list. */
export class SpecInvalid extends LoadplaneError {
  override readonly name = 'SpecInvalid' as const;
  readonly retryable = false;
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
}

/** The same idempotency key (so the same run id) was used with a different spec: runs are immutable. */
export class RunConflict extends LoadplaneError {
  override readonly name = 'RunConflict' as const;
  readonly retryable = false;
  constructor(
    readonly runId: string,
    readonly current: unknown,
  ) {
    super(`run ${runId} already exists with a different spec; a run's spec cannot be changed`);
  }
}

export class RunNotFound extends LoadplaneError {
  override readonly name = 'RunNotFound' as const;
  readonly retryable = false;
  constructor(readonly runId: string) {
    super(`run ${runId} does not exist`);
  }
}

/** Another owner holds a live lease on this stage (or notification claim): retry later. */
export class StageBusy extends LoadplaneError {
  override readonly name = 'StageBusy' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly stage: string,
    readonly current: unknown,
  ) {
    super(`stage ${stage} of run ${runId} is in progress under another owner`);
  }
}

/** Fencing: the caller's lease was taken over, so its completion is rejected. */
export class StageOwnershipLost extends LoadplaneError {
  override readonly name = 'StageOwnershipLost' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly stage: string,
    readonly current: unknown,
  ) {
    super(`stage ${stage} of run ${runId} is no longer owned by this caller (lease taken over)`);
  }
}

/** An illegal state change was asked for (e.g. a backward status move, overwriting a terminal state). */
export class InvalidTransition extends LoadplaneError {
  override readonly name = 'InvalidTransition' as const;
  readonly retryable = false;
  constructor(
    message: string,
    readonly current: unknown,
  ) {
    super(message);
  }
}

/**
 * A stage that acts on the cluster was invoked for a run that already has its outcome (a late or
 * duplicated invocation after a hard stop, a timeout or the reaper): it does nothing, and says so.
 */
export class RunEnded extends LoadplaneError {
  override readonly name = 'RunEnded' as const;
  readonly retryable = false;
  constructor(
    readonly runId: string,
    readonly stage: string,
    readonly outcome: string,
  ) {
    super(`${stage}: run ${runId} has already ended ${outcome}; nothing done`);
  }
}

/** The ledger store failed in a way a retry may fix (throttling, 5xx, network). */
export class TransientStoreError extends LoadplaneError {
  override readonly name = 'TransientStoreError' as const;
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The ledger store failed in a way a retry will not fix (missing table, access denied, bad request). */
export class StoreError extends LoadplaneError {
  override readonly name = 'StoreError' as const;
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A notification claim is held by a live lease (someone is sending right now): retry later. */
export class NotificationInProgress extends LoadplaneError {
  override readonly name = 'NotificationInProgress' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly channel: string,
    readonly current: unknown,
  ) {
    super(`notification ${channel} of run ${runId} is being sent by another caller`);
  }
}

/** No webhook is configured for the channel (no secret, no local entry), or the name is not a channel. */
export class ChannelNotConfigured extends LoadplaneError {
  override readonly name = 'ChannelNotConfigured' as const;
  readonly retryable = false;
  constructor(readonly channel: string, detail: string) {
    super(`notification channel ${channel}: ${detail}`);
  }
}

/** The channel's configuration exists but is not `{ "url": "http(s)://...", "signingSecret"?: "..." }`. */
export class ChannelSecretInvalid extends LoadplaneError {
  override readonly name = 'ChannelSecretInvalid' as const;
  readonly retryable = false;
  constructor(readonly channel: string, problem: string) {
    super(`notification channel ${channel}: its configuration is invalid: ${problem}`);
  }
}

/** The secret store failed (throttling, network, access): a retry may succeed. */
export class ChannelSecretUnavailable extends LoadplaneError {
  override readonly name = 'ChannelSecretUnavailable' as const;
  readonly retryable = true;
  constructor(readonly channel: string, detail: string, options?: { cause?: unknown }) {
    super(`notification channel ${channel}: its secret could not be read: ${detail}`, options);
  }
}

/**
 * A notification is not confirmed delivered: either definitely not (refused before the request was
 * written, or a 408/429/5xx answer; the claim was released) or perhaps (no answer; the claim stays
 * until its lease expires and the policy decides). A retry of the stage finishes it.
 */
export class NotificationNotDelivered extends LoadplaneError {
  override readonly name = 'NotificationNotDelivered' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly channels: string[],
  ) {
    super(`run ${runId}: notification not confirmed delivered on ${channels.join(', ')}; retrying`);
  }
}

/** Kubernetes API failures, by HTTP status (DESIGN §7). `status` is the HTTP status when there was one. */
abstract class ClusterError extends LoadplaneError {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 404: the object (or its namespace) does not exist. */
export class ClusterNotFound extends ClusterError {
  override readonly name = 'ClusterNotFound' as const;
  readonly retryable = false;
}

/** 409, or an existing object that belongs to another run. */
export class ClusterConflict extends ClusterError {
  override readonly name = 'ClusterConflict' as const;
  readonly retryable = false;
}

/** 410: a resourceVersion too old; a fresh list fixes it. */
export class ClusterGone extends ClusterError {
  override readonly name = 'ClusterGone' as const;
  readonly retryable = true;
}

/** 429: the API server is shedding load. */
export class ClusterThrottled extends ClusterError {
  override readonly name = 'ClusterThrottled' as const;
  readonly retryable = true;
}

/** 5xx, timeouts, connection errors. */
export class ClusterUnavailable extends ClusterError {
  override readonly name = 'ClusterUnavailable' as const;
  readonly retryable = true;
}

/** 400/422: the API server rejected what we sent. */
export class ClusterRejected extends ClusterError {
  override readonly name = 'ClusterRejected' as const;
  readonly retryable = false;
}

/** 401/403: our identity may not do this (access entry, RBAC). */
export class ClusterForbidden extends ClusterError {
  override readonly name = 'ClusterForbidden' as const;
  readonly retryable = false;
}

/** Every error name the state machine may see from our code. */
export const ERROR_NAMES = [
  'SpecInvalid',
  'RunConflict',
  'RunNotFound',
  'StageBusy',
  'StageOwnershipLost',
  'InvalidTransition',
  'RunEnded',
  'TransientStoreError',
  'StoreError',
  'NotificationInProgress',
  'NotificationNotDelivered',
  'ChannelNotConfigured',
  'ChannelSecretInvalid',
  'ChannelSecretUnavailable',
  'ClusterNotFound',
  'ClusterConflict',
  'ClusterGone',
  'ClusterThrottled',
  'ClusterUnavailable',
  'ClusterRejected',
  'ClusterForbidden',
] as const;
export type ErrorName = (typeof ERROR_NAMES)[number];

/** Names a Task Retry matches (DESIGN §6): our retryable errors. */
export const RETRYABLE_ERROR_NAMES: readonly ErrorName[] = [
  'StageBusy',
  'StageOwnershipLost',
  'TransientStoreError',
  'NotificationInProgress',
  'NotificationNotDelivered',
  'ChannelSecretUnavailable',
  'ClusterGone',
  'ClusterThrottled',
  'ClusterUnavailable',
];

export function isRetryable(err: unknown): boolean {
  return err instanceof LoadplaneError && err.retryable;
}
