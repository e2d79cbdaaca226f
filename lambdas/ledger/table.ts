/**
 * The ledger's one table (architecture §4). The embedded store and the tests create it from
 * tableDefinition(); the CDK app mirrors the same names.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/** GSIs over run items only (stage and notification items lack their key attributes). */
export const RunIndex = {
  /** pk `timeBucket` (`runs#YYYY-MM`), sk `createdKey`: runs newest first, month by month. */
  byTime: 'byTime',
  /** pk `status`, sk `createdKey`: runs in one status, newest first. */
  byStatus: 'byStatus',
  /** pk `runName` (the spec's name), sk `createdKey`: the runs of one test, newest first. */
  byName: 'byName',
} as const;

/** TTL attribute (epoch seconds). Enabled by the CDK app; dynalite ignores TTL. */
export const TTL_ATTRIBUTE = 'expiresAt';

/** How long a run and its entries are kept before TTL removes them. */
export const RUN_RETENTION_DAYS = 90;

/**
 * What a listing shows of a run. Projected into the GSIs instead of ALL so that the spec (tens of
 * KB even without its inline script, which lives in chunk items) is not copied into every index.
 */
export const RUN_SUMMARY_ATTRIBUTES = [
  'runId',
  'runName',
  'status',
  'outcome',
  'outcomeReason',
  'trigger',
  'createdAt',
  'updatedAt',
  'decidedAt',
  'abortRequestedAt',
] as const;

const nonKey = (indexKeys: string[]) => RUN_SUMMARY_ATTRIBUTES.filter((a) => !indexKeys.includes(a));

export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'timeBucket', AttributeType: 'S' },
      { AttributeName: 'createdKey', AttributeType: 'S' },
      { AttributeName: 'status', AttributeType: 'S' },
      { AttributeName: 'runName', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: RunIndex.byTime,
        KeySchema: [
          { AttributeName: 'timeBucket', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: nonKey(['timeBucket', 'createdKey']) },
      },
      {
        IndexName: RunIndex.byStatus,
        KeySchema: [
          { AttributeName: 'status', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: nonKey(['status', 'createdKey']) },
      },
      {
        IndexName: RunIndex.byName,
        KeySchema: [
          { AttributeName: 'runName', KeyType: 'HASH' },
          { AttributeName: 'createdKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: nonKey(['runName', 'createdKey']) },
      },
    ],
  };
}
