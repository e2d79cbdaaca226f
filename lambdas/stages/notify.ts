/**
 * Notify (DESIGN §5): exactly one completion message per run and channel, whichever path gets here
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
 */
import { InvalidTransition, isRetryable, NotificationNotDelivered } from '../core/errors';
import type { CollectRecord } from './collect';
import type { Decision } from './decide';
import type { StartRecord } from './start';
import { Stage } from '../core/status';
import { buildMessage, type NotificationMessage } from '../notify/message';
import { sendNotification } from '../notify/channels';
import type { StageDeps } from './deps';
import { loadRun, outputOf, type RunContext } from './run-context';
import { runOnce } from './run-once';

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
  | 'retrying';

/** Configuration errors: retrying cannot fix them, and they must not keep the other channels from sending. */
const MISCONFIGURED = new Set(['ChannelNotConfigured', 'ChannelSecretInvalid']);

export interface NotifyRecord {
  outcome: string;
  channels: Record<string, ChannelResult>;
}

export async function notify(deps: StageDeps, runId: string): Promise<NotifyRecord> {
  return runOnce(deps, runId, Stage.Notify, async () => {
    const run = await loadRun(deps, runId);
    const outcome = run.view.run.outcome;
    if (!outcome) throw new InvalidTransition(`notify: run ${runId} has no outcome yet (Decide has not recorded one)`, run.view.run);
    const channels = [...new Set([...deps.config.notify.defaultChannels, ...run.spec.notify.channels])];
    const message = messageFor(deps, run);
    const results: Record<string, ChannelResult> = {};
    // Errors that a retry of the stage may get past, in channel order; every channel is tried first.
    const retry: Error[] = [];
    for (const channel of channels) {
      try {
        results[channel] = await notifyChannel(deps, run, channel, message);
        if (results[channel] === 'not-delivered' || results[channel] === 'ambiguous') retry.push(new NotificationNotDelivered(runId, [channel]));
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
    if (retry.length > 0) throw retry[0];
    return { outcome, channels: results };
  });
}

async function notifyChannel(deps: StageDeps, run: RunContext, channel: string, message: NotificationMessage): Promise<ChannelResult> {
  const { secrets, leaseMs, timeoutMs } = deps.notify;
  if (!(await secrets.get(channel))) {
    deps.log({ runId: run.runId, stage: Stage.Notify, message: 'channel not configured: nothing sent', channel });
    return 'not-configured';
  }
  const claim = await deps.ledger.claimNotification(run.runId, channel, { leaseMs, policy: run.spec.notify.policy, outcome: message.outcome });
  if (claim.kind === 'sent') return 'already-sent';
  if (claim.kind === 'unknown') return 'unknown';

  let delivery;
  try {
    delivery = await sendNotification({ channel, secrets, message, idempotencyKey: claim.dedupeKey, timeoutMs });
  } catch (err) {
    // Thrown only when nothing was sent (configuration, secret store): let a retry claim again.
    await deps.ledger.releaseNotification(run.runId, channel, claim.token, (err as Error).name);
    throw err;
  }
  switch (delivery.kind) {
    case 'delivered':
    case 'rejected':
      await deps.ledger.markNotificationSent(run.runId, channel, claim.token, { status: delivery.status });
      return delivery.kind === 'delivered' ? 'sent' : 'rejected';
    case 'not-delivered':
      await deps.ledger.releaseNotification(run.runId, channel, claim.token, delivery.reason);
      return 'not-delivered';
    case 'unknown':
      // The claim stays: when its lease expires, the spec's policy decides (see above).
      return 'ambiguous';
  }
}

function messageFor(deps: StageDeps, run: RunContext): NotificationMessage {
  const item = run.view.run;
  const started = outputOf<StartRecord>(run.view, Stage.Start);
  const collected = outputOf<CollectRecord>(run.view, Stage.Collect);
  return buildMessage({
    runId: run.runId,
    name: run.spec.name,
    engine: run.spec.engine,
    outcome: item.outcome!,
    reason: item.outcomeReason ?? '',
    startedAt: started ? new Date(started.startedAt).toISOString() : item.createdAt,
    // Both ends on the cluster's clock (kube-sim's runs ahead of real time locally).
    endedAt: new Date(outputOf<Decision>(run.view, Stage.Decide)?.decidedAt ?? deps.now()).toISOString(),
    expectedRunners: run.spec.parallelism,
    ...(collected ? { result: collected.result } : {}),
    ...(deps.notify.consoleUrl && item.executionArn ? { links: { console: deps.notify.consoleUrl(item.executionArn) } } : {}),
  });
}
