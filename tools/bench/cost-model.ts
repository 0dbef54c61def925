import type { RuntimeStats } from '../local-runtime/runtime';
import { ratio } from './figures';
import { READ_OPERATIONS, type RoundTrip } from './round-trips';

/**
 * Write and read units by table for a set of round trips. Single-item requests
 * use the capacity DynamoDB Local reported (it counts item size and index
 * writes); transactions use the billing rule, two units per item up to 1 KB,
 * because DynamoDB Local reports a flat figure for them whatever their size.
 */
export function unitsByTable(
  trips: readonly RoundTrip[],
  label: (table: string) => string,
): Record<string, { writeUnits: number; readUnits: number }> {
  const result: Record<string, { writeUnits: number; readUnits: number }> = {};
  const add = (table: string, write: number, read: number) => {
    const entry = (result[label(table)] ??= { writeUnits: 0, readUnits: 0 });
    entry.writeUnits += write;
    entry.readUnits += read;
  };
  for (const trip of trips) {
    const reported = Object.entries(trip.capacity);
    const transactional = trip.operation.startsWith('Transact');
    if (!transactional && reported.some(([, c]) => c.write + c.read > 0)) {
      for (const [table, c] of reported) add(table, c.write, c.read);
      continue;
    }
    const isRead = READ_OPERATIONS.has(trip.operation);
    const units = transactional ? 2 * trip.items : trip.items;
    for (const table of trip.tables)
      add(table, isRead ? 0 : units / trip.tables.length, isRead ? units / trip.tables.length : 0);
  }
  return result;
}

/** GB-seconds per order from per-function busy time and memory (MB), over `orders` orders. */
export function gbSecondsPerOrder(functions: readonly { memoryMb: number; busyMs: number }[], orders: number): number {
  if (orders <= 0) return 0;
  return functions.reduce((sum, f) => sum + (f.memoryMb / 1024) * (f.busyMs / 1000), 0) / orders;
}

/**
 * DynamoDB units per order by table between two stats snapshots, as the
 * runtime's counting proxy saw them (labelled `orders`, `effects`, ...).
 */
export function unitsPerOrderByTable(
  before: Pick<RuntimeStats, 'dynamodbByTable'>,
  after: Pick<RuntimeStats, 'dynamodbByTable'>,
  orders: number,
  label: (table: string) => string,
): Record<string, { writeUnits: number; readUnits: number }> {
  const result: Record<string, { writeUnits: number; readUnits: number }> = {};
  for (const [table, units] of Object.entries(after.dynamodbByTable ?? {})) {
    const earlier = before.dynamodbByTable?.[table] ?? { writeUnits: 0, readUnits: 0 };
    const writeUnits = ratio(units.writeUnits - earlier.writeUnits, orders);
    const readUnits = ratio(units.readUnits - earlier.readUnits, orders);
    if (writeUnits === 0 && readUnits === 0) continue;
    const entry = (result[label(table)] ??= { writeUnits: 0, readUnits: 0 });
    entry.writeUnits += writeUnits;
    entry.readUnits += readUnits;
  }
  return result;
}
