import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '@exactly-once/cdk';

export interface StorageProps {
  /** What happens to the table when the stack deletes it (the stage decides: destroy in dev, retain in prod). */
  readonly removalPolicy: RemovalPolicy;
  /** The table refuses DeleteTable, from the console, the CLI or CloudFormation, until it is switched off (prod). */
  readonly deletionProtection: boolean;
  /**
   * The table's and its index's on-demand ceiling, in read and in write request units per second.
   *
   * @default - none
   */
  readonly tableThroughputCeiling?: number;
}

/**
 * The shop's own table, Orders: orders and their outbox items, written in one transaction. Its
 * stream (new images) feeds the outbox relay; a sparse index lists outbox items not yet dispatched,
 * for the sweeper. The mechanism's tables (idempotency, effects, provider log) are ExactlyOnce's.
 */
export class Storage extends Construct {
  readonly ordersTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    // Throttled above it rather than billed: a runaway load test in dev stops at this rate.
    const ceiling =
      props.tableThroughputCeiling === undefined
        ? {}
        : { maxReadRequestUnits: props.tableThroughputCeiling, maxWriteRequestUnits: props.tableThroughputCeiling };
    this.ordersTable = new dynamodb.Table(this, 'Orders', {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: props.removalPolicy,
      deletionProtection: props.deletionProtection,
      ...ceiling,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      // Dispatched outbox items expire (OutboxRelay's dispatchedRetention); orders never carry it.
      timeToLiveAttribute: OUTBOX_TTL_ATTRIBUTE,
    });
    this.ordersTable.addGlobalSecondaryIndex({
      indexName: PENDING_OUTBOX_INDEX,
      partitionKey: { name: 'pendingShard', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'createdAt', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
      ...ceiling,
    });
  }
}
