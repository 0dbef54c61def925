import { DeleteMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { ENTITY_OUTBOX } from '@exactly-once/runtime/aws/outbox-table';
import { release, type DeadLetter } from './messages';

/**
 * The relay's on-failure queue: Lambda writes one record per discarded stream
 * batch, pointing into the outbox table's stream (shard, sequence range), not
 * the events themselves. The outbox items those records inserted are what
 * matters: each is either dispatched already (a later retry or the sweeper got
 * it) or still pending. Redrive does not resend: the sweeper publishes pending
 * items, the same path it takes for anything the stream never relayed.
 */
export interface StreamPointer {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  batchSize?: number;
  streamArn: string;
  condition?: string;
}

export interface PointedOutboxItem {
  /** The item's key, as the stream record carries it (the layout's prefixes are the stack's, not the tool's). */
  key: { pk: string; sk: string };
  /** The envelope's entityId: the outbox item lives in its partition. */
  entityId: string;
  eventId: string;
  type?: string;
  state: 'pending' | 'dispatched' | 'gone';
  createdAt?: string;
}

export interface PointerExplanation {
  messageId: string;
  pointer?: StreamPointer;
  items: PointedOutboxItem[];
  /** Why the items could not be listed (not a failure record, or the records left the stream's 24 h window). */
  unreadable?: string;
}

export interface StreamContext {
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  /** The table holding the outbox (its stream is what the pointers point into). */
  outboxTableName: string;
}

export function parsePointer(body: string): StreamPointer | undefined {
  try {
    const record = JSON.parse(body) as {
      requestContext?: { condition?: string };
      DDBStreamBatchInfo?: Partial<StreamPointer>;
    };
    const info = record.DDBStreamBatchInfo;
    if (info?.shardId === undefined || info.startSequenceNumber === undefined || info.endSequenceNumber === undefined)
      return undefined;
    if (info.streamArn === undefined) return undefined;
    return {
      shardId: info.shardId,
      startSequenceNumber: info.startSequenceNumber,
      endSequenceNumber: info.endSequenceNumber,
      batchSize: info.batchSize,
      streamArn: info.streamArn,
      condition: record.requestContext?.condition,
    };
  } catch {
    return undefined;
  }
}

// An open shard answers empty pages at its end; a few in a row mean there is nothing further yet.
const EMPTY_PAGES_AT_END = 3;

/** The stream records from start to end sequence number, inclusive. */
async function readRange(streams: DynamoDBStreamsClient, pointer: StreamPointer): Promise<_Record[]> {
  const { ShardIterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: pointer.streamArn,
      ShardId: pointer.shardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: pointer.startSequenceNumber,
    }),
  );
  const end = BigInt(pointer.endSequenceNumber);
  const records: _Record[] = [];
  let iterator = ShardIterator;
  let empty = 0;
  while (iterator !== undefined && empty < EMPTY_PAGES_AT_END) {
    const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    const found = page.Records ?? [];
    empty = found.length === 0 ? empty + 1 : 0;
    for (const record of found) {
      if (BigInt(record.dynamodb!.SequenceNumber!) > end) return records;
      records.push(record);
    }
    iterator = page.NextShardIterator;
  }
  return records;
}

async function outboxItemsOf(context: StreamContext, records: _Record[]): Promise<PointedOutboxItem[]> {
  const inserted = records.filter((r) => r.eventName === 'INSERT' && r.dynamodb?.NewImage?.entity?.S === ENTITY_OUTBOX);
  const items: PointedOutboxItem[] = [];
  for (const record of inserted) {
    const image = record.dynamodb!.NewImage!;
    const event = image.event?.M;
    const { Item } = await context.dynamodb.send(
      new GetItemCommand({
        TableName: context.outboxTableName,
        Key: { pk: image.pk, sk: image.sk },
        ConsistentRead: true,
      }),
    );
    items.push({
      key: { pk: image.pk.S!, sk: image.sk.S! },
      entityId: event?.entityId?.S ?? image.pk.S!.replace(/^[^#]*#/, ''),
      eventId: event?.eventId?.S ?? image.sk.S!.replace(/^[^#]*#/, ''),
      type: event?.type?.S,
      // Dispatch removes pendingShard (the sparse index the sweeper reads).
      state: Item === undefined ? 'gone' : Item.pendingShard !== undefined ? 'pending' : 'dispatched',
      createdAt: Item?.createdAt?.S,
    });
  }
  return items;
}

export async function explainPointer(context: StreamContext, message: DeadLetter): Promise<PointerExplanation> {
  const pointer = parsePointer(message.body);
  if (pointer === undefined)
    return {
      messageId: message.messageId,
      items: [],
      unreadable: 'not a stream failure record (no DDBStreamBatchInfo)',
    };
  try {
    const records = await readRange(context.streams, pointer);
    return { messageId: message.messageId, pointer, items: await outboxItemsOf(context, records) };
  } catch (error) {
    const name = (error as Error).name;
    const why =
      name === 'TrimmedDataAccessException' || name === 'ResourceNotFoundException'
        ? 'the records have left the stream (24 h retention): the sweeper still publishes every pending outbox item once it is older than its sweep age'
        : (error as Error).message;
    return { messageId: message.messageId, pointer, items: [], unreadable: why };
  }
}

/**
 * Marks a pending outbox item due for the next sweep: its createdAt (the sort
 * key of the sweeper's index) moves a day back, the original is kept in
 * originalCreatedAt. Conditional on still pending: a dispatched item is left alone.
 */
export async function markForSweeper(context: StreamContext, item: PointedOutboxItem, now: Date): Promise<boolean> {
  const { key } = item;
  try {
    await context.dynamodb.send(
      new UpdateItemCommand({
        TableName: context.outboxTableName,
        Key: { pk: { S: key.pk }, sk: { S: key.sk } },
        UpdateExpression:
          'SET originalCreatedAt = if_not_exists(originalCreatedAt, createdAt), createdAt = :due, sweepRequestedAt = :now',
        ConditionExpression: 'attribute_exists(pendingShard)',
        ExpressionAttributeValues: {
          ':due': { S: new Date(now.getTime() - 24 * 3600_000).toISOString() },
          ':now': { S: now.toISOString() },
        },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false; // dispatched meanwhile
    throw error;
  }
}

export interface PointerRedrive {
  messageId: string;
  marked: string[];
  alreadyDispatched: string[];
  error?: string;
}

/**
 * For each failure record: marks its pending outbox items for the sweeper,
 * then deletes the record. A record whose items cannot be listed stays.
 */
export async function redrivePointers(
  context: StreamContext,
  queueUrl: string,
  messages: DeadLetter[],
  options: { dryRun?: boolean; now?: Date },
): Promise<PointerRedrive[]> {
  const results: PointerRedrive[] = [];
  const held: DeadLetter[] = [];
  try {
    for (const message of messages) {
      const explanation = await explainPointer(context, message);
      if (explanation.unreadable !== undefined) {
        held.push(message);
        results.push({
          messageId: message.messageId,
          marked: [],
          alreadyDispatched: [],
          error: explanation.unreadable,
        });
        continue;
      }
      const result: PointerRedrive = { messageId: message.messageId, marked: [], alreadyDispatched: [] };
      for (const item of explanation.items) {
        const pending =
          item.state === 'pending' &&
          (options.dryRun || (await markForSweeper(context, item, options.now ?? new Date())));
        (pending ? result.marked : result.alreadyDispatched).push(item.eventId);
      }
      if (options.dryRun) held.push(message);
      else
        await context.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
      results.push(result);
    }
  } finally {
    await release(context.sqs, queueUrl, held);
  }
  return results;
}
