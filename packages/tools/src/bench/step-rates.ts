import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { benchDynamoDbClient } from './client';
import { perSecond } from './figures';
import { runPool } from './pool';

/**
 * What one request of each kind the two consumers send costs on this
 * emulator, at the comparison's concurrency: a conditional PutItem (the
 * Powertools lock, the provider log), an UpdateItem (the plain ADD, the
 * completion records) and a two-item TransactWriteItems (this design's inbox
 * claim + effect). The consumer comparison's ratio follows from these: this
 * consumer sends one transaction and two single writes per first delivery, the
 * Powertools one four single writes.
 */
export interface StepRates {
  requests: number;
  concurrency: number;
  conditionalPutPerSecond: number;
  updatePerSecond: number;
  twoItemTransactionPerSecond: number;
}

export async function measureStepRates(options: {
  endpoint: string;
  region: string;
  table: string;
  requests: number;
  concurrency: number;
}): Promise<StepRates> {
  const client = benchDynamoDbClient(options.endpoint, options.region);
  const documents = DynamoDBDocumentClient.from(client);
  const run = `st${Date.now().toString(36)}`;
  const { table, requests, concurrency } = options;
  // A new item per request: the step's own cost, with no two requests racing for one item.
  const key = (prefix: string, i: number) => ({ pk: `STEP#${run}#${prefix}-${i}`, sk: 'STEP' });
  // A step as runPool takes it: only its time counts, not what it returns.
  const step =
    (request: (i: number) => Promise<unknown>) =>
    async (i: number): Promise<void> => {
      await request(i);
    };
  const put = (prefix: string) =>
    step((i) =>
      documents.send(
        new PutCommand({ TableName: table, Item: key(prefix, i), ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
  const addOne = (prefix: string, i: number) => ({
    TableName: table,
    Key: key(prefix, i),
    UpdateExpression: 'ADD points :one',
    ExpressionAttributeValues: { ':one': 1 },
  });
  const update = (prefix: string) => step((i) => documents.send(new UpdateCommand(addOne(prefix, i))));
  const transaction = (prefix: string) =>
    step((i) =>
      documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: table,
                Item: key(`${prefix}-claim`, i),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Update: addOne(`${prefix}-effect`, i) },
          ],
        }),
      ),
    );
  try {
    // A warm-up of each kind first, not measured.
    for (const step of [put('warm-put'), update('warm-update'), transaction('warm-transaction')])
      await runPool(Math.ceil(requests / 4), concurrency, step);
    const rate = async (step: (i: number) => Promise<void>) =>
      perSecond(requests, await runPool(requests, concurrency, step));
    return {
      requests,
      concurrency,
      conditionalPutPerSecond: await rate(put('put')),
      updatePerSecond: await rate(update('update')),
      twoItemTransactionPerSecond: await rate(transaction('transaction')),
    };
  } finally {
    client.destroy();
  }
}
