import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import {
  addUnits,
  capacityUnitsByTarget,
  dynamoDbItemBytes,
  writeUnitsOf,
  type WireAttributeValue,
} from '@exactly-once/tools/bench/dynamodb-units';
import { SPAN_LOG_MESSAGE } from '@exactly-once/runtime/trace/spans';
import { MEASURED_CLEAN_PATH } from '../../tooling/shop/order-cost';
import { apiEvent, lambdaContext } from '../support/api-events';
import { testDynamoDbClient } from '../support/emulated-dynamodb';
import { PipelineFixture } from '../support/pipeline-fixture';

/**
 * What one order's clean path costs, measured through the shop's real handlers on DynamoDB Local:
 * - read units per table (fulfilment's read of an order's inbox-ledger item, FULFILMENT_LEGACY_LEDGER
 *   `read`), as DynamoDB Local bills them;
 * - write units per table and index: a single-item write as DynamoDB Local bills it
 *   (ReturnConsumedCapacity INDEXES counts the item's size and each index); a transaction from its
 *   items' sizes (the Put's item as sent, an updated item as it is after the step), two units per
 *   started KB and per index entry, because DynamoDB Local's transaction figure leaves out updated items;
 * - the bytes each function writes to stdout (what CloudWatch Logs ingests from it), with the log
 *   settings a deployed function has.
 * The figures docs/cost.md states (tooling/shop/order-cost.ts) are held here: a change that adds
 * a write, grows an item past a KB or adds log lines fails this file until the figures and the page
 * say so. `npx jest test/integration/order-cost-measured.test.ts` also writes what it measured to
 * bench-results/order-cost-measured.json.
 */
const fixture = new PipelineFixture();

beforeAll(
  () =>
    fixture.start({
      extraEnv: {
        BACKOFF_BASE_SECONDS: '0',
        BACKOFF_CAP_SECONDS: '0',
        // As FunctionWithDefaults deploys them: INFO lines, one-line JSON, metrics flushed as EMF.
        POWERTOOLS_LOG_LEVEL: 'INFO',
        POWERTOOLS_DEV: 'false',
        POWERTOOLS_METRICS_DISABLED: 'false',
        // Lambda sets it with active tracing; Powertools adds it to every line as `xray_trace_id`.
        _X_AMZN_TRACE_ID: 'Root=1-6755a3f0-4bf92f3577b34da6a3ce929d;Parent=53995c3f42cd8ad8;Sampled=1',
      },
    }),
  180_000,
);
afterAll(() => fixture.stop());

type Step = 'create' | 'relay' | 'fulfilment' | 'loyalty';
const CALL_LOG: Record<Step, string> = {
  create: 'createOrder',
  relay: 'relay',
  fulfilment: 'fulfilment',
  loyalty: 'loyalty',
};
/** The indexes of the stack's tables, by the attribute that puts an item in them (projection ALL). */
const INDEX_KEYS: Record<string, Record<string, string>> = { orders: { pendingOutbox: 'pendingShard' } };

type Units = Record<string, Record<string, number>>;

const labelOf = (name: string) =>
  Object.entries(fixture.tables.names)
    .find(([, n]) => n === name)?.[0]
    .toLowerCase() ?? name;

const wire = (value: Record<string, unknown>): Record<string, WireAttributeValue> =>
  Object.values(value).every((v) => typeof v === 'object' && v !== null && Object.keys(v).length === 1)
    ? (value as Record<string, WireAttributeValue>)
    : (marshall(value, { removeUndefinedValues: true }) as unknown as Record<string, WireAttributeValue>);

/** Write units of one transaction's items, from their sizes (see the file's comment). */
async function transactionUnits(input: { TransactItems?: Record<string, Record<string, unknown>>[] }): Promise<Units> {
  const units: Units = {};
  const client = testDynamoDbClient();
  try {
    for (const entry of input.TransactItems ?? []) {
      const [kind, op] = Object.entries(entry)[0];
      const table = String(op.TableName);
      const item =
        kind === 'Put'
          ? wire(op.Item as Record<string, unknown>)
          : ((
              await client.send(
                new GetItemCommand({
                  TableName: table,
                  Key: wire(op.Key as Record<string, unknown>) as never,
                  ConsistentRead: true,
                }),
              )
            ).Item as unknown as Record<string, WireAttributeValue> | undefined);
      if (item === undefined) continue;
      const units1 = writeUnitsOf(dynamoDbItemBytes(item), { transactional: true });
      addUnits(units, labelOf(table), 'table', units1);
      for (const [index, key] of Object.entries(INDEX_KEYS[labelOf(table)] ?? {}))
        if (item[key] !== undefined) addUnits(units, labelOf(table), index, units1);
    }
  } finally {
    client.destroy();
  }
  return units;
}

/** Runs `work` counting what it writes to stdout and the write units its function's calls cost. */
async function measured(
  step: Step,
  work: () => Promise<unknown>,
): Promise<{ bytes: number; spanBytes: number; lines: number; units: Units; readUnits: Units }> {
  const log = fixture.dynamoCalls[CALL_LOG[step]];
  log.consumed = [];
  let bytes = 0;
  let lines = 0;
  let spanBytes = 0;
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    bytes += Buffer.byteLength(text);
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
      lines += 1;
      if (line.includes(`"message":"${SPAN_LOG_MESSAGE}"`)) spanBytes += Buffer.byteLength(line) + 1;
    }
    return true;
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  const calls = log.consumed;
  log.consumed = undefined;
  const isRead = (command: string) => /^(GetItem|BatchGetItem|Query|Scan|TransactGetItems)Command$/.test(command);
  // Reads are billed apart (a read unit is 4 KB, consistent; about a fifth of a write unit's price).
  const readUnits: Units = capacityUnitsByTarget(
    calls.filter((c) => isRead(c.command)).map((c) => c.capacity),
    labelOf,
  );
  const units: Units = capacityUnitsByTarget(
    calls.filter((c) => c.command !== 'TransactWriteItemsCommand' && !isRead(c.command)).map((c) => c.capacity),
    labelOf,
  );
  for (const call of calls.filter((c) => c.command === 'TransactWriteItemsCommand'))
    for (const [table, targets] of Object.entries(await transactionUnits(call.input as never)))
      for (const [target, n] of Object.entries(targets)) addUnits(units, table, target, n);
  return { bytes, spanBytes, lines, units, readUnits };
}

let seq = 0;
async function oneOrder(lines: number) {
  seq += 1;
  const tag = `${Date.now()}-${seq}`;
  const order = {
    customerId: `cust-${tag}`,
    items: Array.from({ length: lines }, (_, i) => ({
      sku: `sku-${i}-${tag}`,
      quantity: 1 + (i % 3),
      unitPriceCents: 1_250,
    })),
  };
  let orderId = '';
  const create = await measured('create', async () => {
    const response = await fixture.createOrder(
      apiEvent({
        method: 'POST',
        path: '/orders',
        headers: { 'Idempotency-Key': `k-${tag}` },
        body: JSON.stringify(order),
      }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(201);
    orderId = JSON.parse(response.body).orderId as string;
  });
  const relay = await measured('relay', () => fixture.relayStream());
  const placed = await fixture.receive('fulfilment', 1, orderId);
  const fulfilment = await measured('fulfilment', () => fixture.deliver('fulfilment', placed));
  const credited = await fixture.receive('loyalty', 1, orderId);
  const loyalty = await measured('loyalty', () => fixture.deliver('loyalty', credited));
  return { create, relay, fulfilment, loyalty };
}

const results: Record<string, unknown> = {};
afterAll(() => {
  const file = path.join(__dirname, '..', '..', 'bench-results', 'order-cost-measured.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
});

test.each(Object.keys(MEASURED_CLEAN_PATH).map(Number))(
  'an order of %i lines: write units by step, table and index, and log bytes and lines by function, as docs/cost.md states them',
  async (lines) => {
    const order = await oneOrder(lines);

    const steps = ['create', 'relay', 'fulfilment', 'loyalty'] as const;
    const measuredNow = {
      writeUnits: Object.fromEntries(steps.map((s) => [s, order[s].units])),
      readUnits: Object.fromEntries(steps.map((s) => [s, order[s].readUnits])),
      logBytes: Object.fromEntries(steps.map((s) => [s, order[s].bytes])),
      logLines: Object.fromEntries(steps.map((s) => [s, order[s].lines])),
      spanLogBytes: Object.fromEntries(steps.map((s) => [s, order[s].spanBytes])),
    };
    results[`${lines} lines`] = measuredNow;
    const stated = MEASURED_CLEAN_PATH[lines];
    expect(measuredNow.writeUnits).toEqual(stated.writeUnits);
    expect(measuredNow.readUnits).toEqual(stated.readUnits);
    expect(measuredNow.logLines).toEqual(stated.logLines);
    // Ids and timestamps vary by a few bytes from run to run.
    for (const s of steps) {
      expect(Math.abs(measuredNow.logBytes[s] - stated.logBytes[s])).toBeLessThanOrEqual(40);
      expect(Math.abs(measuredNow.spanLogBytes[s] - stated.spanLogBytes[s])).toBeLessThanOrEqual(40);
    }
  },
  60_000,
);
