/**
 * Every item the ledger wrote for one run, read raw from the table (the run's partition and its live
 * samples' partition, paged: a Query answers at most 1 MB), each with its size as DynamoDB counts it
 * against the 400 KB item limit (lambdas/ledger/item-size.ts).
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Stage } from '../../lambdas/core/status';
import { itemBytes } from '../../lambdas/ledger/item-size';
import { runPk } from '../../lambdas/ledger/keys';
import { samplesPk } from '../../lambdas/ledger/samples';

export interface SizedItem {
  pk: string;
  sk: string;
  bytes: number;
  item: Record<string, unknown>;
}

/** Every item of partition `pk`, in sort-key order, with the number of Query pages it took. */
export async function partitionItems(client: DynamoDBDocumentClient, tableName: string, pk: string): Promise<{ items: SizedItem[]; pages: number }> {
  const items: SizedItem[] = [];
  let pages = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    pages++;
    for (const item of page.Items ?? []) items.push({ pk: String(item.pk), sk: String(item.sk), bytes: itemBytes(item), item });
    start = page.LastEvaluatedKey;
  } while (start);
  return { items, pages };
}

/** Every item the ledger holds for run `runId`: its partition, then its live samples'. */
export async function runItems(client: DynamoDBDocumentClient, tableName: string, runId: string): Promise<SizedItem[]> {
  const run = await partitionItems(client, tableName, runPk(runId));
  const samples = await partitionItems(client, tableName, samplesPk(runId));
  return [...run.items, ...samples.items];
}

/** The largest of `items`. */
export function largestItem(items: readonly SizedItem[]): SizedItem {
  return items.reduce((a, b) => (b.bytes > a.bytes ? b : a));
}

/** One line per kind of item (the sort key up to its first `#` and stage name): count, largest and total bytes. */
export function sizeTable(items: readonly SizedItem[]): string {
  const kinds = new Map<string, { count: number; largest: number; total: number }>();
  for (const { sk, bytes } of items) {
    const kind = sk.replace(/#output#.*$/, '#output#…').replace(/^(script|s)#.*$/, '$1#…');
    const entry = kinds.get(kind) ?? { count: 0, largest: 0, total: 0 };
    kinds.set(kind, { count: entry.count + 1, largest: Math.max(entry.largest, bytes), total: entry.total + bytes });
  }
  return [...kinds.entries()].map(([kind, k]) => `${kind}: ${k.count} × ≤ ${k.largest} B (${k.total} B)`).join('\n');
}

/** The stages recorded before Watch: every Watch poll's getRun reads their items (and output chunks) and the run item. */
const BEFORE_WATCH: readonly Stage[] = [Stage.Admit, Stage.Acquire, Stage.Prepare, Stage.AwaitPrepared, Stage.Launch, Stage.AwaitReady, Stage.Start];

/**
 * What one Watch poll's getRun reads of a run, from its items after the run: the run item and the
 * items of the stages before Watch with their output chunks (getRun reads no script chunks).
 */
export function watchPollReadBytes(items: readonly SizedItem[]): number {
  const read = items.filter(
    (i) => i.pk.startsWith('run#') && (i.sk === 'run' || BEFORE_WATCH.some((s) => i.sk === `stage#${s}` || i.sk.startsWith(`stage#${s}#`))),
  );
  return read.reduce((n, i) => n + i.bytes, 0);
}
