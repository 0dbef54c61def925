import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

/**
 * Refuses a resource given twice: an existing one and the props to make one. Taking either silently
 * would leave the other unused, and the application would believe settings applied that never were.
 *
 * @example
 * ```ts
 * refuseExistingWithProps('existingEffectsTable', props.existingEffectsTable, 'effectsTableProps', props.effectsTableProps);
 * ```
 */
export function refuseExistingWithProps(
  existingName: string,
  existing: unknown,
  propsName: string,
  given: unknown,
): void {
  if (existing !== undefined && given !== undefined)
    throw new Error(
      `ExactlyOnce: give ${existingName} or ${propsName}, not both (the props would not apply to an existing table)`,
    );
}

/**
 * The settings every table the mechanism makes starts from: on demand, AWS-managed encryption,
 * point-in-time recovery, the removal policy and deletion protection the stage chose, and an optional
 * on-demand ceiling (throttled above it rather than billed).
 *
 * @example
 * ```ts
 * new dynamodb.Table(this, 'Effects', { ...tableDefaults({ removalPolicy: RemovalPolicy.DESTROY }), ...effectsTableKeys() });
 * ```
 */
export function tableDefaults(options: {
  readonly removalPolicy?: RemovalPolicy;
  readonly deletionProtection?: boolean;
  readonly tableThroughputCeiling?: number;
}): Partial<dynamodb.TableProps> {
  const ceiling = options.tableThroughputCeiling;
  return {
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy: options.removalPolicy ?? RemovalPolicy.RETAIN,
    deletionProtection: options.deletionProtection ?? false,
    ...(ceiling === undefined ? {} : { maxReadRequestUnits: ceiling, maxWriteRequestUnits: ceiling }),
  };
}
