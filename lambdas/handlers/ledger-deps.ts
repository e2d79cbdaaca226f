/**
 * What every Lambda works with, built once per container: the deployment config and the ledger's
 * DynamoDB client. The other AWS clients live in their own modules (execution-deps.ts,
 * cluster-deps.ts, the API's Scheduler client in api.ts), imported only by the handlers that call
 * them, so each bundle carries, and each container loads, only its own clients.
 */
import { loadConfig, loadLedgerSettings } from '../core/config';
import { createDocumentClient } from '../ledger/client';
import { Ledger } from '../ledger/ledger';

export const config = loadConfig();
const settings = loadLedgerSettings();
export const region = settings.region;
export const ledger = new Ledger({
  client: createDocumentClient({ region: settings.region, ...(settings.endpoint ? { endpoint: settings.endpoint } : {}) }),
  tableName: settings.tableName,
});
/** An execution's page in the Step Functions console (links in the API's answers and in notifications). */
export const consoleUrl = (arn: string) => `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${arn}`;
