import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LocalQueue } from './sources/sqs-poller';
import { createTable, type TableDefinition } from './template/dynamodb';
import type { LocalReferences } from './template/references';
import { creationOrder, type QueueDefinition } from './template/sqs';

export interface LocalTable {
  name: string;
  arn: string;
  streamArn?: string;
}

/**
 * Creates the template's queues in fauxqs (dead-letter queues first, each
 * source with its redrive policy) and registers their URL, ARN and name for
 * `Ref`/`Fn::GetAtt`.
 */
export async function createQueues(
  sqs: SQSClient,
  definitions: QueueDefinition[],
  references: LocalReferences,
): Promise<Map<string, LocalQueue>> {
  const queues = new Map<string, LocalQueue>();
  for (const definition of creationOrder(definitions)) {
    const attributes = { ...definition.attributes };
    if (definition.redrive !== undefined) {
      const dlq = queues.get(definition.redrive.deadLetterLogicalId)!;
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: definition.redrive.maxReceiveCount,
      });
    }
    const out = await sqs.send(new CreateQueueCommand({ QueueName: definition.name, Attributes: attributes }));
    const queue: LocalQueue = {
      url: out.QueueUrl!,
      arn: references.arn('sqs', definition.name),
      name: definition.name,
      fifo: definition.fifo,
    };
    queues.set(definition.logicalId, queue);
    references.register(definition.logicalId, queue.url, {
      Arn: queue.arn,
      QueueName: queue.name,
      QueueUrl: queue.url,
    });
  }
  return queues;
}

/** Creates the template's tables in DynamoDB Local and registers name, ARN and the real stream ARN. */
export async function createTables(
  dynamodb: DynamoDBClient,
  definitions: TableDefinition[],
  references: LocalReferences,
): Promise<Map<string, LocalTable>> {
  const tables = new Map<string, LocalTable>();
  await Promise.all(
    definitions.map(async (definition) => {
      const name = definition.tableName ?? definition.logicalId;
      await createTable(dynamodb, definition, name);
      const described = await dynamodb.send(new DescribeTableCommand({ TableName: name }));
      const table: LocalTable = {
        name,
        arn: references.arn('dynamodb', `table/${name}`),
        streamArn: described.Table?.LatestStreamArn,
      };
      tables.set(definition.logicalId, table);
      references.register(definition.logicalId, name, {
        Arn: table.arn,
        ...(table.streamArn ? { StreamArn: table.streamArn } : {}),
      });
    }),
  );
  return tables;
}
