import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';

export interface StorageProps {
  removalPolicy: RemovalPolicy;
}

/** Attribute names shared by the tables and the code that reads them. */
export const IDEMPOTENCY_EXPIRY_ATTRIBUTE = 'expiration';
export const IDEMPOTENCY_KEY_EXPIRY = Duration.hours(24);

/**
 * The tables:
 * - Orders: orders and their outbox items, written in one transaction. Its
 *   stream (new images) feeds the outbox relay; a sparse index lists outbox
 *   items not yet dispatched, for the sweeper.
 * - Idempotency: Powertools idempotency records. TTL only tidies up; expiry is
 *   judged by the record's timestamp, because TTL deletes up to days late.
 */
export class Storage extends Construct {
  readonly ordersTable: dynamodb.Table;
  readonly idempotencyTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);

    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: props.removalPolicy,
    };

    this.ordersTable = new dynamodb.Table(this, 'Orders', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    this.ordersTable.addGlobalSecondaryIndex({
      indexName: 'pendingOutbox',
      partitionKey: { name: 'pendingShard', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'createdAt', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    this.idempotencyTable = new dynamodb.Table(this, 'Idempotency', {
      ...common,
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: IDEMPOTENCY_EXPIRY_ATTRIBUTE,
    });
  }
}
