/**
 * The embedded ledger store for the local runtime and tests (architecture §9): dynalite in-process on
 * 127.0.0.1 at a random port, with the ledger table created and ACTIVE before it is handed out. In
 * memory by default; with `dataDir`, kept on disk (dynalite's LevelDB, `<dataDir>/ledger`) so a
 * `serve --data-dir` finds its runs and schedules again after a restart. One process at a time uses a
 * data directory (data-dir-lock.ts).
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import dynalite from 'dynalite';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/ledger/client';
import { createLedgerTable, ensureLedgerTable } from './create-table';
import { lockDataDir, type DataDirLock } from './data-dir-lock';

/** Any values do: local stores check only that requests are signed. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const LOCAL_REGION = 'us-east-1';

export interface EmbeddedStoreOptions {
  tableName?: string;
  /** Keep the ledger in this directory, across restarts (default: in memory, gone with the process). */
  dataDir?: string;
}

export interface EmbeddedStore {
  endpoint: string;
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Where the ledger is kept; undefined when it is in memory. */
  dataDir?: string;
  close(): Promise<void>;
}

export async function startEmbeddedStore({ tableName = 'loadplane', dataDir }: EmbeddedStoreOptions = {}): Promise<EmbeddedStore> {
  const lock: DataDirLock | undefined = dataDir === undefined ? undefined : await lockDataDir(dataDir);
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(dataDir !== undefined ? { path: join(dataDir, 'ledger') } : {}) });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  } catch (err) {
    await lock?.release();
    throw err;
  }
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createDocumentClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const close = async () => {
    client.destroy();
    try {
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    } finally {
      await lock?.release();
    }
  };
  try {
    await (dataDir === undefined ? createLedgerTable(client, tableName) : ensureLedgerTable(client, tableName));
  } catch (err) {
    await close();
    throw err;
  }
  return { endpoint, client, tableName, ...(dataDir !== undefined ? { dataDir } : {}), close };
}
