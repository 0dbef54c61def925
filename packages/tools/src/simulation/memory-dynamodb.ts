import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  IdempotentParameterMismatchException,
  PutItemCommand,
  TransactionCanceledException,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import {
  applyUpdate,
  attributeName,
  clone,
  compare,
  evaluate,
  parseCondition,
  parseUpdate,
} from './memory-dynamodb-expressions';

/**
 * An in-memory DynamoDB behind the DocumentClient's `send`, so the real
 * adapters (lambdas/adapters/dynamodb-*) run unchanged in the simulation. It
 * implements what those adapters rely on, with DynamoDB's semantics:
 * conditional Put/Update/Delete, TransactWriteItems (every condition checked
 * first, then all writes or none; CancellationReasons per item, with the old
 * item when ReturnValuesOnConditionCheckFailure is ALL_OLD), ReturnValues,
 * strongly consistent Get/Scan, and Query on the table or a sparse index.
 * The low-level client's GetItem/PutItem/UpdateItem/DeleteItem are served too,
 * with marshalled attributes in and out (Powertools' idempotency persistence
 * layer sends those), by the same conditions and writes.
 * The port contract suites (test/simulation/contracts) run the same adapters
 * on this and on DynamoDB Local, so the two cannot drift apart unnoticed.
 *
 * Expressions: top-level attributes only (what the adapters use); anything
 * else throws, so a new expression shape fails loudly instead of silently.
 */
export type Item = Record<string, unknown>;

/** How long DynamoDB keeps a TransactWriteItems ClientRequestToken. */
const REQUEST_TOKEN_WINDOW_MS = 10 * 60 * 1000;
/** Past this many remembered tokens, the expired ones are dropped (a long run sends millions). */
const REQUEST_TOKENS_KEPT = 10_000;

export interface TableSchema {
  hash: string;
  range?: string;
  indexes?: Record<string, { hash: string; range?: string }>;
}

export interface WriteChange {
  table: string;
  oldImage: Item | undefined;
  newImage: Item | undefined;
}

export class MemoryDynamoDb {
  private readonly tables = new Map<
    string,
    { schema: TableSchema; items: Map<string, Item>; indexed: Map<string, Set<string>> }
  >();
  /** Called before each write request; throwing from it fails the request (fault injection: conflicts, throttling). */
  beforeWrite: (table: string, operation: string) => void = () => undefined;
  /** Called after each committed item change, in commit order (the simulation's table stream). */
  onChange: (change: WriteChange) => void = () => undefined;
  /** Test-only fault: conditions on items whose key matches are treated as true (a removed guard). */
  ignoreConditionOn: ((table: string, key: Item) => boolean) | undefined;
  /**
   * TransactWriteItems' ClientRequestTokens seen in the last 10 minutes, with the request they came
   * with: DynamoDB answers a repeat of a committed request as a success without writing again.
   */
  private readonly requestTokens = new Map<string, { request: string; at: number }>();
  private requestTokensSweptAbove = REQUEST_TOKENS_KEPT;

  createTable(name: string, schema: TableSchema): void {
    const indexed = new Map(Object.keys(schema.indexes ?? {}).map((index) => [index, new Set<string>()]));
    this.tables.set(name, { schema, items: new Map(), indexed });
  }

  items(table: string): Item[] {
    return [...this.table(table).items.values()].map(clone);
  }

  /** The stored items themselves, not copies: for reading once nothing writes any more (the end of a run). */
  storedItems(table: string): readonly Item[] {
    return [...this.table(table).items.values()];
  }

  /** A DocumentClient look-alike: only `send` is used by the adapters. */
  asDocumentClient(): DynamoDBDocumentClient {
    return { send: (command: unknown) => this.send(command) } as unknown as DynamoDBDocumentClient;
  }

  async send(command: unknown): Promise<Record<string, unknown>> {
    return this.execute(command);
  }

  /** Synchronous core: the simulation calls this at the virtual instant a request completes. */
  execute(command: unknown): Record<string, unknown> {
    if (command instanceof GetCommand) {
      const { TableName, Key } = command.input;
      const item = this.table(TableName!).items.get(this.keyOf(TableName!, Key!));
      return { Item: item === undefined ? undefined : clone(item) };
    }
    if (command instanceof ScanCommand) return { Items: this.items(command.input.TableName!) };
    if (command instanceof BatchGetCommand) return this.batchGet(command.input.RequestItems ?? {});
    if (command instanceof QueryCommand) return this.query(command.input);
    if (command instanceof PutCommand || command instanceof UpdateCommand || command instanceof DeleteCommand) {
      const kind = command instanceof PutCommand ? 'Put' : command instanceof UpdateCommand ? 'Update' : 'Delete';
      return { Attributes: clone(this.write(kind, command.input as WriteInput)) };
    }
    if (
      command instanceof GetItemCommand ||
      command instanceof PutItemCommand ||
      command instanceof UpdateItemCommand ||
      command instanceof DeleteItemCommand
    )
      return this.executeLowLevel(command);
    if (command instanceof TransactWriteCommand) return this.transactOnce(command.input);
    throw new Error(`MemoryDynamoDb: unsupported command ${(command as object).constructor.name}`);
  }

  /** One conditional Put/Update/Delete: the ReturnValues attributes (not copied), or ConditionalCheckFailed. */
  private write(kind: 'Put' | 'Update' | 'Delete', input: WriteInput): Item | undefined {
    this.beforeWrite(input.TableName, kind);
    const write = this.prepare(kind, input);
    if (!write.conditionHolds) {
      // The exception carries the old item marshalled, from the document client as from the low-level one.
      throw new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && write.old ? marshall(write.old) : undefined,
      });
    }
    this.commit([write]);
    return returnValues(input, write.old, write.next);
  }

  /** The low-level client's item commands: attribute values unmarshalled in, marshalled out. */
  private executeLowLevel(
    command: GetItemCommand | PutItemCommand | UpdateItemCommand | DeleteItemCommand,
  ): Record<string, unknown> {
    const input = command.input;
    const plain = (attributes: Record<string, AttributeValue> | undefined) =>
      attributes === undefined ? undefined : (unmarshall(attributes) as Item);
    const out = (item: Item | undefined) =>
      item === undefined ? undefined : marshall(item, { removeUndefinedValues: true });
    if (command instanceof GetItemCommand) {
      const table = command.input.TableName!;
      return { Item: out(this.table(table).items.get(this.keyOf(table, plain(command.input.Key)!))) };
    }
    const kind = command instanceof PutItemCommand ? 'Put' : command instanceof UpdateItemCommand ? 'Update' : 'Delete';
    const writeInput = {
      ...input,
      Item: plain((input as PutItemCommand['input']).Item),
      Key: plain((input as UpdateItemCommand['input']).Key),
      ExpressionAttributeValues: plain((input as UpdateItemCommand['input']).ExpressionAttributeValues),
    } as WriteInput;
    return { Attributes: out(this.write(kind, writeInput)) };
  }

  /** BatchGetItem, read consistently; a missing key is simply absent, as on DynamoDB. Top-level projections only. */
  private batchGet(
    requestItems: Record<string, { Keys?: Record<string, unknown>[]; ProjectionExpression?: string }>,
  ): Record<string, unknown> {
    const responses: Record<string, Item[]> = {};
    for (const [tableName, request] of Object.entries(requestItems)) {
      if ((request.Keys ?? []).length > 100) throw new Error('ValidationException: more than 100 keys in BatchGetItem');
      const projection = request.ProjectionExpression?.split(',').map((a) => a.trim());
      if (projection?.some((a) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(a)))
        throw new Error(`MemoryDynamoDb: unsupported projection ${request.ProjectionExpression}`);
      responses[tableName] = (request.Keys ?? []).flatMap((key) => {
        const item = this.table(tableName).items.get(this.keyOf(tableName, key));
        if (item === undefined) return [];
        const copy = clone(item);
        return [
          projection === undefined
            ? copy
            : Object.fromEntries(projection.filter((a) => a in copy).map((a) => [a, copy[a]])),
        ];
      });
    }
    return { Responses: responses, UnprocessedKeys: {} };
  }

  /**
   * A transaction with its ClientRequestToken, as DynamoDB keeps one for 10 minutes: the same token with
   * the same request after a commit succeeds and writes nothing; with another request it is refused
   * (IdempotentParameterMismatchException). A request that was cancelled leaves no token behind.
   */
  private transactOnce(input: TransactWriteCommand['input']): Record<string, unknown> {
    const token = input.ClientRequestToken;
    const items = input.TransactItems ?? [];
    if (token === undefined) return this.transact(items);
    const now = Date.now();
    // BigInt (a DynamoDB number, as the document client marshals it) by value: plain JSON throws on it.
    const request = JSON.stringify(items, (_key, value: unknown) =>
      typeof value === 'bigint' ? { $bigint: value.toString() } : value,
    );
    const seen = this.requestTokens.get(token);
    if (seen !== undefined && now - seen.at < REQUEST_TOKEN_WINDOW_MS) {
      if (seen.request !== request)
        throw new IdempotentParameterMismatchException({
          message: 'Request parameters do not match the previous request with this ClientRequestToken',
          $metadata: {},
        });
      return {};
    }
    const answer = this.transact(items);
    this.requestTokens.set(token, { request, at: now });
    if (this.requestTokens.size > this.requestTokensSweptAbove) this.forgetOldRequestTokens(now);
    return answer;
  }

  private forgetOldRequestTokens(now: number): void {
    for (const [token, { at }] of this.requestTokens)
      if (now - at >= REQUEST_TOKEN_WINDOW_MS) this.requestTokens.delete(token);
    // Swept again only once as many more are kept: amortised, however many are still in their window.
    this.requestTokensSweptAbove = Math.max(REQUEST_TOKENS_KEPT, 2 * this.requestTokens.size);
  }

  private transact(transactItems: readonly Record<string, unknown>[]): Record<string, unknown> {
    if (transactItems.length > 100) throw new Error('MemoryDynamoDb: more than 100 transaction items');
    const writes: PreparedWrite[] = [];
    for (const entry of transactItems) {
      const [kind, input] = Object.entries(entry)[0] as [WriteKind, WriteInput];
      this.beforeWrite(input.TableName, `Transact${kind}`);
      const write = this.prepare(kind, input);
      // DynamoDB refuses a transaction that touches one item twice. (A scan: transactions hold a few items.)
      if (writes.some((w) => w.key === write.key && w.table === write.table))
        throw new Error('ValidationException: Transaction request cannot include multiple operations on one item');
      writes.push(write);
    }
    if (writes.some((w) => !w.conditionHolds)) {
      throw new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
        $metadata: {},
        CancellationReasons: writes.map((w) =>
          w.conditionHolds
            ? { Code: 'None' }
            : {
                Code: 'ConditionalCheckFailed',
                Message: 'The conditional request failed',
                Item: w.returnOldOnFailure && w.old ? marshall(w.old) : undefined,
              },
        ),
      });
    }
    this.commit(writes);
    return {};
  }

  /** A transaction cancelled for a conflict, as DynamoDB reports one: no item's condition failed. */
  static transactionConflict(items = 1): TransactionCanceledException {
    return new TransactionCanceledException({
      message: 'Transaction cancelled: TransactionConflict',
      $metadata: {},
      CancellationReasons: Array.from({ length: items }, (_, i) =>
        i === 0 ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' },
      ),
    });
  }

  private prepare(kind: WriteKind, input: WriteInput): PreparedWrite {
    const table = this.table(input.TableName);
    const keyAttributes = kind === 'Put' ? pickKey(table.schema, input.Item!) : input.Key!;
    const key = this.keyOf(input.TableName, keyAttributes);
    const old = table.items.get(key);
    const names = input.ExpressionAttributeNames ?? {};
    const values = input.ExpressionAttributeValues ?? {};
    const ignored = this.ignoreConditionOn?.(input.TableName, keyAttributes) === true;
    const conditionHolds =
      ignored ||
      input.ConditionExpression === undefined ||
      evaluate(parseCondition(input.ConditionExpression), old ?? {}, names, values, old === undefined);
    let next: Item | undefined;
    if (kind === 'Put') next = clone(input.Item!);
    else if (kind === 'Update') next = applyUpdate(input.UpdateExpression ?? '', old, keyAttributes, names, values);
    else if (kind === 'Delete') next = undefined;
    else next = old; // ConditionCheck
    return {
      table: input.TableName,
      key,
      // Stored items are never changed in place (an update builds a new object), so no copy is needed.
      old,
      next,
      conditionHolds,
      returnOldOnFailure: input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD',
      changes: kind !== 'ConditionCheck',
    };
  }

  private commit(writes: PreparedWrite[]): void {
    for (const write of writes) {
      if (!write.changes) continue;
      const table = this.table(write.table);
      if (write.next === undefined) table.items.delete(write.key);
      else table.items.set(write.key, write.next);
      // A sparse index holds the items that carry its key attributes.
      for (const [index, keys] of table.indexed) {
        const indexSchema = table.schema.indexes![index];
        const inIndex =
          write.next !== undefined &&
          write.next[indexSchema.hash] !== undefined &&
          (indexSchema.range === undefined || write.next[indexSchema.range] !== undefined);
        if (inIndex) keys.add(write.key);
        else keys.delete(write.key);
      }
    }
    for (const write of writes)
      if (write.changes) this.onChange({ table: write.table, oldImage: write.old, newImage: write.next }); // listeners must not change them
  }

  private query(input: QueryCommand['input']): Record<string, unknown> {
    const table = this.table(input.TableName!);
    const schema = input.IndexName === undefined ? table.schema : table.schema.indexes?.[input.IndexName];
    if (schema === undefined) throw new Error(`MemoryDynamoDb: no index ${input.IndexName}`);
    const condition = parseCondition(input.KeyConditionExpression!);
    const names = input.ExpressionAttributeNames ?? {};
    const values = input.ExpressionAttributeValues ?? {};
    const candidates =
      input.IndexName === undefined
        ? [...table.items.values()]
        : [...table.indexed.get(input.IndexName)!].map((key) => table.items.get(key)!);
    const matches = candidates.filter((i) => evaluate(condition, i, names, values, false));
    if (schema.range !== undefined) {
      const range = schema.range;
      matches.sort((a, b) => compare(a[range], b[range]));
      if (input.ScanIndexForward === false) matches.reverse();
    }
    const limited = input.Limit === undefined ? matches : matches.slice(0, input.Limit);
    return { Items: limited.map(clone), Count: limited.length };
  }

  private table(name: string) {
    const table = this.tables.get(name);
    if (table === undefined) throw new Error(`ResourceNotFoundException: table ${name}`);
    return table;
  }

  private keyOf(tableName: string, key: Record<string, unknown>): string {
    const { schema } = this.table(tableName);
    return schema.range === undefined
      ? String(key[schema.hash])
      : `${String(key[schema.hash])}\u0000${String(key[schema.range])}`;
  }
}

type WriteKind = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

interface WriteInput {
  TableName: string;
  Item?: Item;
  Key?: Item;
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
  ReturnValues?: string;
  ReturnValuesOnConditionCheckFailure?: string;
}

interface PreparedWrite {
  table: string;
  key: string;
  old: Item | undefined;
  next: Item | undefined;
  conditionHolds: boolean;
  returnOldOnFailure: boolean;
  changes: boolean;
}

function pickKey(schema: TableSchema, item: Item): Item {
  const key: Item = { [schema.hash]: item[schema.hash] };
  if (schema.range !== undefined) key[schema.range] = item[schema.range];
  return key;
}

function returnValues(input: WriteInput, old: Item | undefined, next: Item | undefined): Item | undefined {
  const mode = input.ReturnValues;
  if (mode === 'ALL_OLD') return old;
  if (mode === 'ALL_NEW') return next;
  if (mode === 'UPDATED_OLD' || mode === 'UPDATED_NEW') {
    // Every attribute the update expression names counts as updated, even when its value did not change.
    const source = mode === 'UPDATED_OLD' ? old : next;
    const names = input.ExpressionAttributeNames ?? {};
    const touched = parseUpdate(input.UpdateExpression ?? '').map((a) => attributeName(a.path, names));
    const picked = touched.filter((k) => source?.[k] !== undefined);
    return picked.length === 0 ? undefined : Object.fromEntries(picked.map((k) => [k, source![k]]));
  }
  return undefined;
}
