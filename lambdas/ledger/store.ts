/**
 * The ledger's only contact with DynamoDB: single-item conditional writes (plain puts only for
 * content-addressed items), consistent reads and queries, every SDK failure mapped by toStoreFailure. A failed condition is not an error here: it
 * yields the current item (from ALL_OLD, or a consistent read where the store does not return it,
 * e.g. dynalite) for the caller to turn into a domain result.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Condition } from './conditions';
import type { ItemKey } from './keys';
import { toStoreFailure } from './store-errors';

export type RawItem = Record<string, unknown>;

export interface LedgerContext {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Epoch ms. */
  now: () => number;
}

export const isoNow = (ctx: LedgerContext): string => new Date(ctx.now()).toISOString();

/**
 * Bound on re-trying a write whose failed condition the current item does not explain: a fallback
 * read (no ALL_OLD) can see a later item than the one the condition was checked against.
 */
export const MAX_ATTEMPTS = 3;

export type WriteResult = { ok: true; attributes: RawItem } | { ok: false; current: RawItem | undefined };

type Values = Record<string, unknown>;

/**
 * `#name` placeholders map to the attribute of the same name. Many of ours are reserved words
 * (status, state, owner, token), and DynamoDB rejects unused names, so they are derived from the text.
 */
function attributeNames(...expressions: (string | undefined)[]): Record<string, string> | undefined {
  return withNames(undefined, ...expressions);
}

/**
 * attributeNames plus `extra` placeholders for names that are not words (a run id as a map key,
 * `#holder` → `01j…-x`): an extra placeholder wins over the derived one of the same spelling.
 */
function withNames(extra: Record<string, string> | undefined, ...expressions: (string | undefined)[]): Record<string, string> | undefined {
  const names: Record<string, string> = {};
  for (const expression of expressions) {
    for (const [, name] of (expression ?? '').matchAll(/#(\w+)/g)) names[`#${name}`] = extra?.[`#${name}`] ?? name!;
  }
  return Object.keys(names).length > 0 ? names : undefined;
}

const orUndefined = (values: Values): Values | undefined => (Object.keys(values).length > 0 ? values : undefined);

/**
 * The write's values and its condition's (conditions.ts), as one ExpressionAttributeValues. A placeholder
 * both give must mean the same value: a write that reuses a condition's `:name` for another value is a bug.
 */
function withConditionValues(operation: string, values: Values, condition: Condition): Values | undefined {
  for (const [name, value] of Object.entries(condition.values ?? {})) {
    if (name in values && values[name] !== value) {
      throw new Error(`ledger ${operation}: ${name} is ${String(values[name])} in the write but ${String(value)} in its condition`);
    }
  }
  return orUndefined({ ...values, ...condition.values });
}

async function call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toStoreFailure(err, operation);
  }
}

export function getItem(ctx: LedgerContext, operation: string, key: ItemKey): Promise<RawItem | undefined> {
  return call(operation, async () => {
    const out = await ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: key, ConsistentRead: true }));
    return out.Item;
  });
}

/**
 * Some attributes of an item, read eventually consistent (half a strongly consistent read's capacity):
 * for reads that show finished runs, whose figures no longer change. `attributes` are top-level names
 * or dotted paths of names (`spec.baseline`); each name becomes a `#name` placeholder.
 */
export function getItemAttributes(ctx: LedgerContext, operation: string, key: ItemKey, attributes: readonly string[]): Promise<RawItem | undefined> {
  const names: Record<string, string> = {};
  const projection = attributes.map((path) =>
    path
      .split('.')
      .map((name) => {
        names[`#${name}`] = name;
        return `#${name}`;
      })
      .join('.'),
  );
  return call(operation, async () => {
    const out = await ctx.client.send(
      new GetCommand({ TableName: ctx.tableName, Key: key, ProjectionExpression: projection.join(', '), ExpressionAttributeNames: names }),
    );
    return out.Item;
  });
}

/**
 * An unconditional put, for items whose key names their content (script chunks): writing one again
 * writes the same bytes, so no condition is needed and there is nothing to race.
 */
export function putItem(ctx: LedgerContext, operation: string, item: RawItem & ItemKey): Promise<void> {
  return call(operation, async () => {
    await ctx.client.send(new PutCommand({ TableName: ctx.tableName, Item: item }));
  });
}

/** By name rather than instanceof, so a second copy of the SDK in a bundle cannot break it. */
function isConditionFailure(err: unknown): err is { Item?: Record<string, AttributeValue> } {
  return (err as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

async function conditionally(ctx: LedgerContext, operation: string, key: ItemKey, write: () => Promise<RawItem | undefined>): Promise<WriteResult> {
  try {
    return { ok: true, attributes: (await write()) ?? {} };
  } catch (err) {
    if (!isConditionFailure(err)) throw toStoreFailure(err, operation);
    return { ok: false, current: err.Item ? unmarshall(err.Item) : await getItem(ctx, operation, key) };
  }
}

export async function conditionalPut(
  ctx: LedgerContext,
  operation: string,
  input: { item: RawItem & ItemKey; condition: Condition; names?: Record<string, string> },
): Promise<WriteResult> {
  const values = withConditionValues(operation, {}, input.condition);
  return conditionally(ctx, operation, { pk: input.item.pk, sk: input.item.sk }, async () => {
    await ctx.client.send(
      new PutCommand({
        TableName: ctx.tableName,
        Item: input.item,
        ConditionExpression: input.condition.expression,
        ExpressionAttributeNames: withNames(input.names, input.condition.expression),
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return input.item;
  });
}

/** On success `attributes` is the item after the write (ALL_NEW) or before it (ALL_OLD, empty when it was absent). */
export async function conditionalUpdate(
  ctx: LedgerContext,
  operation: string,
  input: {
    key: ItemKey;
    update: string;
    condition: Condition;
    /** The update's values; the condition brings its own. */
    values: Values;
    returnValues: 'ALL_NEW' | 'ALL_OLD';
    /** Placeholders whose attribute name is not their spelling (see withNames). */
    names?: Record<string, string>;
  },
): Promise<WriteResult> {
  const values = withConditionValues(operation, input.values, input.condition);
  return conditionally(ctx, operation, input.key, async () => {
    const out = await ctx.client.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: input.key,
        UpdateExpression: input.update,
        ConditionExpression: input.condition.expression,
        ExpressionAttributeNames: withNames(input.names, input.update, input.condition.expression),
        ExpressionAttributeValues: values,
        ReturnValues: input.returnValues,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return out.Attributes;
  });
}

/** One page of a query (the caller pages with ExclusiveStartKey). */
export function queryPage(
  ctx: LedgerContext,
  operation: string,
  input: Omit<QueryCommandInput, 'TableName' | 'ExpressionAttributeNames'>,
): Promise<{ items: RawItem[]; lastKey?: RawItem }> {
  return call(operation, async () => {
    const out = await ctx.client.send(
      new QueryCommand({
        ...input,
        TableName: ctx.tableName,
        ExpressionAttributeNames: attributeNames(input.KeyConditionExpression, input.FilterExpression),
      }),
    );
    return { items: out.Items ?? [], ...(out.LastEvaluatedKey && { lastKey: out.LastEvaluatedKey }) };
  });
}

/** Every page of a query. */
export async function queryAll(
  ctx: LedgerContext,
  operation: string,
  input: Omit<QueryCommandInput, 'TableName' | 'ExpressionAttributeNames' | 'ExclusiveStartKey'>,
): Promise<RawItem[]> {
  const items: RawItem[] = [];
  let after: RawItem | undefined;
  do {
    const page = await queryPage(ctx, operation, { ...input, ExclusiveStartKey: after });
    items.push(...page.items);
    after = page.lastKey;
  } while (after);
  return items;
}
