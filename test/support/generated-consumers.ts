import {
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type GetCommandInput,
  type PutCommandInput,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import type { QueueConsumerHandler } from '@exactly-once/runtime/consumer/queue-consumer';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { lambdaContext } from './api-events';
import { loadWithMockedSdk, type MockedSdkHandler } from './mocked-sdk';
import { TEST_DEDUPE } from './dedupe';

/**
 * A consumer made by `npm run new:consumer`, with the SDK mocked, for its unit
 * test: its environment, the envelope records its queue delivers, and an
 * Effects table behind the document client that judges conditions as DynamoDB
 * does (a cancelled transaction, the old item returned), so a test reads the
 * effect that resulted. A consumer on the inbox ledger gets a small table that
 * knows the inbox claim's conditions; one on the sequenced ledger (its spec's
 * `ledger: 'sequenced'`) the in-memory DynamoDB, whose expressions are held to
 * DynamoDB Local by the contract suites.
 */
export const EFFECTS_TABLE = 'effects-table';
export const PROVIDER_TABLE = 'provider-log';
const ACCOUNT_QUEUES = 'https://sqs.us-east-1.amazonaws.com/123456789012';

/** What a test reads of (and puts in) the Effects table, whichever stands behind the consumer. */
export interface EffectsTable {
  /** The items by partition key. */
  readonly items: ReadonlyMap<string, Record<string, unknown>>;
  /** The items whose key starts with `prefix` (e.g. `EFFECT#audit#`). */
  itemsStartingWith(prefix: string): Record<string, unknown>[];
  /** Puts `item` as it is, as an earlier release or another writer left it. */
  put(item: Record<string, unknown>): void;
}

export interface GeneratedConsumer extends MockedSdkHandler<QueueConsumerHandler> {
  name: string;
  fifo: boolean;
  ledger: 'inbox' | 'sequenced';
  queueUrl: string;
  deadLetterQueueUrl: string;
  table: EffectsTable;
}

/** Loads the consumer's module (an `import()` written in the test) in its own registry, as a Lambda would. */
export async function loadGeneratedConsumer(
  spec: { name: string; fifo: boolean; ledger?: 'inbox' | 'sequenced' },
  importHandler: () => Promise<{ handler: unknown }>,
): Promise<GeneratedConsumer> {
  const ledger = spec.ledger ?? 'inbox';
  const suffix = spec.fifo ? '.fifo' : '';
  const queueUrl = `${ACCOUNT_QUEUES}/${spec.name}${suffix}`;
  const deadLetterQueueUrl = `${ACCOUNT_QUEUES}/${spec.name}-dlq${suffix}`;
  const loaded = await loadWithMockedSdk<QueueConsumerHandler>(
    {
      EFFECTS_TABLE_NAME: EFFECTS_TABLE,
      PROVIDER_LOG_TABLE_NAME: PROVIDER_TABLE,
      INBOX_TTL_SECONDS: String(TEST_DEDUPE.claimTtlSeconds),
      // As the stack sets them: a sequenced consumer gets its ledger's name and no dedupe horizon.
      ...(ledger === 'sequenced'
        ? { CONSUMER_LEDGER: 'sequenced' }
        : { DEDUPE_HORIZON_SECONDS: String(TEST_DEDUPE.horizonSeconds) }),
      QUEUE_URL: queueUrl,
      DEAD_LETTER_QUEUE_URL: deadLetterQueueUrl,
    },
    importHandler,
  );
  const consumer = { ...loaded, ...spec, ledger, queueUrl, deadLetterQueueUrl } as GeneratedConsumer;
  consumer.table = effectsTableFor(consumer);
  return consumer;
}

const effectsTableFor = (h: GeneratedConsumer): EffectsTable =>
  h.ledger === 'sequenced' ? new MemoryEffectsTable(h) : new EffectsTableFake(h);

/** Clears every mock and the table; the SDK calls the consumer makes then resolve as AWS would answer them. */
export function resetGeneratedConsumer(h: GeneratedConsumer): void {
  h.doc.reset();
  h.ddb.reset();
  h.sqs.reset();
  h.table = effectsTableFor(h);
  h.doc.on(h.docSdk.UpdateCommand, { TableName: PROVIDER_TABLE }).resolves({});
  h.sqs.on(h.sqsSdk.SendMessageCommand).resolves({ MessageId: 'dlq-copy' });
  h.sqs.on(h.sqsSdk.ChangeMessageVisibilityCommand).resolves({});
}

let sequence = 0;

/** An envelope as the relay publishes it. */
export function envelope(type: string, entityId: string, eventId = `${entityId}.${type}`): EventEnvelope {
  return {
    eventId,
    type,
    entityId,
    version: 1,
    occurredAt: new Date(Date.now() - 3_600_000).toISOString(),
    payload: {},
  };
}

/** An SQS record carrying `event` (or a raw body), with the FIFO attributes when the queue is FIFO. */
export function recordOf(h: GeneratedConsumer, event: EventEnvelope | string): SQSRecord {
  sequence += 1;
  const messageId = `msg-${sequence}`;
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const group = typeof event === 'string' ? 'group-unknown' : event.entityId;
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1893553445000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1893553445000',
      ...(h.fifo
        ? { MessageGroupId: group, MessageDeduplicationId: messageId, SequenceNumber: String(10_000 + sequence) }
        : {}),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${h.name}`,
    awsRegion: 'us-east-1',
  };
}

export const deliver = (h: GeneratedConsumer, ...records: SQSRecord[]) =>
  h.handler({ Records: records }, lambdaContext());

/** The provider calls that reached the provider (the recording provider's log writes), by key. */
export const providerKeys = (h: GeneratedConsumer) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.TableName === PROVIDER_TABLE)
    .map((input) => input.Key?.idempotencyKey);

/** The calls that reached the recording provider: under which key, which provider, with what request. */
export const providerCalls = (h: GeneratedConsumer) =>
  h.doc
    .commandCalls(h.docSdk.UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((input) => input.TableName === PROVIDER_TABLE)
    .map((input) => ({
      idempotencyKey: input.Key?.idempotencyKey,
      provider: input.ExpressionAttributeValues?.[':provider'],
      payload: input.ExpressionAttributeValues?.[':payload'],
    }));

/** The messages copied to the consumer's DLQ. */
export const deadLettered = (h: GeneratedConsumer) =>
  h.sqs.commandCalls(h.sqsSdk.SendMessageCommand).map((c) => c.args[0].input);

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * The Effects table behind TransactWriteItems and the inbox's UpdateItem:
 * all-or-nothing, `attribute_not_exists(pk)` enforced (with the old image when
 * ALL_OLD is asked), `attribute_exists(pk)` on the inbox's own update, and
 * SET/ADD of plain values applied.
 */
export class EffectsTableFake implements EffectsTable {
  readonly items = new Map<string, Record<string, unknown>>();

  constructor(private readonly h: GeneratedConsumer) {
    h.doc.on(h.docSdk.TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => this.transact(input));
    h.doc
      .on(h.docSdk.UpdateCommand, { TableName: EFFECTS_TABLE })
      .callsFake((input: UpdateCommandInput) => this.update(input));
  }

  itemsStartingWith(prefix: string): Record<string, unknown>[] {
    return [...this.items].filter(([pk]) => pk.startsWith(prefix)).map(([, item]) => item);
  }

  put(item: Record<string, unknown>): void {
    this.items.set(String(item.pk), { ...item });
  }

  private transact(input: TransactWriteCommandInput): Record<string, never> {
    const items = input.TransactItems ?? [];
    const reasons = items.map((item) => this.check(item));
    if (reasons.some((r) => r.Code !== 'None')) {
      throw new this.h.ddbSdk.TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: reasons,
      });
    }
    for (const item of items) this.apply(item);
    return {};
  }

  private update(input: UpdateCommandInput): Record<string, never> {
    // Unconditional: the mark on a stale event's entry (created if absent).
    if (input.ConditionExpression === undefined) {
      this.apply({ Update: input as NonNullable<TransactItem['Update']> });
      return {};
    }
    if (input.ConditionExpression !== 'attribute_exists(pk)' || !this.items.has(String(input.Key?.pk)))
      throw new this.h.ddbSdk.ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
      });
    this.apply({ Update: input as NonNullable<TransactItem['Update']> });
    return {};
  }

  private check(item: TransactItem) {
    const condition = item.Put?.ConditionExpression ?? item.Update?.ConditionExpression;
    if (condition === undefined) return { Code: 'None' };
    const old = this.items.get(String(item.Put?.Item?.pk ?? item.Update?.Key?.pk));
    if (condition === 'attribute_not_exists(lastVersion) OR lastVersion < :version') {
      // The generic effect's version guard, as DynamoDB judges it.
      const version = Number(item.Update?.ExpressionAttributeValues?.[':version']);
      if (old?.lastVersion === undefined || Number(old.lastVersion) < version) return { Code: 'None' };
      const asked = item.Update?.ReturnValuesOnConditionCheckFailure === 'ALL_OLD';
      return { Code: 'ConditionalCheckFailed', ...(asked ? { Item: marshall(old) } : {}) };
    }
    if (condition !== 'attribute_not_exists(pk)') throw new Error(`fake table: unsupported condition ${condition}`);
    if (old === undefined) return { Code: 'None' };
    const allOld = (item.Put ?? item.Update)?.ReturnValuesOnConditionCheckFailure === 'ALL_OLD';
    return { Code: 'ConditionalCheckFailed', ...(allOld ? { Item: marshall(old) } : {}) };
  }

  private apply(item: TransactItem): void {
    if (item.Put) {
      this.items.set(String(item.Put.Item?.pk), { ...item.Put.Item });
      return;
    }
    const update = item.Update;
    if (update === undefined) throw new Error('fake table: only Put and Update are used by the ledgers');
    const pk = String(update.Key?.pk);
    const next: Record<string, unknown> = { ...update.Key, ...this.items.get(pk) };
    const values = update.ExpressionAttributeValues ?? {};
    const nameOf = (token: string) => update.ExpressionAttributeNames?.[token] ?? token;
    for (const [, verb, body] of (update.UpdateExpression ?? '').matchAll(/(SET|ADD)\s+(.*?)(?=\s+(?:SET|ADD)\s|$)/g)) {
      // Commas outside parentheses: if_not_exists(a, :b) is one clause.
      for (const clause of body.split(/,(?![^(]*\))/).map((c) => c.trim())) {
        const [name, value] = verb === 'SET' ? clause.split(/\s*=\s*/) : clause.split(/\s+/);
        const ifNotExists = /^if_not_exists\((\S+), (:\w+)\)$/.exec(value);
        if (ifNotExists !== null) {
          next[nameOf(name)] ??= values[ifNotExists[2]];
          continue;
        }
        if (!value.startsWith(':')) throw new Error(`fake table: unsupported ${verb} ${clause}`);
        next[nameOf(name)] = verb === 'SET' ? values[value] : Number(next[nameOf(name)] ?? 0) + Number(values[value]);
      }
    }
    this.items.set(pk, next);
  }
}

/**
 * The Effects table as the in-memory DynamoDB (packages/tools/src/simulation/memory-dynamodb.ts): every
 * condition and update expression the sequenced ledger writes, judged as DynamoDB Local judges them.
 * Its refusals are rethrown as the consumer's own SDK classes (it runs in a module registry of its own,
 * so it recognises only those).
 */
export class MemoryEffectsTable implements EffectsTable {
  private readonly memory = memoryDynamoDb();

  constructor(private readonly h: GeneratedConsumer) {
    this.memory.createTable(EFFECTS_TABLE, { hash: 'pk', range: 'sk' });
    h.doc
      .on(h.docSdk.TransactWriteCommand)
      .callsFake((input: TransactWriteCommandInput) => this.send(new TransactWriteCommand(input)));
    h.doc
      .on(h.docSdk.UpdateCommand, { TableName: EFFECTS_TABLE })
      .callsFake((input: UpdateCommandInput) => this.send(new UpdateCommand(input)));
    h.doc
      .on(h.docSdk.PutCommand, { TableName: EFFECTS_TABLE })
      .callsFake((input: PutCommandInput) => this.send(new PutCommand(input)));
    h.doc
      .on(h.docSdk.GetCommand, { TableName: EFFECTS_TABLE })
      .callsFake((input: GetCommandInput) => this.send(new GetCommand(input)));
  }

  get items(): ReadonlyMap<string, Record<string, unknown>> {
    return new Map(this.memory.items(EFFECTS_TABLE).map((item) => [String(item.pk), item]));
  }

  itemsStartingWith(prefix: string): Record<string, unknown>[] {
    return [...this.items].filter(([pk]) => pk.startsWith(prefix)).map(([, item]) => item);
  }

  put(item: Record<string, unknown>): void {
    this.memory.execute(new PutCommand({ TableName: EFFECTS_TABLE, Item: item }));
  }

  private async send(command: unknown): Promise<Record<string, unknown>> {
    try {
      return await this.memory.send(command);
    } catch (error) {
      const refused = error as { name?: string; message: string; Item?: unknown; CancellationReasons?: unknown };
      if (refused.name === 'ConditionalCheckFailedException')
        throw new this.h.ddbSdk.ConditionalCheckFailedException({
          message: refused.message,
          $metadata: {},
          ...(refused.Item === undefined ? {} : { Item: refused.Item as never }),
        });
      if (refused.name === 'TransactionCanceledException')
        throw new this.h.ddbSdk.TransactionCanceledException({
          message: refused.message,
          $metadata: { httpStatusCode: 400 },
          CancellationReasons: refused.CancellationReasons as never,
        });
      throw error;
    }
  }
}

/** What this table uses of the in-memory DynamoDB. */
interface MemoryDb {
  createTable(name: string, schema: { hash: string; range?: string }): void;
  items(table: string): Record<string, unknown>[];
  send(command: unknown): Promise<Record<string, unknown>>;
  execute(command: unknown): Record<string, unknown>;
}

/**
 * The tools' in-memory DynamoDB, required when a sequenced consumer's test asks for it: the mechanism's
 * own tests run in a copy with the mechanism alone (mechanism-alone.test.ts), where the tools are absent
 * and only inbox consumers (the small table above) are loaded.
 */
function memoryDynamoDb(): MemoryDb {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only where a sequenced consumer is tested
  const { MemoryDynamoDb } = require('@exactly-once/tools/simulation/memory-dynamodb') as {
    MemoryDynamoDb: new () => MemoryDb;
  };
  return new MemoryDynamoDb();
}
