/**
 * DynamoDB's billing units from what it stores and answers: an item's billed size, the write units a
 * write of it costs, and the capacity units its ConsumedCapacity answers report, by table and index.
 */

/** A DynamoDB attribute value in the wire shape (`{ S: 'x' }`, `{ N: '1' }`, `{ M: {...} }`, ...). */
export type WireAttributeValue = Record<string, unknown>;

/**
 * An item's size as DynamoDB bills it: each attribute's name (UTF-8 bytes) plus its value: a string
 * or binary its bytes, a number about one byte per two digits plus one, a boolean or null one byte, a
 * map or list 3 bytes plus one per element plus its elements (a map's names included), a set the sum
 * of its members.
 *
 * @example
 * ```ts
 * dynamoDbItemBytes({ pk: { S: 'ORDER#1' }, n: { N: '42' } }); // 2 + 7 + 1 + 2 = 12
 * ```
 */
export function dynamoDbItemBytes(item: Record<string, WireAttributeValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

function valueBytes(value: WireAttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(String(v));
    case 'N':
      return Math.ceil(String(v).replace(/^-|\.|^0+/g, '').length / 2) + 1;
    case 'B':
      return typeof v === 'string' ? Buffer.from(v, 'base64').length : (v as Uint8Array).byteLength;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (v as string[]).reduce((s, m) => s + Buffer.byteLength(m), 0);
    case 'NS':
      return (v as string[]).reduce((s, m) => s + valueBytes({ N: m }), 0);
    case 'L':
      return 3 + (v as WireAttributeValue[]).reduce((s, e) => s + 1 + valueBytes(e), 0);
    case 'M':
      return (
        3 +
        Object.entries(v as Record<string, WireAttributeValue>).reduce(
          (s, [k, e]) => s + 1 + Buffer.byteLength(k) + valueBytes(e),
          0,
        )
      );
    default:
      return 0;
  }
}

/**
 * Write units one write of an item costs (on-demand): one per started KB of the item (the larger of
 * its old and new image for an update), at least one; a transactional write costs twice that. An index
 * the item is in costs the same again for its entry.
 *
 * @example A transactional item of 1.1 KB
 * ```ts
 * writeUnitsOf(1_130, { transactional: true }); // 4, not 2
 * ```
 */
export function writeUnitsOf(itemBytes: number, options: { transactional: boolean }): number {
  return (options.transactional ? 2 : 1) * Math.max(1, Math.ceil(itemBytes / 1024));
}

/**
 * Capacity units by table label and target (`table`, or an index's name), summed over DynamoDB's
 * ConsumedCapacity answers (ReturnConsumedCapacity INDEXES). DynamoDB Local's answer for a single-item
 * write counts the item's size and each index it touches; for a transaction it leaves out the updated
 * items, so a transaction is priced with {@link writeUnitsOf} from its items' measured sizes instead.
 *
 * @example
 * ```ts
 * capacityUnitsByTarget([{ TableName: 'Orders', Table: { CapacityUnits: 1 }, GlobalSecondaryIndexes: { pendingOutbox: { CapacityUnits: 1 } } }]);
 * // { Orders: { table: 1, pendingOutbox: 1 } }
 * ```
 */
export function capacityUnitsByTarget(
  consumed: readonly unknown[],
  label: (tableName: string) => string = (name) => name,
): Record<string, Record<string, number>> {
  const result: Record<string, Record<string, number>> = {};
  for (const answer of consumed) {
    const list = (Array.isArray(answer) ? answer : answer === undefined ? [] : [answer]) as ConsumedCapacity[];
    for (const c of list) {
      const table = c.TableName ?? 'unknown';
      addUnits(result, label(table), 'table', c.Table?.CapacityUnits ?? c.Table?.WriteCapacityUnits);
      for (const [index, units] of Object.entries(c.GlobalSecondaryIndexes ?? {}))
        addUnits(result, label(table), index, units.CapacityUnits ?? units.WriteCapacityUnits);
    }
  }
  return result;
}

/** Adds `units` to `into[table][target]`. */
export function addUnits(
  into: Record<string, Record<string, number>>,
  table: string,
  target: string,
  units: number | undefined,
): void {
  if (units === undefined || units === 0) return;
  const entry = (into[table] ??= {});
  entry[target] = (entry[target] ?? 0) + units;
}

interface ConsumedCapacity {
  TableName?: string;
  Table?: { CapacityUnits?: number; WriteCapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number; WriteCapacityUnits?: number }>;
}
