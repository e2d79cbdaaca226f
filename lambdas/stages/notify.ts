/**
 * Notify (architecture §5): exactly one completion message per run and channel, whichever path gets here
 * (the main path, the fail path, the reaper). For each channel — the spec's and the deployment's
 * defaults — the message is claimed in the ledger before it is sent and marked after:
 * - already sent: nothing is sent again;
 * - claimed by a live lease elsewhere: NotificationInProgress (retried; by then it is sent);
 * - a definite non-delivery (refused before the request was written, 408/429/5xx): the claim is
 *   released and the stage fails with NotificationNotDelivered, so Step Functions retries the send;
 * - an ambiguous send (the request may have arrived, no answer): the claim is left to expire; the
 *   next attempt applies the spec's policy — `atMostOnce` records `unknown` and never re-sends,
 *   `atLeastOnce` re-sends with the same Idempotency-Key;
 * - rejected by the receiver (a 4xx): it got the message; marked with the status, not re-sent.
 *
 * While an ambiguous send's claim waits to expire, the retries say so — "webhook: delivery unknown
 * (connection dropped); waiting 28 s for the claim to expire before deciding whether to send again" —
 * and "being sent by another caller" only when the claim is another caller's (deps.caller, recorded
 * with the claim). The cause comes from the previous attempt's recorded error (its `deliveryUnknown` field).
 *
 * The message's times, sentAt included, are on the cluster's clock (`deps.now`; simulated locally,
 * and the message says so); the webhook signature's timestamp stays on the wall clock.
 *
 * A spec's channel may speak only on `failure` or on a `change` of outcome (notify/when.ts); the
 * deployment's default channels always speak. The decision is made by the first caller to claim the
 * channel and recorded with the claim (ledger/notifications.ts), so it is exactly-once too: a channel
 * decided `suppressed` is never sent by a retry, the reaper or the sweeper. A channel decided to send
 * goes through everything above unchanged.
 */
import { deliveryUnknownText, InvalidTransition, isRetryable, NotificationInProgress, NotificationNotDelivered } from '../core/errors';
import { collectedResult, type CollectRecord } from './collect';
import type { Decision } from './decide';
import type { AdmitRecord } from './admit';
import { measuredStartOf, type StartRecord } from './start';
import { NotifyWhen, Stage } from '../core/status';
import { buildMessage, type MessageLinks, type NotificationMessage } from '../notify/message';
import type { RunCost } from '../core/run-cost';
import { runCostOf } from './run-cost-of';
import { sendNotification } from '../notify/channels';
import { decideChannel } from '../notify/when';
import type { StageDeps } from './deps';
import { loadRun, outputOf, type RunContext } from './run-context';
import { runOnce, type Attempt } from './run-once';

/** What happened on each channel, recorded as the stage's output. */
export type ChannelResult =
  | 'sent'
  | 'already-sent'
  | 'rejected'
  | 'unknown'
  | 'not-configured'
  | 'misconfigured'
  | 'not-delivered'
  | 'ambiguous'
  | 'retrying'
  /** The channel's `when` said nothing is to be sent for this run (the ledger entry's decision says why). */
  | 'suppressed';

/** Configuration errors: retrying cannot fix them, and they must not keep the other channels from sending. */
const MISCONFIGURED = new Set(['ChannelNotConfigured', 'ChannelSecretInvalid']);

export interface NotifyRecord {
  outcome: string;
  channels: Record<string, ChannelResult>;
}

export async function notify(deps: StageDeps, runId: string): Promise<NotifyRecord> {
  return runOnce(deps, runId, Stage.Notify, async (attempt) => {
    const run = await loadRun(deps, runId);
    const outcome = run.view.run.outcome;
    if (!outcome) throw new InvalidTransition(`notify: run ${runId} has no outcome yet (Decide has not recorded one)`, run.view.run);
    const channels = [...new Set([...deps.config.notify.defaultChannels, ...run.spec.notify.channels])];
    const message = messageFor(deps, run, channels.length > 0 ? await costForMessage(deps, run) : undefined);
    const results: Record<string, ChannelResult> = {};
    // Errors that a retry of the stage may get past, in channel order; every channel is tried first.
    const retry: Error[] = [];
    const undelivered: Record<string, string> = {};
    const unknownCauses: Record<string, string> = {};
    for (const channel of channels) {
      try {
        const sent = await notifyChannel(deps, run, channel, message, attempt);
        results[channel] = sent.result;
        if (sent.detail !== undefined) undelivered[channel] = sent.detail;
        if (sent.deliveryUnknown !== undefined) unknownCauses[channel] = sent.deliveryUnknown;
      } catch (err) {
        if (isRetryable(err)) {
          results[channel] = 'retrying';
          retry.push(err as Error);
        } else if (MISCONFIGURED.has((err as Error).name)) {
          results[channel] = 'misconfigured';
          deps.log({ runId, stage: Stage.Notify, message: 'channel misconfigured: nothing sent', channel, error: (err as Error).message });
        } else {
          throw err;
        }
      }
    }
    deps.log({ runId, stage: Stage.Notify, message: 'notification results', outcome, channels: results });
    const notDelivered = Object.keys(undelivered);
    // Every channel's words in one error, and the unknown deliveries' causes as a field the next attempt reads.
    if (notDelivered.length > 0) retry.unshift(new NotificationNotDelivered(runId, notDelivered, undelivered, unknownCauses));
    if (retry.length > 0) throw retry[0];
    return { outcome, channels: results };
  });
}

/** A channel's result, and for a send to retry what became of it (in NotificationNotDelivered's words). */
interface ChannelOutcome {
  result: ChannelResult;
  detail?: string;
  /** Why the delivery is unknown (an ambiguous send). */
  deliveryUnknown?: string;
}

async function notifyChannel(deps: StageDeps, run: RunContext, channel: string, message: NotificationMessage, attempt: Attempt): Promise<ChannelOutcome> {
  const { secrets, leaseMs, timeoutMs } = deps.notify;
  if (!(await secrets.get(channel))) {
    deps.log({ runId: run.runId, stage: Stage.Notify, message: 'channel not configured: nothing sent', channel });
    return { result: 'not-configured' };
  }
  const when = whenFor(deps, run, channel);
  let claim;
  try {
    claim = await deps.ledger.claimNotification(run.runId, channel, {
      leaseMs,
      policy: run.spec.notify.policy,
      outcome: message.outcome,
      ...(deps.caller ? { holder: deps.caller } : {}),
      ...(when === NotifyWhen.always ? {} : { decide: () => decideChannel(deps.ledger, channel, when, thisRun(run, message)) }),
    });
  } catch (err) {
    throw explainBusyClaim(err, channel, attempt);
  }
  if (claim.kind === 'sent') return { result: 'already-sent' };
  if (claim.kind === 'unknown') return { result: 'unknown' };
  if (claim.kind === 'suppressed') {
    deps.log({ runId: run.runId, stage: Stage.Notify, message: 'channel suppressed by its when: nothing sent', channel, decision: claim.item.decision });
    return { result: 'suppressed' };
  }

  let delivery;
  try {
    delivery = await sendNotification({ channel, secrets, message, idempotencyKey: claim.dedupeKey, timeoutMs, now: deps.now });
  } catch (err) {
    // Thrown only when nothing was sent (configuration, secret store): let a retry claim again.
    await deps.ledger.releaseNotification(run.runId, channel, claim.token, (err as Error).name);
    throw err;
  }
  switch (delivery.kind) {
    case 'delivered':
    case 'rejected':
      await deps.ledger.markNotificationSent(run.runId, channel, claim.token, { status: delivery.status });
      return { result: delivery.kind === 'delivered' ? 'sent' : 'rejected' };
    case 'not-delivered':
      await deps.ledger.releaseNotification(run.runId, channel, claim.token, delivery.reason);
      return { result: 'not-delivered', detail: `${channel}: not delivered (${delivery.reason}); sending again` };
    case 'unknown': {
      // The claim stays: when its lease expires, the spec's policy decides (see above).
      const left = Math.max(0, Math.ceil(leaseMs / 1000));
      return {
        result: 'ambiguous',
        deliveryUnknown: delivery.cause,
        detail: `${deliveryUnknownText(channel, delivery.cause)}; the claim expires in ${left} s, then the ${run.spec.notify.policy} policy decides whether to send again`,
      };
    }
  }
}

/** The channel's `when`: the spec's for its own channels; a deployment default channel always speaks. */
function whenFor(deps: StageDeps, run: RunContext, channel: string): NotifyWhen {
  if (deps.config.notify.defaultChannels.includes(channel)) return NotifyWhen.always;
  return run.spec.notify.when?.[channel] ?? NotifyWhen.always;
}

/** The run as the `change` look-back places it in its name's (or schedule's) history. */
function thisRun(run: RunContext, message: NotificationMessage) {
  const item = run.view.run;
  const decidedAt = item.decidedAt ?? item.updatedAt;
  return { runId: run.runId, name: item.runName ?? run.spec.name, createdAt: item.createdAt, decidedAt, trigger: item.trigger, outcome: message.outcome };
}

/**
 * A live claim met by a retry: if the previous attempt said this channel's delivery is unknown, that
 * is the claim, and the retry only waits for it to expire — say that, not "another caller".
 */
function explainBusyClaim(err: unknown, channel: string, attempt: Attempt): unknown {
  if (!(err instanceof NotificationInProgress) || !err.detail || err.detail.holder === 'other') return err;
  const cause = attempt.previousError?.deliveryUnknown?.[channel];
  if (cause === undefined) return err;
  return new NotificationInProgress(err.runId, err.channel, err.current, { ...err.detail, deliveryUnknown: cause });
}

/** The message's links: the execution in the AWS console, the run's report; each only where known. */
function messageLinks(deps: StageDeps, run: RunContext): MessageLinks {
  const { executionArn } = run.view.run;
  const report = deps.notify.reportUrl?.(run.runId);
  return {
    ...(deps.notify.consoleUrl && executionArn ? { console: deps.notify.consoleUrl(executionArn) } : {}),
    ...(report !== undefined ? { report } : {}),
  };
}

/** What the run cost so far, for its message: none when its cost item cannot be read (the message goes without it). */
async function costForMessage(deps: StageDeps, run: RunContext): Promise<RunCost | undefined> {
  try {
    return runCostOf(run.view, await deps.ledger.getRunCost(run.runId), deps.config, deps.ledger.now());
  } catch (err) {
    deps.log({ runId: run.runId, stage: Stage.Notify, message: "the run's cost could not be read: the message goes without it", error: (err as Error).name });
    return undefined;
  }
}

function messageFor(deps: StageDeps, run: RunContext, cost: RunCost | undefined): NotificationMessage {
  const createdAtOnClock = (createdAt: string) =>
    deps.notify.clock?.kind === 'simulated' ? undefined : Number.isFinite(Date.parse(createdAt)) ? Date.parse(createdAt) : undefined;
  const item = run.view.run;
  const endedAt = outputOf<Decision>(run.view, Stage.Decide)?.decidedAt ?? deps.now();
  const started = outputOf<StartRecord>(run.view, Stage.Start);
  const collected = collectedResult(run.view);
  const measured = measuredStartOf(run.view);
  const { regression, fidelity } = outputOf<CollectRecord>(run.view, Stage.Collect) ?? {};
  return buildMessage({
    runId: run.runId,
    name: run.spec.name,
    engine: run.spec.engine,
    outcome: item.outcome!,
    reason: item.outcomeReason ?? '',
    // Both ends on the cluster's clock (kube-sim's runs ahead of real time locally). A run that ended
    // before Start: from Admit; one Admit never recorded (the reaper finished it): the run item's
    // creation, on a real clock only (the ledger's), else it ended as it began.
    startedAt: new Date(
      started?.startedAt ??
        (outputOf<AdmitRecord>(run.view, Stage.Acquire) ?? outputOf<AdmitRecord>(run.view, Stage.Admit))?.admittedAt ??
        createdAtOnClock(item.createdAt) ??
        endedAt,
    ).toISOString(),
    endedAt: new Date(endedAt).toISOString(),
    expectedRunners: run.spec.parallelism,
    ...(collected ? { result: collected } : {}),
    links: messageLinks(deps, run),
    ...(measured ? { startSkew: measured } : {}),
    ...(regression ? { baseline: regression } : {}),
    ...(fidelity ? { fidelity } : {}),
    ...(cost ? { cost } : {}),
    ...(deps.notify.clock ? { clock: deps.notify.clock } : {}),
  });
}
