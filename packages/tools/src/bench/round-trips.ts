import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Counts the DynamoDB round trips a client makes, per operation and table,
 * with a middleware at the deserialize step (innermost: one count per HTTP
 * attempt, retries included). It also asks for consumed capacity, so the bench
 * reads the write and read units DynamoDB itself charges for each request.
 */
export interface RoundTrip {
  operation: string;
  /** Table names the request touched (a transaction may touch several). */
  tables: string[];
  /** Items written in one request (transaction items), 1 otherwise. */
  items: number;
  /** Capacity units by table, as the response reported them (empty when the emulator reports none). */
  capacity: Record<string, { write: number; read: number }>;
}

export interface RoundTripLog {
  trips: RoundTrip[];
  reset(): void;
}

export function countRoundTrips(client: DynamoDBClient): RoundTripLog {
  const log: RoundTripLog = {
    trips: [],
    reset() {
      log.trips.length = 0;
    },
  };
  // Outer: ask for consumed capacity, and read it from the parsed output of the last attempt.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (input.ReturnConsumedCapacity === undefined) input.ReturnConsumedCapacity = 'INDEXES';
      const attempts: RoundTrip[] = [];
      (context as { benchAttempts?: RoundTrip[] }).benchAttempts = attempts;
      const read = (consumed: unknown) => {
        const last = attempts.at(-1);
        if (last !== undefined) last.capacity = capacityByTable(consumed, last.operation);
      };
      try {
        const result = await next(args);
        read((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        return result;
      } catch (error) {
        read((error as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        throw error;
      }
    },
    { step: 'initialize', name: 'benchAskConsumedCapacity' },
  );
  // Inner: one count per HTTP attempt.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const trip: RoundTrip = {
        operation: (context.commandName ?? 'unknown').replace(/Command$/, ''),
        ...describe(args.input as Record<string, unknown>),
        capacity: {},
      };
      log.trips.push(trip);
      (context as { benchAttempts?: RoundTrip[] }).benchAttempts?.push(trip);
      return next(args);
    },
    { step: 'deserialize', name: 'benchCountRoundTrips' },
  );
  return log;
}

function describe(input: Record<string, unknown>): { tables: string[]; items: number } {
  const transact = input.TransactItems as Record<string, { TableName?: string }>[] | undefined;
  if (Array.isArray(transact)) {
    const tables = transact.map((item) => Object.values(item)[0]?.TableName ?? 'unknown');
    return { tables: [...new Set(tables)], items: transact.length };
  }
  return { tables: [String(input.TableName ?? 'unknown')], items: 1 };
}

interface Consumed {
  TableName?: string;
  CapacityUnits?: number;
  WriteCapacityUnits?: number;
  ReadCapacityUnits?: number;
}

/** DynamoDB operations that consume read units (everything else the bench sends writes). */
export const READ_OPERATIONS: ReadonlySet<string> = new Set([
  'GetItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'TransactGetItems',
]);

function capacityByTable(consumed: unknown, operation: string): Record<string, { write: number; read: number }> {
  const list = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) as Consumed[];
  const result: Record<string, { write: number; read: number }> = {};
  for (const c of list) {
    const name = c.TableName ?? 'unknown';
    const entry = (result[name] ??= { write: 0, read: 0 });
    entry.write += c.WriteCapacityUnits ?? 0;
    entry.read += c.ReadCapacityUnits ?? 0;
    if (c.WriteCapacityUnits === undefined && c.ReadCapacityUnits === undefined) {
      if (READ_OPERATIONS.has(operation)) entry.read += c.CapacityUnits ?? 0;
      else entry.write += c.CapacityUnits ?? 0;
    }
  }
  return result;
}

/** "TransactWriteItems(3 items) x1, UpdateItem x2": the mix of a set of trips, in first-seen order. */
export function describeMix(trips: readonly RoundTrip[], tableLabel: (name: string) => string = (n) => n): string {
  const counts = new Map<string, number>();
  for (const t of trips) {
    const label = `${t.operation}${t.items > 1 ? `(${t.items} items)` : ''} on ${t.tables.map(tableLabel).join('+')}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts].map(([label, n]) => `${label} x${n}`).join(', ');
}
