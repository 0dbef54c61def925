import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A low-level DynamoDB client whose commands go to `send`. `config` and
 * `middlewareStack` are what Powertools checks before it uses a given client
 * (else it builds its own); the user-agent middleware it adds has no HTTP
 * request to act on here.
 */
export function lowLevelClient(send: (command: LowLevelCommand) => Promise<unknown>): DynamoDBClient {
  return {
    send,
    config: {},
    middlewareStack: { identify: (): string[] => [], addRelativeTo: (): void => undefined },
  } as unknown as DynamoDBClient;
}

export interface LowLevelCommand {
  constructor: { name: string };
  input: Record<string, unknown>;
}
