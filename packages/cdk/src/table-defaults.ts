import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';

/**
 * The attribute Powertools' idempotency records carry their expiry in: the idempotency table's TTL.
 *
 * @example
 * ```ts
 * new dynamodb.Table(this, 'Idempotency', { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING }, timeToLiveAttribute: IDEMPOTENCY_EXPIRY_ATTRIBUTE });
 * ```
 */
export const IDEMPOTENCY_EXPIRY_ATTRIBUTE = 'expiration';

const string = dynamodb.AttributeType.STRING;

/**
 * What the runtime reads each of the mechanism's tables by: its keys and TTL attribute. Applied after
 * the application's props, so a prop cannot change them: Powertools looks records up by `id` and
 * expires them by IDEMPOTENCY_EXPIRY_ATTRIBUTE; the consumers claim by `pk`/`sk` and set
 * INBOX_TTL_ATTRIBUTE; the recording provider double writes by `idempotencyKey`. A sort key where the
 * runtime writes none would fail every write, so those tables have it cleared.
 *
 * @example
 * ```ts
 * new dynamodb.Table(this, 'Effects', { ...tableDefaults({}), ...userProps, ...REQUIRED_TABLE_SETTINGS.effects });
 * ```
 */
export const REQUIRED_TABLE_SETTINGS = {
  idempotency: {
    partitionKey: { name: 'id', type: string },
    sortKey: undefined,
    timeToLiveAttribute: IDEMPOTENCY_EXPIRY_ATTRIBUTE,
  },
  effects: {
    partitionKey: { name: 'pk', type: string },
    sortKey: { name: 'sk', type: string },
    timeToLiveAttribute: INBOX_TTL_ATTRIBUTE,
  },
  providerLog: { partitionKey: { name: 'idempotencyKey', type: string }, sortKey: undefined },
} as const satisfies Record<string, Partial<dynamodb.TableProps>>;

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
