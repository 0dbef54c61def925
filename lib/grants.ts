import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

/**
 * Grants exactly the named DynamoDB actions on the table itself (not its
 * indexes), so each function's policy lists what it does and nothing more.
 * The L2 `grantReadWriteData` would also allow scans, batch writes and deletes.
 */
export function grantTableActions(grantee: iam.IGrantable, table: dynamodb.ITable, actions: string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: actions.map((a) => `dynamodb:${a}`), resources: [table.tableArn] }),
  );
}
