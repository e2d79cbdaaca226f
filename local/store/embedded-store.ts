/**
 * The embedded ledger store for the local runtime and tests (architecture §9): dynalite in-process on
 * 127.0.0.1 at a random port, with the ledger table created and ACTIVE before it is handed out.
 */
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/ledger/client';
import { createLedgerTable } from './create-table';

/** Any values do: local stores check only that requests are signed. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const LOCAL_REGION = 'us-east-1';

export interface EmbeddedStore {
  endpoint: string;
  client: DynamoDBDocumentClient;
  tableName: string;
  close(): Promise<void>;
}

export async function startEmbeddedStore({ tableName = 'loadplane' }: { tableName?: string } = {}): Promise<EmbeddedStore> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createDocumentClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const close = async () => {
    client.destroy();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  };
  try {
    await createLedgerTable(client, tableName);
  } catch (err) {
    await close();
    throw err;
  }
  return { endpoint, client, tableName, close };
}
