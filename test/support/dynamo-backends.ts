/**
 * The ledger's test backends: dynalite always, AWS DynamoDB Local when Java runs here (otherwise
 * its suites show as skipped, with the reason in their title). DynamoDB Local comes from the
 * globalSetup (dynamo-global-setup.ts) when configured; without it each test file starts its own.
 * Every suite gets its own uniquely named table.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { createDocumentClient } from '../../lambdas/ledger/client';
import { createLedgerTable } from '../../local/store/create-table';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmbeddedStore } from '../../local/store/embedded-store';
import { javaProblem, startDynamoDbLocal } from './dynamo-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbLocal: { endpoint: string } | { skipReason: string };
  }
}

export interface LedgerTable {
  endpoint: string;
  client: DynamoDBDocumentClient;
  tableName: string;
  close(): Promise<void>;
}

export interface LedgerBackend {
  name: 'dynalite' | 'DynamoDB Local';
  /** Set when the backend cannot run on this machine. */
  skipReason?: string;
  /** Starts (or reuses) the store and creates a fresh table on it. */
  open(): Promise<LedgerTable>;
}

const uniqueTableName = () => `ledger-${randomUUID()}`;

const dynalite: LedgerBackend = {
  name: 'dynalite',
  open: () => startEmbeddedStore({ tableName: uniqueTableName() }),
};

async function openOnDynamoDbLocal(endpoint: string, onClose: () => Promise<void>): Promise<LedgerTable> {
  const client = createDocumentClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tableName = uniqueTableName();
  await createLedgerTable(client, tableName);
  return {
    endpoint,
    client,
    tableName,
    close: async () => {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
      await onClose();
    },
  };
}

function dynamoDbLocal(): LedgerBackend {
  const shared = inject('dynamoDbLocal');
  const skipReason = shared ? ('skipReason' in shared ? shared.skipReason : undefined) : javaProblem();
  return {
    name: 'DynamoDB Local',
    ...(skipReason !== undefined && { skipReason }),
    open: async () => {
      if (shared && 'endpoint' in shared) return openOnDynamoDbLocal(shared.endpoint, async () => {});
      const local = await startDynamoDbLocal();
      try {
        return await openOnDynamoDbLocal(local.endpoint, local.stop);
      } catch (err) {
        await local.stop();
        throw err;
      }
    },
  };
}

export function ledgerBackends(): LedgerBackend[] {
  return [dynalite, dynamoDbLocal()];
}

/**
 * Declares one describe block per backend around `suite`, which receives a getter for the
 * block's table (opened in beforeAll, closed in afterAll).
 */
export function describeOnLedgerBackends(suite: (table: () => LedgerTable, backend: LedgerBackend['name']) => void): void {
  for (const backend of ledgerBackends()) {
    const title = backend.skipReason ? `${backend.name} (skipped: ${backend.skipReason})` : backend.name;
    describe.skipIf(backend.skipReason !== undefined)(title, () => {
      let table: LedgerTable | undefined;
      beforeAll(async () => {
        table = await backend.open();
      });
      afterAll(async () => {
        await table?.close();
      });
      suite(() => {
        if (!table) throw new Error(`${backend.name} table is not open`);
        return table;
      }, backend.name);
    });
  }
}
