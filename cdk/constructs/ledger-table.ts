/**
 * The ledger (architecture §4): one DynamoDB table, keys and indexes taken from
 * lambdas/ledger/table.ts, the definition the local stores and the tests create, so the deployed
 * table cannot drift from the one the code was tested against. Encrypted with the AWS-owned key
 * (DynamoDB's default), or with the deployment's customer-managed key (encryption-key.ts).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { TTL_ATTRIBUTE, tableDefinition } from '../../lambdas/ledger/table';

export interface LedgerTableProps {
  /** The deployment's customer-managed key (encryption.customerManagedKey); without it, DynamoDB's AWS-owned key. */
  encryptionKey?: IKey;
}

export class LedgerTable extends Construct {
  readonly table: Table;
  /** The ARNs of the table and of each index (the functions query them; no wildcard). */
  readonly resourceArns: string[];
  /** The table's customer-managed key, if any: its readers and writers need it too (ledgerStatements). */
  readonly encryptionKey?: IKey;

  constructor(scope: Construct, id: string, props: LedgerTableProps = {}) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
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
      ...(props.encryptionKey ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey } : {}),
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
    this.resourceArns = [this.table.tableArn, ...(definition.GlobalSecondaryIndexes ?? []).map((index) => `${this.table.tableArn}/index/${index.IndexName}`)];
  }
}
