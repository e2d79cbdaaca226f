/**
 * What every Lambda works with: the deployment config and the ledger's DynamoDB client, built from
 * the environment when the handler is first invoked (lazy-handler.ts), not at import. The other AWS
 * clients have their own modules (execution-deps.ts, cluster-deps.ts, the API's Scheduler client in
 * api.ts), imported only by the handlers that call them, so each bundle carries, and each container
 * loads, only its own clients. Every client is traced where tracing is on.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { loadConfig, loadLedgerSettings, type DeploymentConfig } from '../core/config';
import { createDocumentClient } from '../ledger/client';
import { Ledger } from '../ledger/ledger';
import { traceClient } from '../telemetry/telemetry';

export interface LedgerDeps {
  config: DeploymentConfig;
  region: string;
  ledger: Ledger;
  /** An execution's page in the Step Functions console (links in the API's answers and in notifications). */
  consoleUrl: (executionArn: string) => string;
}

export function createLedgerDeps(tracer: Tracer, env: NodeJS.ProcessEnv = process.env): LedgerDeps {
  const config = loadConfig(env);
  const settings = loadLedgerSettings(env);
  const { region } = settings;
  const client = traceClient(tracer, createDocumentClient({ region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) }));
  return {
    config,
    region,
    ledger: new Ledger({ client, tableName: settings.tableName }),
    consoleUrl: (arn) => `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${arn}`,
  };
}
