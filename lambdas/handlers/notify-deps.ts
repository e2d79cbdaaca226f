/**
 * The Notify stage's deps on AWS, built in this one place (the stage Lambda, the reaper and the
 * sweeper all run Notify): channel secrets from Secrets Manager through Powertools Parameters
 * (cached per container), the send timeouts, and the message's links: the execution's console page and
 * the run's report under the REST API (LOADPLANE_API_URL, set by the stack).
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { loadReportLinkSettings } from '../core/config';
import { secretsManagerChannelSecrets } from '../notify/secrets-manager-channel-secrets';
import { reportLinks } from '../report/report-link';
import { NOTIFY_LEASE_MS, NOTIFY_TIMEOUT_MS, type NotifyDeps } from '../stages/deps';
import { traceClient } from '../telemetry/telemetry';
import type { LedgerDeps } from './ledger-deps';

export function createNotifyDeps(tracer: Tracer, { config, region, consoleUrl }: LedgerDeps, env: NodeJS.ProcessEnv = process.env): NotifyDeps {
  const reportUrl = reportLinks(loadReportLinkSettings(env).apiUrl);
  return {
    secrets: secretsManagerChannelSecrets({ client: traceClient(tracer, new SecretsManagerClient({ region })), prefix: config.notify.secretPrefix }),
    leaseMs: NOTIFY_LEASE_MS,
    timeoutMs: NOTIFY_TIMEOUT_MS,
    consoleUrl,
    ...(reportUrl ? { reportUrl } : {}),
  };
}
