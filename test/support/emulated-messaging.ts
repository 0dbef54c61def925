import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBStreamsClient,
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createQueues } from '@exactly-once/tools/local-runtime/provision';
import { matchesAnyFilter } from '@exactly-once/tools/local-runtime/sources/event-filter';
import { eventSourceDefinitions } from '@exactly-once/tools/local-runtime/template/event-sources';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { LocalReferences } from '@exactly-once/tools/local-runtime/template/references';
import { queueDefinitions } from '@exactly-once/tools/local-runtime/template/sqs';
import { testDynamoDbClient } from './emulated-dynamodb';

/**
 * Builds the events Lambda would build, from the real emulators: stream records
 * read from DynamoDB Local's stream, messages received from fauxqs. Handlers
 * under test are invoked with exactly these.
 */
export function testSqsClient(): SQSClient {
  return new SQSClient({ endpoint: process.env.TEST_SQS_ENDPOINT, region: 'us-east-1' });
}

/** Receives up to `max` messages and shapes them as Lambda's SQS event. */
export async function receiveSqsEvent(queueUrl: string, max = 10, waitSeconds = 1): Promise<SQSEvent> {
  const sqs = testSqsClient();
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  sqs.destroy();
  return { Records: Messages.map((m) => toSqsRecord(m, queueUrl)) };
}

/** Receives until `count` messages arrived (or the deadline), as one event. */
export async function receiveAll(queueUrl: string, count: number, timeoutMs = 5_000): Promise<SQSEvent> {
  const records: SQSRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  while (records.length < count && Date.now() < deadline) {
    const event = await receiveSqsEvent(queueUrl, Math.min(10, count - records.length), 1);
    records.push(...event.Records);
  }
  return { Records: records };
}

/**
 * Receives until `count` messages whose body includes `marker` arrived (or the
 * deadline), as one event. Other messages on the queue (another test's) are
 * made visible again at once and never handed to the caller: a test selects
 * its own messages by body, not "whatever is visible".
 */
export async function receiveMatching(
  queueUrl: string,
  count: number,
  marker: string,
  timeoutMs = 5_000,
): Promise<SQSEvent> {
  const sqs = testSqsClient();
  const records: SQSRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (records.length < count && Date.now() < deadline) {
      const { Records } = await receiveSqsEvent(queueUrl, 10, 1);
      for (const record of Records) {
        if (record.body.includes(marker) && records.length < count) records.push(record);
        else
          await sqs.send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: queueUrl,
              ReceiptHandle: record.receiptHandle,
              VisibilityTimeout: 0,
            }),
          );
      }
    }
    return { Records: records };
  } finally {
    sqs.destroy();
  }
}

function toSqsRecord(message: Message, queueUrl: string): SQSRecord {
  const attrs = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attrs.MessageGroupId ? { MessageGroupId: attrs.MessageGroupId } : {}),
      ...(attrs.MessageDeduplicationId ? { MessageDeduplicationId: attrs.MessageDeduplicationId } : {}),
      ...(attrs.SequenceNumber ? { SequenceNumber: attrs.SequenceNumber } : {}),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([k, v]) => [
        k,
        { stringValue: v.StringValue, dataType: v.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueUrl.split('/').pop()}`,
    awsRegion: 'us-east-1',
  };
}

/**
 * Reads a table's stream from the start, remembering its position, and returns
 * the new records as Lambda's DynamoDB stream event, after the relay's event source
 * mapping filter (the template's: outbox INSERTs only) when `outboxOnly`.
 */
export class StreamReader {
  private iterator: string | undefined;
  private readonly streams = new DynamoDBStreamsClient({
    endpoint: process.env.TEST_DYNAMODB_ENDPOINT,
    region: 'us-east-1',
  });

  /** `relayFilters`: the relay mapping's FilterCriteria filters, as `relayStreamFilters` reads them from a template. */
  constructor(
    private readonly tableName: string,
    private readonly relayFilters: unknown[],
  ) {}

  async next(options: { outboxOnly?: boolean } = { outboxOnly: true }): Promise<DynamoDBStreamEvent> {
    if (this.iterator === undefined) this.iterator = await this.firstIterator();
    const raw: StreamRecord[] = [];
    for (let i = 0; i < 5 && this.iterator !== undefined; i++) {
      const page: { Records?: StreamRecord[]; NextShardIterator?: string } = await this.streams.send(
        new GetRecordsCommand({ ShardIterator: this.iterator }),
      );
      raw.push(...(page.Records ?? []));
      this.iterator = page.NextShardIterator;
      if ((page.Records ?? []).length === 0) break;
    }
    const records = raw.map((r) => r as unknown as DynamoDBRecord);
    const kept = options.outboxOnly === false ? records : records.filter((r) => matchesAnyFilter(this.relayFilters, r));
    return {
      Records: kept.map((r) => ({
        ...r,
        eventSourceARN: `arn:aws:dynamodb:us-east-1:000000000000:table/${this.tableName}/stream/x`,
      })),
    };
  }

  close(): void {
    this.streams.destroy();
  }

  private async firstIterator(): Promise<string> {
    const dynamo = testDynamoDbClient();
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: this.tableName }));
    dynamo.destroy();
    const { StreamDescription } = await this.streams.send(
      new DescribeStreamCommand({ StreamArn: Table!.LatestStreamArn! }),
    );
    const shard = StreamDescription!.Shards![0];
    const { ShardIterator } = await this.streams.send(
      new GetShardIteratorCommand({
        StreamArn: Table!.LatestStreamArn!,
        ShardId: shard.ShardId!,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    return ShardIterator!;
  }
}

/**
 * The queues a synthesized template declares, exactly as it declares them (FIFO attributes,
 * visibility, retention, redrive policy and maxReceiveCount), created on fauxqs by the local
 * runtime's own provisioning under fresh names so test files never share a queue; their URLs by
 * logical id. `visibilityTimeoutSeconds` replaces the visibility of every queue that redrives to a DLQ.
 */
export async function createTemplateQueues(
  template: Record<string, unknown>,
  options: { visibilityTimeoutSeconds?: number } = {},
): Promise<Map<string, string>> {
  const cfn = template as unknown as CfnTemplate;
  const suffix = randomUUID().slice(0, 8);
  const definitions = queueDefinitions(cfn).map((d) => ({
    ...d,
    name: d.name.replace(/(\.fifo)?$/, `-${suffix}$1`),
    attributes:
      options.visibilityTimeoutSeconds !== undefined && d.redrive !== undefined
        ? { ...d.attributes, VisibilityTimeout: String(options.visibilityTimeoutSeconds) }
        : d.attributes,
  }));
  const sqs = testSqsClient();
  try {
    const queues = await createQueues(sqs, definitions, new LocalReferences(cfn, 'us-east-1', 'TestStack'));
    return new Map([...queues].map(([logicalId, queue]) => [logicalId, queue.url]));
  } finally {
    sqs.destroy();
  }
}

/**
 * The relay's stream filters: the FilterCriteria of the template's one DynamoDB stream event source
 * mapping, to be evaluated by the local runtime's filter engine (not a hand-written copy that could
 * drift from the deployed one).
 */
export function relayStreamFilters(template: Record<string, unknown>): unknown[] {
  const { sources } = eventSourceDefinitions(template as unknown as CfnTemplate);
  const streams = sources.filter((s) => s.kind === 'dynamodb');
  if (streams.length !== 1) throw new Error(`Expected one stream event source, found ${streams.length}`);
  if (streams[0].filters.length === 0) throw new Error('The relay stream mapping has no filter');
  return streams[0].filters;
}
