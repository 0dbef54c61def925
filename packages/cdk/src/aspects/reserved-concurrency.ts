import { CorrectnessAspect } from './correctness-aspect';
import { LAMBDA_FUNCTION, type RenderedResource } from './model';

/**
 * The context option that lets functions reserve concurrency: `-c allowReservedConcurrency=true`.
 *
 * @example
 * ```ts
 * const allowed = String(app.node.tryGetContext(ALLOW_RESERVED_CONCURRENCY_CONTEXT)) === 'true';
 * ```
 */
export const ALLOW_RESERVED_CONCURRENCY_CONTEXT = 'allowReservedConcurrency';

/**
 * Rule ReservedConcurrency: refuses, at synth, any Lambda function that sets
 * ReservedConcurrentExecutions, unless the context option
 * `allowReservedConcurrency` is `true`.
 *
 * Why: a new account's concurrency quota is often 10, and Lambda keeps at least
 * 10 unreserved, so reserving even 1 fails the first `cdk deploy` there ("decreases
 * account's UnreservedConcurrentExecution below its minimum value of [10]").
 * A deployer whose account has the quota to spare opts in explicitly.
 *
 * Read from the rendered template like the other rules, so a value set late
 * (by another aspect) or through an escape hatch (`addPropertyOverride`) is seen too.
 *
 * @example applyCorrectnessAspects registers it with the others; alone, e.g. in a test of this one rule
 * ```ts
 * Aspects.of(stack).add(new ReservedConcurrencyAspect(), { priority: AspectPriority.READONLY });
 * ```
 */
export class ReservedConcurrencyAspect extends CorrectnessAspect {
  readonly rule = 'ReservedConcurrency' as const;
  protected readonly resourceType = LAMBDA_FUNCTION;

  protected check(fn: RenderedResource): void {
    if (fn.properties.ReservedConcurrentExecutions === undefined) return;
    const allowed = String(fn.construct.node.tryGetContext(ALLOW_RESERVED_CONCURRENCY_CONTEXT)) === 'true';
    if (allowed) return;
    this.fail(
      fn,
      `${fn.construct.node.path} reserves concurrency, which fails to deploy in accounts at the default concurrency ` +
        `quota. Remove it, or pass -c ${ALLOW_RESERVED_CONCURRENCY_CONTEXT}=true if your account has room.`,
    );
  }
}
