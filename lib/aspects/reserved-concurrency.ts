import { Annotations, type IAspect } from 'aws-cdk-lib';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';

/** The context option that lets functions reserve concurrency: `-c allowReservedConcurrency=true`. */
export const ALLOW_RESERVED_CONCURRENCY_CONTEXT = 'allowReservedConcurrency';

/**
 * Refuses, at synth, any Lambda function that sets ReservedConcurrentExecutions,
 * unless the context option `allowReservedConcurrency` is `true`.
 *
 * Why: a new account's concurrency quota is often 10, and Lambda keeps at least
 * 10 unreserved, so reserving even 1 fails the first `cdk deploy` there ("decreases
 * account's UnreservedConcurrentExecution below its minimum value of [10]").
 * A deployer whose account has the quota to spare opts in explicitly.
 *
 * The check runs in synth's validation phase, after every aspect has run, so
 * a value set late (by another aspect or an escape hatch) is still seen.
 */
export class ReservedConcurrencyAspect implements IAspect {
  private readonly registered = new WeakSet<CfnFunction>();

  visit(node: IConstruct): void {
    if (!(node instanceof CfnFunction) || this.registered.has(node)) return;
    this.registered.add(node);
    node.node.addValidation({
      validate: () => {
        const allowed = String(node.node.tryGetContext(ALLOW_RESERVED_CONCURRENCY_CONTEXT)) === 'true';
        if (node.reservedConcurrentExecutions !== undefined && !allowed) {
          Annotations.of(node).addError(
            `[ReservedConcurrency] ${node.node.path} reserves concurrency, which fails to deploy in accounts at the ` +
              `default concurrency quota. Remove it, or pass -c ${ALLOW_RESERVED_CONCURRENCY_CONTEXT}=true if your account has room.`,
          );
        }
        return [];
      },
    });
  }
}
