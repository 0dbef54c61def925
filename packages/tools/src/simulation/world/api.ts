import type { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayerOptions } from '@aws-lambda-powertools/idempotency/types';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { idempotencyStore } from '@exactly-once/runtime/aws';
import type { MemoryDynamoDb } from '../memory-dynamodb';
import { lowLevelClient } from '../low-level-client';
import type { Invocation } from './invocation';
import { IDEMPOTENCY_TABLE } from './tables';

/**
 * The idempotent API in the simulation: Powertools' idempotency layer with its real DynamoDB
 * persistence layer, on one simulated request's clients. The persistence layer talks to the in-memory
 * DynamoDB through the low-level client (PutItem with its conditions and ALL_OLD, GetItem, UpdateItem,
 * DeleteItem); Powertools reads the time from Date.now, which the world points at its virtual clock
 * while a schedule runs. A domain's API handler takes this store (the neutral probe domain's: test/simulation/probe-world.ts).
 */

/**
 * The API's idempotency layer, or one of two test-only breaks of it:
 * - 'no-payload-validation': the layer without `payloadValidationJmesPath`, so
 *   a key reused with another body is answered with the first body's entity;
 * - 'bypassed': Powertools' own switch (POWERTOOLS_IDEMPOTENCY_DISABLED) on, so
 *   every request runs the use case (a replay after a change answers with the
 *   changed entity instead of the first answer).
 */
export type ApiIdempotency = 'powertools' | 'no-payload-validation' | 'bypassed';

/** The idempotency store of one simulated request, as the guard has it (see ApiIdempotency). */
export function simulatedIdempotencyStore(
  invocation: Invocation,
  db: MemoryDynamoDb,
  idempotency: ApiIdempotency,
): DynamoDBPersistenceLayer {
  const store = idempotencyStore(IDEMPOTENCY_TABLE, invocationClient(invocation, db));
  if (idempotency === 'no-payload-validation') withoutPayloadValidation(store);
  return store;
}

/** The break: the store configured as if the config had no payloadValidationJmesPath. */
function withoutPayloadValidation(store: DynamoDBPersistenceLayer): void {
  const configure = store.configure.bind(store);
  store.configure = (options?: BasePersistenceLayerOptions) =>
    configure({
      ...options,
      config: Object.create(options?.config ?? null, { payloadValidationJmesPath: { value: undefined } }),
    });
}

/**
 * The low-level client of one simulated request: each command goes through
 * the invocation's await point (latency, crash before or after it lands) to
 * the in-memory DynamoDB.
 */
function invocationClient(invocation: Invocation, db: MemoryDynamoDb): DynamoDBClient {
  return lowLevelClient((command) => {
    const key = (command.input.Key ?? command.input.Item) as Record<string, AttributeValue> | undefined;
    const label = `${command.constructor.name.replace('Command', '')} ${key?.id?.S ?? ''}`;
    return invocation.io(label, () => db.execute(command));
  });
}
