/**
 * The mechanism's AWS adapters (`exactly-once/aws`): the SDK clients, the outbox item an application
 * writes with its state change, the ledger of an entity-state effect, the HTTP and recording providers,
 * the idempotency store, and how the functions classify SDK errors. An application's own aws/ folder
 * builds on these; its use cases import the root module only.
 *
 * @example An application's repository writes an entity and its outbox item in one transaction
 * ```ts
 * import { dynamoDbDocumentClient, outboxPut } from '.';
 *
 * await documents.send(new TransactWriteCommand({ TransactItems: [{ Put: orderItem }, outboxPut(tableName, ORDER_PK_PREFIX, event)] }));
 * ```
 */

export { dynamoDbClient, dynamoDbDocumentClient, sqsClient } from './clients';
export { ENTITY_OUTBOX, outboxItemKey, outboxPut, pendingShardOf } from './outbox-table';
export {
  DEFAULT_PROVIDER_KEY_WINDOW_SECONDS,
  PROVIDER_KEY_WINDOW_MARGIN_SECONDS,
  type LedgerOptions,
} from './inbox-ledger';
export type { LedgerKeyOptions } from './inbox-claim-keys';
export { CURRENT_KEY_SHAPE, KNOWN_KEY_SHAPES, type KeyShape } from '../inbox/keys';
export { DynamoDbEntityEffectLedger } from './entity-effect-ledger';
export {
  EntityConditionFailed,
  SequencedLedger,
  sequencedEntityKey,
  owedCallAttribute,
  owedCallWindowFromAttribute,
  SEQUENCE_ATTRIBUTES,
  type EntityUpdate,
  type SequencedLedgerOptions,
} from './sequenced-ledger';
export { DynamoDbSequencedEntityEffectLedger } from './sequenced-entity-effect-ledger';
export { HttpProvider, ProviderUnavailable, type ApiKeyHeader, type HttpProviderOptions } from './http-provider';
export { API_KEY_CACHE_SECONDS, apiKeyFromParameter, type RefreshableApiKey } from './parameter-api-key';
export { RecordingProvider } from './recording-provider';
export { idempotencyStore } from './idempotency-store';
export { isContention, isDependencyFailure } from './transient-errors';
