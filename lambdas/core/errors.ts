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

/**
 * Who holds a lease or claim, as far as the ledger recorded it, seen by the caller that met it
 * (architecture §4): `own` — an earlier attempt of the same caller (the same execution, or the reaper
 * acting for it), which crashed, timed out or is still finishing, since Step Functions runs one
 * attempt of a Task at a time; `other` — a different caller (another execution, the reaper for
 * another); `unknown` — nothing recorded tells.
 */
export type Holder = 'own' | 'other' | 'unknown';

export interface BusyDetail {
  holder: Holder;
  /** Until the lease (claim) expires, on the ledger's clock; 0 when it has (a race). */
  leaseLeftMs: number;
}

/** Whole seconds left, never "0 s" while some is left. */
export function secondsLeft(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/** A live lease on this stage is held by an earlier attempt or by another caller: retry later (the message says which). */
export class StageBusy extends LoadplaneError {
  override readonly name = 'StageBusy' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly stage: string,
    readonly current: unknown,
    readonly detail?: BusyDetail,
  ) {
    super(describeBusyStage(runId, stage, detail));
  }
}

function describeBusyStage(runId: string, stage: string, detail: BusyDetail | undefined): string {
  if (!detail) return `stage ${stage} of run ${runId} is in progress under another owner`;
  const left = `its lease expires in ${secondsLeft(detail.leaseLeftMs)} s`;
  if (detail.holder === 'own') {
    return `stage ${stage} of run ${runId} is still held by an earlier attempt of this execution (it crashed, timed out or is still finishing); ${left}, then a retry takes over`;
  }
  const who = detail.holder === 'other' ? 'another caller' : 'another owner';
  return `stage ${stage} of run ${runId} is in progress under ${who}; ${left}`;
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

export interface ClaimDetail extends BusyDetail {
  /**
   * Why the delivery of the claim's send is unknown ("connection dropped", "no answer within 10 s"),
   * when the attempt that sent it said so: the send is over, only the claim's lease is left to expire.
   */
  deliveryUnknown?: string;
}

/**
 * A notification claim is held by a live lease: retry later. Either a send is in flight elsewhere, or
 * an earlier attempt's delivery is unknown and its claim must expire before the policy decides
 * whether to send again (architecture §5). The message says which, and how long is left.
 */
export class NotificationInProgress extends LoadplaneError {
  override readonly name = 'NotificationInProgress' as const;
  readonly retryable = true;
  constructor(
    readonly runId: string,
    readonly channel: string,
    readonly current: unknown,
    readonly detail?: ClaimDetail,
  ) {
    super(describeBusyClaim(runId, channel, detail));
  }
}

/** The words for a delivery whose result is unknown, as NotificationNotDelivered and NotificationInProgress both say it. */
export function deliveryUnknownText(channel: string, cause: string): string {
  return `${channel}: delivery unknown (${cause})`;
}

/**
 * What a failed stage attempt records of its error (ledger failStage), for the next attempt to read
 * (run-once.ts, Attempt.previousError).
 */
export interface FailureRecord {
  name: string;
  message: string;
  /** Channel → why its delivery is unknown, when the error said so (NotificationNotDelivered, NotificationInProgress). */
  deliveryUnknown?: Record<string, string>;
}

/** The record of `err`: its name and message, and the delivery causes it carries as fields. */
export function failureRecord(err: unknown): FailureRecord {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const record = { name: err.name, message: err.message };
  const deliveryUnknown =
    err instanceof NotificationNotDelivered
      ? err.deliveryUnknown
      : err instanceof NotificationInProgress && err.detail?.deliveryUnknown !== undefined
        ? { [err.channel]: err.detail.deliveryUnknown }
        : {};
  return Object.keys(deliveryUnknown).length > 0 ? { ...record, deliveryUnknown } : record;
}

const WAIT_THEN_DECIDE = 'for the claim to expire before deciding whether to send again';

function describeBusyClaim(runId: string, channel: string, detail: ClaimDetail | undefined): string {
  if (!detail) return `notification ${channel} of run ${runId} is being sent by another caller`;
  const left = secondsLeft(detail.leaseLeftMs);
  if (detail.deliveryUnknown !== undefined) return `${deliveryUnknownText(channel, detail.deliveryUnknown)}; waiting ${left} s ${WAIT_THEN_DECIDE}`;
  if (detail.holder === 'own') {
    return `${channel}: an earlier attempt of this execution claimed the notification and recorded no result (it crashed, timed out or is still sending), so delivery is unknown; waiting ${left} s ${WAIT_THEN_DECIDE}`;
  }
  return `notification ${channel} of run ${runId} is being sent by ${detail.holder === 'other' ? 'another caller' : 'another owner'}; its claim expires in ${left} s`;
}

/** No webhook is configured for the channel (no secret, no local entry), or the name is not a channel. */
export class ChannelNotConfigured extends LoadplaneError {
  override readonly name = 'ChannelNotConfigured' as const;
  readonly retryable = false;
  constructor(
    readonly channel: string,
    detail: string,
  ) {
    super(`notification channel ${channel}: ${detail}`);
  }
}

/** The channel's configuration exists but is not `{ "url": "http(s)://...", "signingSecret"?: "..." }`. */
export class ChannelSecretInvalid extends LoadplaneError {
  override readonly name = 'ChannelSecretInvalid' as const;
  readonly retryable = false;
  constructor(
    readonly channel: string,
    problem: string,
  ) {
    super(`notification channel ${channel}: its configuration is invalid: ${problem}`);
  }
}

/** The secret store failed (throttling, network, access): a retry may succeed. */
export class ChannelSecretUnavailable extends LoadplaneError {
  override readonly name = 'ChannelSecretUnavailable' as const;
  readonly retryable = true;
  constructor(
    readonly channel: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
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
    /** Per channel, what became of the send (deliveryUnknownText for an unknown one). */
    readonly details: Record<string, string> = {},
    /** Per channel whose delivery is unknown, why ("connection dropped"): what the next attempt reads. */
    readonly deliveryUnknown: Record<string, string> = {},
  ) {
    const said = channels.map((c) => details[c] ?? c);
    super(`run ${runId}: notification not confirmed delivered: ${said.join('; ')}`);
  }
}

/** Kubernetes API failures, by HTTP status (architecture §7). `status` is the HTTP status when there was one. */
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

/** Names a Task Retry matches (architecture §6): our retryable errors. */
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
