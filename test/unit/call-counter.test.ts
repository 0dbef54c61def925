import * as http from 'node:http';
import { startCountingProxy, type CountingProxy } from '@exactly-once/tools/local-runtime/call-counter';

/**
 * The runtime's counting proxy bills DynamoDB requests as AWS would, per
 * table: one unit per single-item request, two per transactional item, one per
 * batch item; the request is forwarded unchanged.
 */
let upstream: http.Server;
let proxy: CountingProxy;
const forwarded: string[] = [];

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      forwarded.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as { port: number };
  proxy = await startCountingProxy(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  await proxy.stop();
  await new Promise((resolve) => upstream.close(resolve));
});

async function send(operation: string, input: unknown): Promise<number> {
  const response = await fetch(proxy.endpoint, {
    method: 'POST',
    headers: { 'x-amz-target': `DynamoDB_20120810.${operation}`, 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(input),
  });
  await response.text();
  return response.status;
}

test('DynamoDB units are counted per table: single items 1, transactional items 2, batch items 1, reads apart', async () => {
  await send('PutItem', { TableName: 'Idempotency', Item: {} });
  await send('UpdateItem', { TableName: 'Orders', Key: {} });
  await send('TransactWriteItems', {
    TransactItems: [
      { Put: { TableName: 'Effects', Item: {} } },
      { Update: { TableName: 'Effects', Key: {} } },
      { ConditionCheck: { TableName: 'Orders', Key: {} } },
    ],
  });
  await send('BatchWriteItem', { RequestItems: { ProviderLog: [{ PutRequest: {} }, { PutRequest: {} }] } });
  await send('Query', { TableName: 'Orders' });
  await send('BatchGetItem', { RequestItems: { Orders: { Keys: [{}, {}, {}] } } });

  expect(proxy.counts.byTable).toEqual({
    Idempotency: { writeUnits: 1, readUnits: 0 },
    Orders: { writeUnits: 1 + 2, readUnits: 1 + 3 },
    Effects: { writeUnits: 4, readUnits: 0 },
    ProviderLog: { writeUnits: 2, readUnits: 0 },
  });
  expect(proxy.counts.writeUnits).toBe(1 + 1 + 6 + 2);
  expect(proxy.counts.readUnits).toBe(4);
  expect(proxy.counts.byOperation).toEqual(
    expect.objectContaining({ PutItem: 1, TransactWriteItems: 1, BatchGetItem: 1, Query: 1 }),
  );
  // Forwarded as sent.
  expect(JSON.parse(forwarded[0])).toEqual({ TableName: 'Idempotency', Item: {} });
});
