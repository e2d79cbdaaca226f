/** The one place a DynamoDB document client is built, for the Lambdas and the local stores alike. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LedgerSettings } from '../core/config';
import { meterConsumedCapacity } from './consumed-capacity';

export interface DocumentClientOptions extends Pick<LedgerSettings, 'endpoint' | 'region'> {
  /** Static credentials for local stores; on AWS the default provider chain is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export function createDocumentClient({ endpoint, region, credentials }: DocumentClientOptions): DynamoDBDocumentClient {
  const base = new DynamoDBClient({ region, ...(endpoint && { endpoint }), ...(credentials && { credentials }) });
  // Optional fields of our items are left undefined rather than stripped by hand.
  const client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  // A stage invocation's ledger requests are charged to its meter (the run's recorded cost).
  meterConsumedCapacity(client);
  return client;
}
