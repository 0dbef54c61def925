import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

export class StreamsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'StreamsError';
  }
}

/** A stream record exactly as DynamoDB Streams returns it (and as Lambda passes it on). */
export interface StreamRecord {
  eventID: string;
  eventName?: string;
  eventVersion?: string;
  eventSource?: string;
  awsRegion?: string;
  dynamodb: {
    ApproximateCreationDateTime?: number;
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber: string;
    SizeBytes?: number;
    StreamViewType?: string;
  };
  userIdentity?: { type: string; principalId: string };
}

export interface Shard {
  ShardId: string;
  ParentShardId?: string;
  SequenceNumberRange?: { StartingSequenceNumber?: string; EndingSequenceNumber?: string };
}

/**
 * The four DynamoDB Streams calls the stream poller needs, over the wire
 * protocol (JSON 1.0). Talking the protocol directly keeps records in their
 * wire shape, which is the shape Lambda hands to functions, and needs no
 * extra SDK package.
 */
export class DynamoDbStreamsClient {
  private readonly signer: SignatureV4;

  constructor(
    private readonly endpoint: string,
    region: string,
  ) {
    this.signer = new SignatureV4({
      service: 'dynamodb',
      region,
      sha256: Sha256,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }

  async describeStream(streamArn: string): Promise<Shard[]> {
    const shards: Shard[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const out = (await this.call('DescribeStream', {
        StreamArn: streamArn,
        ExclusiveStartShardId: exclusiveStartShardId,
      })) as {
        StreamDescription: { Shards?: Shard[]; LastEvaluatedShardId?: string };
      };
      shards.push(...(out.StreamDescription.Shards ?? []));
      exclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
    return shards;
  }

  async shardIterator(
    streamArn: string,
    shardId: string,
    type: 'TRIM_HORIZON' | 'LATEST' | 'AFTER_SEQUENCE_NUMBER',
    sequenceNumber?: string,
  ): Promise<string> {
    const out = (await this.call('GetShardIterator', {
      StreamArn: streamArn,
      ShardId: shardId,
      ShardIteratorType: type,
      SequenceNumber: sequenceNumber,
    })) as { ShardIterator: string };
    return out.ShardIterator;
  }

  async getRecords(shardIterator: string, limit: number): Promise<{ records: StreamRecord[]; next?: string }> {
    const out = (await this.call('GetRecords', { ShardIterator: shardIterator, Limit: limit })) as {
      Records?: StreamRecord[];
      NextShardIterator?: string;
    };
    return { records: out.Records ?? [], next: out.NextShardIterator };
  }

  private async call(operation: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(this.endpoint);
    const payload = JSON.stringify(body);
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: '/',
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
      },
      body: payload,
    });
    const response = await fetch(this.endpoint, { method: 'POST', headers: signed.headers, body: payload, signal });
    const text = await response.text();
    if (!response.ok) {
      const error = JSON.parse(text || '{}') as { __type?: string; message?: string; Message?: string };
      const type = (error.__type ?? String(response.status)).split('#').pop()!;
      throw new StreamsError(
        type,
        `DynamoDB Streams ${operation} failed: ${type} ${error.message ?? error.Message ?? text}`,
      );
    }
    return JSON.parse(text);
  }
}
