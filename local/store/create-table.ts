/** Creates the ledger table on a local store (dynalite, DynamoDB Local) and waits until it is usable. */
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableDefinition } from '../../lambdas/ledger/table';

const READY_TIMEOUT_MS = 10_000;
const POLL_MS = 20;

export async function createLedgerTable(client: DynamoDBDocumentClient, tableName: string): Promise<void> {
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  await untilActive(client, tableName);
}

/** The table of a store kept on disk: created the first time, found (and waited for) after. */
export async function ensureLedgerTable(client: DynamoDBDocumentClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  }
  await untilActive(client, tableName);
}

async function untilActive(client: DynamoDBDocumentClient, tableName: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    if (Date.now() > deadline) throw new Error(`table ${tableName} not ACTIVE after ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
