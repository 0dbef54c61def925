import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect, type EntityEffectDeps } from '@exactly-once/runtime/inbox/entity-effect';
import type { EntityEffectLedger } from '@exactly-once/runtime/inbox/ports';
import { testDynamoDbClient } from '../support/emulated-dynamodb';
import { useEmulatedEffects } from '../support/emulated-effects';
import { StockLedger, work } from '../support/sequenced-ledger-cases';
import { InboxLedger } from '@exactly-once/runtime/aws/inbox-ledger';
import { callProviderIfOwed } from '@exactly-once/runtime/provider/call-provider-if-owed';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { LedgerResult } from '@exactly-once/runtime/inbox/ports';

/**
 * What the generic effect writes per message, as DynamoDB Local counts it (ReturnConsumedCapacity TOTAL
 * on every request; `reported`), and as AWS bills it (`billed`: a transactional item doubled): the transactional inbox (claim Put + effect Update in one TransactWriteItems, 2
 * write units each, then the done-mark) against the sequenced ledger (one conditional UpdateItem, then
 * the done-mark). Small items (under 1 KB): 1 write unit a standard write, 2 a transactional one.
 */

let effectsTable: string;
useEmulatedEffects((db) => ({ effectsTable } = db));

/** What DynamoDB Local reported for one request: its command and the capacity units it consumed. */
interface Metered {
  command: string;
  units: number;
  /** A transaction's items (Put, Update, ConditionCheck), 0 for any other request. */
  transactItems: number;
}

/**
 * Write units as AWS bills them: a standard write as DynamoDB Local reports it (measured), a transaction 2
 * units per item of up to 1 KB, ConditionCheck included (modelled: every item here is under 1 KB). DynamoDB
 * Local's figure for a transaction is not what AWS bills: measured here, it reports 2 for a transaction of
 * 2 items and also for one of 3 (a ConditionCheck, or a third Update), where AWS bills 4 and 6.
 */
const billed = (requests: readonly Metered[]): number =>
  requests.reduce((sum, r) => sum + (r.transactItems > 0 ? 2 * r.transactItems : r.units), 0);

/** A document client that asks DynamoDB Local for the consumed capacity of every request and records it. */
function metered(): { documents: DynamoDBDocumentClient; raw: DynamoDBClient; requests: Metered[] } {
  const raw = testDynamoDbClient();
  const requests: Metered[] = [];
  raw.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const units = ([consumed].flat() as ({ CapacityUnits?: number } | undefined)[]).reduce(
        (sum, c) => sum + (c?.CapacityUnits ?? 0),
        0,
      );
      const items = (args.input as { TransactItems?: unknown[] }).TransactItems;
      requests.push({ command: context.commandName ?? 'unknown', units, transactItems: items?.length ?? 0 });
      return result;
    },
    { step: 'initialize', name: 'meterWriteUnits' },
  );
  return { documents: DynamoDBDocumentClient.from(raw), raw, requests };
}

const MESSAGES = 10;

/** Write units per message of `MESSAGES` events, each of its own entity, applied once and its call made. */
async function writeUnitsPerMessage(
  makeLedger: (documents: DynamoDBDocumentClient, consumer: string) => EntityEffectLedger,
  tenant?: string,
): Promise<{ reported: number; billed: number }> {
  const { documents, raw, requests } = metered();
  const consumer = `wu-${Math.random().toString(36).slice(2, 8)}`;
  const deps: EntityEffectDeps = {
    consumer,
    eventTypes: ['ThingHappened'],
    ledger: makeLedger(documents, consumer),
    provider: { send: async () => undefined },
  };
  for (let i = 0; i < MESSAGES; i++) {
    const event: EventEnvelope = {
      eventId: `evt-${i}`,
      type: 'ThingHappened',
      entityId: `entity-${i}`,
      version: 1,
      occurredAt: new Date(Date.now() - 60_000).toISOString(),
      payload: {},
      ...(tenant === undefined ? {} : { tenant }),
    };
    await applyEntityEffect(event, deps, work());
  }
  documents.destroy();
  raw.destroy();
  const reported = requests.reduce((sum, r) => sum + r.units, 0);
  return { reported: reported / MESSAGES, billed: billed(requests) / MESSAGES };
}

const transactional = (documents: DynamoDBDocumentClient, consumer: string) =>
  new DynamoDbEntityEffectLedger(documents, { consumer, tableName: effectsTable, inboxTtlSeconds: 3600 });
const sequenced = (documents: DynamoDBDocumentClient, consumer: string) =>
  new DynamoDbSequencedEntityEffectLedger(documents, { consumer, tableName: effectsTable });

test('the generic effect costs 2 write units a message on the sequenced ledger, 5 on the transactional inbox', async () => {
  const perMessage = [await writeUnitsPerMessage(transactional), await writeUnitsPerMessage(sequenced)];

  expect(perMessage).toEqual([
    { reported: 3, billed: 5 },
    { reported: 2, billed: 2 },
  ]);
});

test('with a verified tenant: 2 on the sequenced ledger, 7 on the transactional inbox (its ConditionCheck on the tenantless key shape)', async () => {
  const tenant = 'arn:aws:iam::111111111111:role/shop';

  const perMessage = [await writeUnitsPerMessage(transactional, tenant), await writeUnitsPerMessage(sequenced, tenant)];

  expect(perMessage).toEqual([
    { reported: 3, billed: 7 },
    { reported: 2, billed: 2 },
  ]);
});

/** The same effect as StockLedger's place on the transactional inbox: the claim, the entity's state, the stock. */
class InboxStockLedger extends InboxLedger {
  place(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    return this.transact(
      event,
      [
        {
          Update: {
            TableName: this.options.tableName,
            Key: { pk: `ORDER#${this.consumer}#${event.entityId}`, sk: 'EFFECT' },
            UpdateExpression: 'SET #state = :state',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':state': 'RESERVED' },
          },
        },
        {
          Update: {
            TableName: this.options.tableName,
            Key: { pk: `STOCK#${this.consumer}`, sk: 'STOCK' },
            UpdateExpression: 'ADD reserved :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
      ],
      work,
    );
  }
}

test('an effect on its entity and one more item (a place reserving one SKU): 5 write units a message on the sequenced ledger, 7 on the transactional inbox', async () => {
  const perMessage = async (
    ledgerOf: (documents: DynamoDBDocumentClient, consumer: string) => InboxStockLedger | StockLedger,
  ) => {
    const { documents, raw, requests } = metered();
    const consumer = `wu-${Math.random().toString(36).slice(2, 8)}`;
    const ledger = ledgerOf(documents, consumer);
    for (let i = 0; i < MESSAGES; i++) {
      const event: EventEnvelope = {
        eventId: `place-${i}`,
        type: 'ThingHappened',
        entityId: `order-${i}`,
        version: 1,
        occurredAt: new Date(Date.now() - 60_000).toISOString(),
        payload: {},
      };
      const w = work();
      await callProviderIfOwed(await ledger.place(event, w), event, ledger, async () => undefined, w);
    }
    documents.destroy();
    raw.destroy();
    return { reported: requests.reduce((sum, r) => sum + r.units, 0) / MESSAGES, billed: billed(requests) / MESSAGES };
  };

  const figures = [
    await perMessage(
      (documents, consumer) =>
        new InboxStockLedger(documents, { consumer, tableName: effectsTable, inboxTtlSeconds: 3600 }),
    ),
    await perMessage((documents, consumer) => new StockLedger(documents, { consumer, tableName: effectsTable })),
  ];

  expect(figures).toEqual([
    { reported: 3, billed: 7 },
    { reported: 3, billed: 5 },
  ]);
});
