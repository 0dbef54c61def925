import { createTemplateTables } from './emulated-dynamodb';
import { defaultStackTemplate } from './synth';

export { scanAll, testDynamoDbClient, useEmulatorEnvironment } from './emulated-dynamodb';

/**
 * Creates every table the shop's synthesized stack declares, exactly as declared
 * (keys, indexes, stream, TTL), under fresh names; returns names by logical id prefix
 * (Orders, Idempotency, Effects, ProviderLog).
 */
export function createStackTables(): ReturnType<typeof createTemplateTables<string>> {
  return createTemplateTables(defaultStackTemplate(), (logicalId) =>
    logicalId.replace(/^Storage/, '').replace(/[0-9A-F]{8}$/, ''),
  );
}
