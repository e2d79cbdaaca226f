/**
 * The ledger (architecture §4): one DynamoDB table, keys and indexes taken from
 * lambdas/ledger/table.ts, the definition the local stores and the tests create, so the deployed
 * table cannot drift from the one the code was tested against.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TTL_ATTRIBUTE, tableDefinition } from '../../lambdas/ledger/table';

export class LedgerTable extends Construct {
  readonly table: Table;
  /** The ARNs of the table and of each index (the functions query them; no wildcard). */
  readonly resourceArns: string[];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const definition = tableDefinition('unused');
    const typeOf = (name: string) => {
      const type = definition.AttributeDefinitions!.find((a) => a.AttributeName === name)!.AttributeType;
      return type === 'S' ? AttributeType.STRING : type === 'N' ? AttributeType.NUMBER : AttributeType.BINARY;
    };
    const keyOf = (schema: NonNullable<typeof definition.KeySchema>, keyType: 'HASH' | 'RANGE') => {
      const name = schema.find((k) => k.KeyType === keyType)?.AttributeName;
      return name === undefined ? undefined : { name, type: typeOf(name) };
    };
    this.table = new Table(this, 'Table', {
      partitionKey: keyOf(definition.KeySchema!, 'HASH')!,
      sortKey: keyOf(definition.KeySchema!, 'RANGE'),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      deletionProtection: true,
      // The ledger is the record of every run: never deleted with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of definition.GlobalSecondaryIndexes ?? []) {
      const projection = index.Projection!;
      this.table.addGlobalSecondaryIndex({
        indexName: index.IndexName!,
        partitionKey: keyOf(index.KeySchema!, 'HASH')!,
        sortKey: keyOf(index.KeySchema!, 'RANGE'),
        projectionType: projection.ProjectionType as ProjectionType,
        ...(projection.NonKeyAttributes ? { nonKeyAttributes: projection.NonKeyAttributes } : {}),
      });
    }
    this.resourceArns = [
      this.table.tableArn,
      ...(definition.GlobalSecondaryIndexes ?? []).map((index) => `${this.table.tableArn}/index/${index.IndexName}`),
    ];
  }
}
