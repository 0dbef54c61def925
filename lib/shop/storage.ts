import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { INBOX_TTL_ATTRIBUTE, OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '../exactly-once';

export interface StorageProps {
  removalPolicy: RemovalPolicy;
  /** Tables refuse DeleteTable, from the console, the CLI or CloudFormation, until it is switched off (prod). */
  deletionProtection: boolean;
  /**
   * Every table's and index's on-demand ceiling, in read and in write request units per second.
   *
   * @default - none
   */
  throughputCeiling?: number;
}

/** Attribute names shared by the tables and the code that reads them. */
export const IDEMPOTENCY_EXPIRY_ATTRIBUTE = 'expiration';
export const IDEMPOTENCY_KEY_EXPIRY = Duration.hours(24);
// The consumers' inbox claims carry their expiry here (the code that writes them owns the name).
export const INBOX_EXPIRY_ATTRIBUTE = INBOX_TTL_ATTRIBUTE;

/**
 * The tables:
 * - Orders: orders and their outbox items, written in one transaction. Its
 *   stream (new images) feeds the outbox relay; a sparse index lists outbox
 *   items not yet dispatched, for the sweeper.
 * - Idempotency: Powertools idempotency records. TTL only tidies up; expiry is
 *   judged by the record's timestamp, because TTL deletes up to days late.
 * - Effects: the consumers' inbox claims and the effects they guard (stock,
 *   points, per-order fulfilment state), so a claim and its effect share one
 *   transaction. Inbox claims expire through TTL once no redelivery is possible.
 * - ProviderLog: the recording stand-in for external providers (mail,
 *   warehouse): one item per idempotency key, with a call count.
 */
export class Storage extends Construct {
  readonly ordersTable: dynamodb.Table;
  readonly idempotencyTable: dynamodb.Table;
  readonly effectsTable: dynamodb.Table;
  readonly providerLogTable: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);

    // Throttled above it rather than billed: a runaway load test in dev stops at this rate.
    const ceiling =
      props.throughputCeiling === undefined
        ? {}
        : { maxReadRequestUnits: props.throughputCeiling, maxWriteRequestUnits: props.throughputCeiling };
    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: props.removalPolicy,
      deletionProtection: props.deletionProtection,
      ...ceiling,
    };

    this.ordersTable = new dynamodb.Table(this, 'Orders', {
      ...common,
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

    this.idempotencyTable = new dynamodb.Table(this, 'Idempotency', {
      ...common,
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: IDEMPOTENCY_EXPIRY_ATTRIBUTE,
    });

    this.effectsTable = new dynamodb.Table(this, 'Effects', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: INBOX_EXPIRY_ATTRIBUTE,
    });

    this.providerLogTable = new dynamodb.Table(this, 'ProviderLog', {
      ...common,
      partitionKey: { name: 'idempotencyKey', type: dynamodb.AttributeType.STRING },
    });
  }
}
