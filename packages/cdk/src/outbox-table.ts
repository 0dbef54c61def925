import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { OUTBOX_TTL_ATTRIBUTE, PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import { tableDefaults } from './table-defaults';

const string = dynamodb.AttributeType.STRING;

/**
 * What the runtime reads an outbox table by, applied after the application's props: the outbox items'
 * keys (`pk` = the entity's partition, `sk` = OUTBOX#<eventId>), the new-image stream the relay
 * reads, and the TTL that expires dispatched items (the OutboxRetention rule checks it).
 */
const REQUIRED_OUTBOX_SETTINGS = {
  partitionKey: { name: 'pk', type: string },
  sortKey: { name: 'sk', type: string },
  stream: dynamodb.StreamViewType.NEW_IMAGE,
  timeToLiveAttribute: OUTBOX_TTL_ATTRIBUTE,
} as const satisfies Partial<dynamodb.TableProps>;

/**
 * What an OutboxTable is made from: the same defaults as the mechanism's own tables, and the
 * application's settings over them.
 *
 * @example
 * ```ts
 * const props: OutboxTableProps = { removalPolicy: RemovalPolicy.DESTROY, tableThroughputCeiling: 100 };
 * ```
 */
export interface OutboxTableProps {
  /**
   * What happens to the table when the stack deletes it.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The table refuses DeleteTable until it is switched off.
   *
   * @default false
   */
  readonly deletionProtection?: boolean;
  /**
   * The on-demand ceiling of the table and of its pending index, in read and in write request units
   * per second: throttled above it rather than billed.
   *
   * @default - none
   */
  readonly tableThroughputCeiling?: number;
  /**
   * Settings over the defaults (on demand, AWS-managed encryption, point-in-time recovery). The keys
   * (`pk`, `sk`), the new-image stream and the TTL attribute (OUTBOX_TTL_ATTRIBUTE) the runtime reads
   * are applied after these: a prop that sets them is overridden, never used.
   *
   * @default - the defaults alone
   */
  readonly tableProps?: Partial<dynamodb.TableProps>;
}

/**
 * An application's entity table that holds its outbox items beside its entities, written in one
 * transaction: the table ExactlyOnce's `outboxTable` takes. It carries what the relay and the sweeper
 * need, from the runtime's names: keys `pk`/`sk`, a new-image stream (the relay), the TTL attribute
 * OUTBOX_TTL_ATTRIBUTE (dispatched items expire) and the sparse index PENDING_OUTBOX_INDEX (the
 * sweeper finds undispatched items by it). It is a `dynamodb.Table`, made at `scope`/`id` like one, so
 * a stack that replaces its hand-built table with it keeps the table's logical id.
 *
 * @example
 * ```ts
 * const bookingsTable = new OutboxTable(this, 'Bookings', { removalPolicy: config.removalPolicy });
 * new ExactlyOnce(this, 'ExactlyOnce', { ...config, outboxTable: bookingsTable, entityPartitionPrefix: 'BOOKING#', consumers, producedTypes });
 * ```
 */
export class OutboxTable extends dynamodb.Table {
  constructor(scope: Construct, id: string, props: OutboxTableProps = {}) {
    super(scope, id, {
      ...tableDefaults(props),
      ...props.tableProps,
      ...REQUIRED_OUTBOX_SETTINGS,
    } as dynamodb.TableProps);
    const ceiling = props.tableThroughputCeiling;
    this.addGlobalSecondaryIndex({
      indexName: PENDING_OUTBOX_INDEX,
      // The attributes outboxPut sets on an undispatched item and the relay removes once it is published.
      partitionKey: { name: 'pendingShard', type: string },
      sortKey: { name: 'createdAt', type: string },
      projectionType: dynamodb.ProjectionType.ALL,
      ...(ceiling === undefined ? {} : { maxReadRequestUnits: ceiling, maxWriteRequestUnits: ceiling }),
    });
  }
}
