import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

/**
 * Grants exactly the named DynamoDB actions on the table itself (not its
 * indexes), so each function's policy lists what it does and nothing more.
 * The L2 `grantReadWriteData` would also allow scans, batch writes and deletes.
 *
 * @example A read-only GET /orders/{id} handler may only read its table
 * ```ts
 * import { grantTableActions } from '.';
 *
 * grantTableActions(getOrder.fn, ordersTable, ['GetItem']);
 * ```
 */
export function grantTableActions(grantee: iam.IGrantable, table: dynamodb.ITable, actions: string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: actions.map((a) => `dynamodb:${a}`), resources: [table.tableArn] }),
  );
}

/**
 * Like grantTableActions, on one named index (the sweeper queries the pending-outbox index).
 *
 * @example The sweeper's query on the pending-outbox index (packages/cdk/src/outbox-wiring.ts)
 * ```ts
 * grantIndexActions(outbox.sweeper.fn, outboxTable, PENDING_OUTBOX_INDEX, ['Query']);
 * ```
 */
export function grantIndexActions(
  grantee: iam.IGrantable,
  table: dynamodb.ITable,
  indexName: string,
  actions: string[],
): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: actions.map((a) => `dynamodb:${a}`),
      resources: [`${table.tableArn}/index/${indexName}`],
    }),
  );
}
