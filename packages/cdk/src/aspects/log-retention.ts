import type { IAspect } from 'aws-cdk-lib';
import { CfnLogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

/**
 * Sets one retention on every log group it visits: the stage decides how
 * long logs are kept (prod longer than dev), not each construct. Register it
 * with `AspectPriority.MUTATING` on the scope it covers.
 *
 * @example The stage decides, for every log group under a scope whichever construct made it, as ExactlyOnce's retainLogsOf registers it (packages/cdk/src/exactly-once.ts)
 * ```ts
 * Aspects.of(scope).add(new LogRetentionAspect(props.logRetention), { priority: AspectPriority.MUTATING });
 * ```
 */
export class LogRetentionAspect implements IAspect {
  constructor(private readonly retention: RetentionDays) {}

  visit(node: IConstruct): void {
    if (node instanceof CfnLogGroup) node.retentionInDays = this.retention;
  }
}
