import { ChangeMessageVisibilityCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Target } from './target';

/** What verify.ts reads from a stack: whole tables, and queues peeked without consuming them. */

/** Every item of a table, page by page, strongly consistent (the verification and the tests read tables this way). */
export async function scan(documents: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** Reads every message of a queue without consuming it (each is made visible again right after). */
export async function peekAll(target: Target, queueUrl: string): Promise<Message[]> {
  const seen = new Map<string, Message>();
  for (let round = 0; round < 100; round++) {
    const { Messages = [] } = await target.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 20,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const fresh = Messages.filter((m) => !seen.has(m.MessageId!));
    if (fresh.length === 0) break;
    for (const m of fresh) seen.set(m.MessageId!, m);
  }
  await Promise.all(
    [...seen.values()].map((m) =>
      target.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      ),
    ),
  );
  return [...seen.values()];
}
