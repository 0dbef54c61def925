import type { RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { OutboxTable } from '@exactly-once/cdk';

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
    // The keys, stream, TTL and pending index are the mechanism's (OutboxTable); the stage sets the rest.
    // Throttled above the ceiling rather than billed: a runaway load test in dev stops at that rate.
    const { removalPolicy, deletionProtection, tableThroughputCeiling } = props;
    this.ordersTable = new OutboxTable(this, 'Orders', { removalPolicy, deletionProtection, tableThroughputCeiling });
  }
}
