import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TryCounter } from '../consumer/ports';
import { expiresAfter, INBOX_TTL_ATTRIBUTE, triesKey } from './inbox-table';

/**
 * The FIFO consumer's own count of failed tries per message, in the Effects
 * table under `pk = TRIES#<consumer>#<messageId>`, `sk = TRIES`, expiring with
 * the table's TTL attribute. Why not SQS's receive count: on a FIFO queue a
 * record skipped behind a failure in its group is received, and counted, without
 * being tried; a budget spent on receives would dead-letter records that were
 * never tried. Keyed by messageId: a redriven or resent message is a new message
 * and gets a fresh budget.
 *
 * Cost: one UpdateItem per failed try, none on success.
 */
export class DynamoDbTryCounter implements TryCounter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly options: { tableName: string; ttlSeconds: number; now?: () => Date },
  ) {}

  /** Counts one more failed try and returns the count so far (1 on the first failure). */
  async recordFailedTry(consumer: string, messageId: string): Promise<number> {
    const now = (this.options.now ?? (() => new Date()))();
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.options.tableName,
        Key: triesKey(consumer, messageId),
        UpdateExpression:
          'SET firstFailedAt = if_not_exists(firstFailedAt, :now), lastFailedAt = :now, #ttl = :ttl ADD tries :one',
        ExpressionAttributeNames: { '#ttl': INBOX_TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':now': now.toISOString(),
          ':ttl': expiresAfter(now, this.options.ttlSeconds),
          ':one': 1,
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const tries = Number(Attributes?.tries);
    if (!Number.isInteger(tries) || tries < 1) throw new Error(`Try counter returned ${String(Attributes?.tries)}`);
    return tries;
  }
}
