import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createStackTables, useEmulatorEnvironment } from './dynamodb';

export type ApiHandler = (
  event: APIGatewayProxyEvent,
  context: Context,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

/** One DynamoDB call a handler made: its command, its table ('transaction' for a transaction) and its size. */
export interface RecordedCall {
  command: string;
  table: string;
  transactItems?: number;
}

/**
 * The API's entry points on DynamoDB Local, with every table the stack declares (fresh names) in their
 * environment and a caller rule with SAML-federated people (`AWSReservedSSO_*,Okta-*`, as a stage sets
 * `-c humanRolePatterns`). Every DynamoDB call the handlers make is recorded (the document client shares
 * the low-level client's middleware stack), cleared before each test; `failNext` (cleared too) fails the next call it
 * matches with a connection reset, once. Entry points are loaded after the environment is set, as
 * Lambda loads them.
 */
export function useApiOnEmulators<E extends string>(entryPoints: readonly E[]) {
  const state: {
    tables?: Awaited<ReturnType<typeof createStackTables>>;
    calls: RecordedCall[];
    handlers: Partial<Record<E, ApiHandler>>;
    failNext?: (command: string, table: string) => boolean;
  } = { calls: [], handlers: {} };

  beforeAll(async () => {
    useEmulatorEnvironment();
    state.tables = await createStackTables();
    process.env.ORDERS_TABLE_NAME = state.tables.names.Orders;
    process.env.IDEMPOTENCY_TABLE_NAME = state.tables.names.Idempotency;
    process.env.IDEMPOTENCY_KEY_EXPIRY_SECONDS = '86400';
    process.env.EFFECTS_TABLE_NAME = state.tables.names.Effects;
    process.env.HUMAN_ROLE_PATTERNS = 'AWSReservedSSO_*,Okta-*';
    const clients = await import('@exactly-once/runtime/aws/clients');
    clients.dynamoDbClient().middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { TableName?: string; TransactItems?: unknown[] };
        const command = context.commandName ?? 'unknown';
        const table = input.TableName ?? 'transaction';
        state.calls.push({ command, table, transactItems: input.TransactItems?.length });
        if (state.failNext?.(command, table)) {
          state.failNext = undefined;
          throw Object.assign(new Error('socket hang up (injected)'), { code: 'ECONNRESET' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    for (const entryPoint of entryPoints)
      state.handlers[entryPoint] = (
        (await import(`../../lambdas/shop/handlers/${entryPoint}`)) as { handler: ApiHandler }
      ).handler;
  }, 180_000);

  afterAll(async () => {
    await state.tables?.drop();
  });

  beforeEach(() => {
    state.calls = [];
    state.failNext = undefined;
  });

  return {
    /** The tables' names by logical id prefix (Orders, Idempotency, Effects, ProviderLog). */
    tables: () => state.tables!.names,
    handler: (entryPoint: E) => state.handlers[entryPoint]!,
    /** The calls recorded since the last `resetCalls` (or the test's start). */
    calls: () => state.calls,
    resetCalls: () => {
      state.calls = [];
    },
    failNext: (match: (command: string, table: string) => boolean) => {
      state.failNext = match;
    },
  };
}
